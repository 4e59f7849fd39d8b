"""Running a watcher's catch-up in a process of its own, where processes fork (Linux).

A load of a big vault makes and frees far more than a watcher needs afterwards: SQLite's bulk
page cache, FTS5's hash, the Python objects of every file surveyed and read. Freed is not given
back: Python keeps each of its 1 MiB arenas while one object in it lives, and a few outlive the
load in most of them. A watcher that indexed 100,000 notes at its start held 97 MB of private
memory for the rest of its life (79 arenas holding 7 MB of objects), against 41 MB for one that
started on an indexed vault. In a child, all of it goes when the child ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class Ended:
    pid: int | None
    exitcode: int | None
    peak_mb: float  # the largest resident size of the child or of a process it waited for


def forks() -> bool:
    """Whether work can run in a forked child: Linux, one thread (a forked child gets only the
    thread that forked, and any lock another one held stays held in it)."""
    import threading

    return sys.platform.startswith("linux") and threading.active_count() == 1


def run_apart(work: Callable[[], None]) -> Ended:
    """Run `work` in a forked child and wait for it to end."""
    child = multiprocessing.get_context("fork").Process(target=_child, args=(work, os.getpid()),
                                                        name="memsync-catch-up")
    child.start()
    child.join()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    return Ended(child.pid, child.exitcode, peak)


def _child(work: Callable[[], None], parent: int) -> None:
    # Killed with its parent: a child left writing after its watcher is gone (kill -9) would
    # hold the index's write lock until its load ended. Not a thread watching the parent, as
    # reader workers have (memsync.reading.watch_parent): with a second thread, the indexer
    # would start its readers through a fork server instead of forking them.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # gone before the call above could take effect
        return
    work()
