"""Whether a consolidate step may read its file and write where its change goes.

A note or a folder memsync may not read or write (its mode, another user's files, a mount made
read-only) leaves its step out, with what to do, as a note that is no longer a card does
(memsync.lifecycle.plan); it never fails the whole plan with a traceback, or a run halfway.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from memsync.errors import PathOutsideVault, Rejected
from memsync.write import vaultio


def read(vault: Path, rel: str, folders: dict[str, str] | None = None) -> bytes | None:
    """The file's bytes (None: no regular file there); Rejected when it may not be read, or is a
    link out of the vault now (made since the index read it). `folders`: the resolved folders
    of the calls before (vaultio.inside)."""
    try:
        return vaultio.read_bytes(vaultio.inside(vault, rel, folders))
    except PathOutsideVault as exc:
        raise Rejected(str(exc)) from None
    except PermissionError:
        raise Rejected(f"{rel} cannot be read (permission denied); make it readable (chmod u+r), "
                       "then consolidate again") from None


def _nearest_folder(vault: Path, rel_dir: str) -> str:
    """`rel_dir`, or the nearest folder above it that is there (a move makes the rest)."""
    while rel_dir and not os.path.isdir(vaultio.inside(vault, rel_dir)):
        rel_dir = posixpath.dirname(rel_dir)
    return rel_dir


def unwritable(vault: Path, rel: str, to: str | None = None, known: dict[str, bool] | None = None) -> str | None:
    """Why the file at `rel` cannot be changed (or moved to `to`), or None. A file is changed by
    a new file in its folder renamed over it (memsync.write.atomic), and moved by a new file at
    `to` and the removal of `rel`: each of those folders must let us add and remove names.
    `known` keeps each folder's answer across the steps of one plan."""
    known = {} if known is None else known
    if (not to or to == rel) and vaultio.read_only(vaultio.inside(vault, rel)) is not None:
        return (f"{rel} is read-only, so it is not changed; make it writable (chmod u+w), then "
                "consolidate again")
    folders = [posixpath.dirname(rel)]
    if to and to != rel:
        folders.append(_nearest_folder(vault, posixpath.dirname(to)))
    for folder in folders:
        if folder not in known:
            known[folder] = os.access(vaultio.inside(vault, folder) if folder else vault, os.W_OK | os.X_OK)
        if not known[folder]:
            shown = f"{folder}/" if folder else "the vault's top folder"
            what = f"moved to {to}" if to and to != rel else "changed"
            return (f"{shown} cannot be written (permission denied), so {rel} cannot be {what}; "
                    "make it writable (chmod u+w), then consolidate again")
    return None
