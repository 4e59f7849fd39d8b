"""One reindex of an index at a time, in this process and across processes.

A reindex surveys the tree, then reads and writes what changed. Two at once (a `memsync index`
beside an MCP server's memory_reindex, or two tool calls of one server) each surveyed before
the other had written, so both read and wrote every changed file. Taking turns, a later one
finds what the earlier one wrote, and has nothing left to do.

The turn is an flock on `<index>.reindex.lock` beside the index (0600, like it; the file is a
memsync.lockfile), held from before the survey to after the last write. The kernel drops an
flock when its holder dies, however it dies, so a killed reindex never leaves the next one
waiting; the file itself stays (removing it would let a newcomer lock a fresh file while a
waiter holds the old one). It holds the pid of the last holder, for a waiter to name. Reader
processes forked by a reindex share its lock and end within a second of it
(memsync.reading.watch_parent).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from memsync import lockfile

SUFFIX = ".reindex.lock"
# The threads of one process (an MCP server runs tool calls on threads) take turns here first:
# they would exclude each other by flock too, each opening the file itself, but this also holds
# where there is no flock, and where the lock file cannot be made.
_THREADS = threading.Lock()


def path_of(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


@contextlib.contextmanager
def turn(db: Path, waiting: Callable[[int | None], None] | None = None) -> Iterator[None]:
    """Hold the reindex turn of the index at `db` (blocking). `waiting` is called once, before
    waiting, when another process holds it, with that process's pid where it is known."""
    with _THREADS:
        fd = _open(path_of(db)) if lockfile.FLOCK else None
        try:
            if fd is not None:
                _take(fd, waiting)
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing drops the flock


def _open(path: Path) -> int | None:
    """The lock file, made if need be; None where it cannot be (a folder not writable): the
    reindex goes on alone, and opening the index says what is wrong if anything is."""
    try:
        return lockfile.opened(path)
    except OSError:
        return None


def _take(fd: int, waiting: Callable[[int | None], None] | None) -> None:
    if not lockfile.try_hold(fd):
        if waiting is not None:
            waiting(holder(fd))
        lockfile.hold(fd)
    with contextlib.suppress(OSError):  # a full disk costs the pid only, never the reindex
        lockfile.record(fd, f"{os.getpid()}\n")


def holder(fd: int) -> int | None:
    """The pid the lock file names: its holder's while one holds it."""
    try:
        text = lockfile.recorded(fd, 32).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None
