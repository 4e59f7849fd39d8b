"""The names cards had before the trash numbered them.

A card deleted while the trash already holds one of its name goes in as `<name>-2.md` (`-3`,
...): the folders keep where it came from, but not what it was called. The trash's own record,
`.trash/.memsync-names.json`, maps each such copy to its name in the vault, so a restore puts it
back under that name. It lives in the vault, beside the copies, and goes wherever they go (git,
sync, another machine). Read and written under the home's write lock (journal.writing), like
every move into or out of the trash. A lost record costs only the name: the copy is then
restored under the name it has in the trash, as without one.

A copy can leave the trash without memsync (emptied by hand, by Obsidian, by a sync tool): its
entry is dropped the next time the record is written, so the record holds only copies still
there and never hands a stale name to another file that later lands at the same trash path.
Until that write, `memsync doctor` reports such entries (`stale`) and `--fix` drops them (`prune`).
"""

from __future__ import annotations

import json
import os
import posixpath
from contextlib import suppress
from pathlib import Path

from memsync.model import TRASH
from memsync.write import atomic

RECORD = ".memsync-names.json"
RECORD_REL = f"{TRASH}/{RECORD}"


def _path(vault: Path) -> Path:
    return vault / TRASH / RECORD


def _read(vault: Path) -> dict[str, str]:
    try:
        data = json.loads(_path(vault).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or damaged: the copies keep their trash names
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _write(vault: Path, names: dict[str, str]) -> None:
    if not names:
        with suppress(FileNotFoundError):
            _path(vault).unlink()
        return
    data = json.dumps(dict(sorted(names.items())), ensure_ascii=False, indent=1).encode("utf-8")
    with atomic.Staged(_path(vault).parent, data) as staged:
        staged.replace(_path(vault))


def gone(path: Path) -> bool:
    """Whether nothing is at `path`, as far as memsync can tell. A folder memsync may not look
    into (its mode, another user's) says nothing either way, and what is in it counts as there:
    taken for gone, every entry (or id) of the copies it hides would be dropped while they are
    still in the trash."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def _update(vault: Path, names: dict[str, str], wanted: dict[str, str]) -> None:
    """Write `wanted` less the entries of copies no longer in the trash, when that differs from
    the record as read (`names`)."""
    kept = {rel: name for rel, name in wanted.items() if not gone(vault / rel)}
    if kept != names:
        _write(vault, kept)


def remember(vault: Path, trash_rel: str, original: str) -> None:
    """`trash_rel` holds the card that was at `original` (only recorded when the names differ
    by more than the trash folder; a stale entry for the name is dropped either way)."""
    names = _read(vault)
    wanted = dict(names)
    if trash_rel[len(TRASH) + 1:] == original:
        wanted.pop(trash_rel, None)
    else:
        wanted[trash_rel] = original
    _update(vault, names, wanted)


def original(vault: Path, trash_rel: str) -> str | None:
    """The vault name the copy at `trash_rel` had, when the trash numbered it."""
    name = _read(vault).get(trash_rel)
    if not name or name.startswith("/") or "\0" in name:
        return None  # a record edited by hand to point anywhere is not followed
    name = posixpath.normpath(name)
    if any(part.startswith(".") for part in name.split("/")):
        return None  # `..`, `.`, the trash itself, a dot-folder: never where a card was
    return name


def stale(vault: Path) -> list[str]:
    """The trash paths the record names whose copy has left the trash without memsync."""
    return sorted(rel for rel in _read(vault) if gone(vault / rel))


def prune(vault: Path) -> list[str]:
    """Drop the entries `stale` names (under the home's write lock); returns them."""
    gone = stale(vault)
    if gone:
        forget(vault, gone)
    return gone


def forget(vault: Path, trash_rels: list[str]) -> None:
    """The copies left the trash (restored or purged)."""
    names = _read(vault)
    _update(vault, names, {k: v for k, v in names.items() if k not in trash_rels})
