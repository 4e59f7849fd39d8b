"""A lock file: a file held with flock that records who holds it.

Two kinds lie beside an index. The reindex turn (memsync.reindexlock, `<index>.reindex.lock`) is
waited for, and records its holder's pid; the watcher's lock (memsync.watch.lock,
`<index>.watch-lock`, and `<home>/watch.lock`) refuses a second watcher, and records JSON. Each
keeps its own meaning, record and way of making the file; this is the part they share.

The kernel drops an flock when its holder dies, however it dies, so a lock that can be taken is
free whatever its record says (pids get reused): the record only names a live holder. Lock files
are private (0600), like the index they guard.
"""

from __future__ import annotations

import os
from pathlib import Path

from memsync import private

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

# Where there is no flock, a reindex turn still orders one process's threads (and a watcher
# cannot run: memsync.watch.lock needs it).
FLOCK = fcntl is not None


def opened(path: Path, new: bool = False) -> int:
    """A descriptor of the lock file at `path`, its folder made if need be: for reading and
    writing, the file made if missing; or, when `new`, made now or not at all (FileExistsError),
    for writing."""
    private.mkdir(path.parent)
    flags = os.O_CREAT | (os.O_EXCL | os.O_WRONLY if new else os.O_RDWR)
    return os.open(path, flags, private.FILE_MODE)


def try_hold(fd: int) -> bool:
    """Hold the file's flock, exclusively, unless another open file holds it: then False, at once."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def hold(fd: int) -> None:
    """Hold the file's flock, exclusively, waiting for as long as another holds it."""
    fcntl.flock(fd, fcntl.LOCK_EX)


def record(fd: int, text: str) -> None:
    """Make the file say `text` and nothing else: who holds it."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode(), 0)


def recorded(fd: int, most: int) -> bytes:
    """Up to `most` bytes of the file's record (raises OSError where it cannot be read)."""
    return os.pread(fd, most, 0)
