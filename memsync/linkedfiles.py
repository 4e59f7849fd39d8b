"""Symbolic links to files, in the sources whose adapters read through them (`follows_links`).

An instruction file is often a link: `CLAUDE.md -> AGENTS.md` beside it, or a `CLAUDE.md` that
links into a dotfiles folder. In such a source a link to a regular file is read as that file, and
its signature is the target's (a change to the target is a change to the card). A link that
dangles, loops or leads to anything but a regular file gives no card; nor does one whose target
the same source reads under its own name (the link to AGENTS.md beside it), which would be a
second card of the same text. Links to folders are never followed, and the vault follows no
link at all (its files are written in place).
"""

from __future__ import annotations

import os
import stat

from memsync.adapters import reached


def target_stat(adapter, full: str, rel: str) -> os.stat_result | None:
    """The stat of the file the link at `full` (relative path `rel`) is read as, or None when it
    gives no card: the adapter reads no link, or the target is no regular file, or the source
    reads the target by its own name."""
    if not getattr(adapter, "follows_links", False):
        return None
    try:
        st = os.stat(full)
        if not stat.S_ISREG(st.st_mode):
            return None
        root = full[: len(full) - len(rel)].rstrip("/") or "/"
        if any(_read_anyway(adapter, top, path) for path in _hops(full)
               for top in {root, os.path.realpath(root)}):
            return None
    except (OSError, ValueError):  # dangling, a loop (ELOOP), a name the system refuses
        return None
    return st


def _hops(full: str) -> list[str]:
    """Each path the link at `full` leads through, to the file at the end: CLAUDE.md -> AGENTS.md
    -> ~/dotfiles/AGENTS.md is AGENTS.md beside it (read anyway) as much as the file at the end."""
    hops: list[str] = []
    path = full
    while os.path.islink(path) and len(hops) < 40:  # the kernel's own bound on a chain (ELOOP)
        path = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
        hops.append(path)
    return [*hops, os.path.realpath(full)]


def _read_anyway(adapter, root: str, path: str) -> bool:
    """Whether `path` lies in the source at `root` where its adapter reads it by that name."""
    inside = os.path.relpath(path, root)
    if inside == ".." or inside.startswith("../"):
        return False
    return adapter.wants(inside) and reached(adapter, inside)
