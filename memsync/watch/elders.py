"""Watchers of a memsync from before the lock beside the index, found through /proc (Linux).

Such a watcher takes only its home's lock (`<home>/watch.lock`): a watcher of another home whose
config names the same index file sees neither that lock nor one beside the index, and would
write the index beside it (an upgrade that left the old watcher running, say). The kernel lists
every flock (/proc/locks) and each process's open files (/proc/<pid>/fd): another process that
holds a flock on a file named watch.lock and none on a lock beside an index, and has this index
open, is such a watcher. Best effort: elsewhere than Linux, or for another user's processes,
nothing is found.
"""

from __future__ import annotations

import os
from pathlib import Path

from .lock import INDEX_LOCK_TAIL

HOME_LOCK = "watch.lock"  # memsync.config.Config.lock_file's name, in every version


def older_watchers(index: Path) -> list[tuple[int, str]]:
    """(pid, home) of each process of an older memsync that watches `index` (above)."""
    try:
        table = Path("/proc/locks").read_text()
    except OSError:
        return []
    flocks: dict[int, set[int]] = {}  # pid -> the inodes it holds a write flock on
    for line in table.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1837 0 EOF"; a waiter's line has "->" second
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[4].isdigit():
            flocks.setdefault(int(fields[4]), set()).add(int(fields[5].rsplit(":", 1)[-1]))
    flocks.pop(os.getpid(), None)
    target = os.path.realpath(index)
    found = []
    for pid, inodes in sorted(flocks.items()):
        files = _open_files(pid)
        if target not in files:
            continue
        # A lock file is opened under a name of its own, linked into place and then removed:
        # the link of the descriptor may name that one, "(deleted)".
        locked = [link.removesuffix(" (deleted)") for link, inode in files.items() if inode in inodes]
        if any(INDEX_LOCK_TAIL in os.path.basename(path) for path in locked):
            continue  # it takes the lock beside its index: a memsync this new or newer
        homes = [folder for folder in sorted({os.path.dirname(path) for path in locked})
                 if _inode(os.path.join(folder, HOME_LOCK)) in inodes]
        if homes:
            found.append((pid, homes[0]))
    return found


def refusal(index: Path, pid: int, home: str) -> str:
    return (f"a watcher of an older memsync (pid {pid}, home {home}) has the index {index} open, "
            f"and two watchers would both write it; stop that one first (kill {pid}), then "
            "start this one (a memsync this new or newer stays out of another's way by itself)")


def _open_files(pid: int) -> dict[str, int | None]:
    """What the descriptors of process `pid` name -> the inode each has open."""
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError:  # gone, or another user's
        return {}
    files: dict[str, int | None] = {}
    for name in names:
        try:
            files[os.readlink(os.path.join(folder, name))] = _inode(os.path.join(folder, name))
        except OSError:
            continue
    return files


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None
