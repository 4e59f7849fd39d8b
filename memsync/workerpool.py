"""Worker processes whose results come back through files: the pool that memsync.readers runs a
big job's readers on, and that a big reconcile's survey (memsync.survey) and the embedding
engines (memsync.semantic.pool) share.

A worker pickles what its job gives into a new file of the pool's own folder and sends back only
the file's name, which one write puts in the pipe whole: a worker killed while it sends a result
then cannot leave the pool's manager thread waiting for ever on the half it got (see
readers._Flight for the ways the standard library's pool can hang). Nothing waits on a worker
for more than CHECK_S without asking whether the pool still takes work.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import active_children, current_process, get_all_start_methods, get_context
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from . import processes

T = TypeVar("T")

# How long the writer waits on a worker before it asks whether the pool still works. A pool can
# break and leave futures that never complete (readers._Flight), so no wait is unbounded; a pool
# that works is asked only when one job (a reader's chunk) takes this long.
CHECK_S = 0.5
# Where workers hand their results over (a reader's looks): memory-backed where the system has such a folder; in a
# folder of its own for each pool, named after the writer's process (_sweep).
HANDOVER_ROOT = "/dev/shm"
HANDOVER_PREFIX = "memsync-looks-"
# What a worker names itself by in its pool's folder (_started): the pool finds it again there.
WORKER_PREFIX = "worker-"


def start_method() -> str:
    """How worker processes start. fork is the cheapest and safe while this process runs one
    thread (Linux); with threads running (a watcher, an MCP server) a forked child could inherit
    a lock held by another thread, so a fork server does the forking. On macOS system libraries
    are not fork-safe at all, so spawn, which starts each worker afresh (the caller's main script
    is imported as __mp_main__, so it must guard its own work with `if __name__ == "__main__"`,
    as memsync's entry points do)."""
    methods = get_all_start_methods()
    if sys.platform == "darwin" or "fork" not in methods:
        return "spawn"
    if threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def results(pool: Pool, jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Each job's result, in order, run by the pool's workers. Raises what a job raised, or
    BrokenProcessPool once the pool stops taking work (a worker killed). Waits CHECK_S at a
    time, as readers._Flight does, for the same reasons."""
    return collected(pool, [pool.submit(job) for job in jobs])


def collected(pool: Pool, futures: Sequence[Future]) -> list:
    """The results of jobs submitted to `pool` earlier, in order, waited for as results() does."""
    pending: set[Future] = set(futures)
    while pending:
        done, pending = wait(pending, timeout=CHECK_S, return_when=FIRST_EXCEPTION)
        for future in done:
            failure = future.exception()
            if failure is not None:
                raise failure
        if pending and not pool.takes_work():
            raise BrokenProcessPool("a worker process ended before its work was done")
    return [received(future.result()) for future in futures]


def every_result(pool: Pool, jobs: Sequence[Callable[[], T]]) -> list[T] | None:
    """results(pool, jobs), or None once a job fails, the pool breaks or a hand-over is lost
    (its folder full, say): the caller then does the work itself."""
    try:
        return results(pool, jobs)
    except Exception:  # noqa: BLE001 - whatever went wrong, the caller's own run gives the answer
        return None


def _started(folder: str, initializer: Callable[..., None] | None, initargs: tuple) -> None:
    """In each worker, first: an empty file in the pool's folder named after the worker (its pid
    and its process name, unique among the writer's children), so that Pool.close finds it among
    them; then the pool's own initializer. A name that cannot be left (a full folder) only keeps
    close from finding that worker: the worker still starts."""
    with contextlib.suppress(OSError):
        name = f"{WORKER_PREFIX}{os.getpid()}-{current_process().name}"
        os.close(os.open(os.path.join(folder, name), os.O_CREAT | os.O_WRONLY, 0o600))
    if initializer is not None:
        initializer(*initargs)


def _nothing() -> None:
    """The work that asks a pool whether it still takes work (Pool.takes_work)."""


def _hand_over(folder: str, job: Callable[..., object], *args: object) -> str:
    """In a worker: what job(*args) gives, pickled into a new file in `folder`; the file's name
    is all that goes back through the pool's pipe (readers._Flight)."""
    data = memoryview(pickle.dumps(job(*args), protocol=pickle.HIGHEST_PROTOCOL))
    handle, path = tempfile.mkstemp(dir=folder)
    try:
        while data:
            data = data[os.write(handle, data):]
    except BaseException:  # the folder full, say: no half file is left (the writer reads the chunk)
        os.unlink(path)
        raise
    finally:
        os.close(handle)
    return path


def received(path: str) -> Any:
    """What a worker handed over in `path` (the packed looks of a chunk, say), which goes. Read
    whole, then unpickled (and written whole, _hand_over): streamed through pickle.load and
    pickle.dump in frames, a rebuild of 100,000 cards took 22.8 against 21.5 s by the pipe;
    whole, 21.5 against 21.5 s (medians of 5 alternating rounds each)."""
    with open(path, "rb", buffering=0) as handle:
        data = handle.readall()
    os.unlink(path)
    return pickle.loads(data)


class Pool:
    """Worker processes whose results come back through files (_hand_over) in a folder of the
    pool's own, which goes with it."""

    def __init__(self, workers: int, initializer: Callable[..., None] | None = None,
                 method: str | None = None, initargs: tuple = ()):
        self.folder = _handover_folder()  # first: each worker names itself there as it starts
        try:
            self.executor = ProcessPoolExecutor(
                workers, mp_context=get_context(method or start_method()),
                initializer=_started, initargs=(self.folder, initializer, initargs))
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def submit(self, job: Callable[..., object], *args: object) -> Future[str]:
        """job(*args) in a worker; the future gives the name of the file that holds its result
        (received). Raises BrokenProcessPool or RuntimeError when the pool takes no more work."""
        return self.executor.submit(_hand_over, self.folder, job, *args)

    def takes_work(self) -> bool:
        """Whether the pool still takes work: one that broke refuses it."""
        try:
            self.executor.submit(_nothing)
        except (BrokenProcessPool, RuntimeError):
            return False
        return True

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
        # A pool whose manager thread failed (readers._Flight) leaves its other workers waiting for work
        # for ever, and the interpreter joins them at exit: end them.
        for process in self.running_workers():
            process.terminate()
            process.join()
        shutil.rmtree(self.folder, ignore_errors=True)  # what workers wrote and no one took

    def running_workers(self) -> list[BaseProcess]:
        """The pool's workers still running: the children of this process that named themselves
        in the pool's folder (_started). The executor keeps no public record of its processes."""
        try:
            named = {entry for entry in os.listdir(self.folder) if entry.startswith(WORKER_PREFIX)}
        except OSError:
            return []
        return [child for child in active_children() if f"{WORKER_PREFIX}{child.pid}-{child.name}" in named]


def _handover_folder() -> str:
    """A new folder for a pool's hand-overs, private to this user (0700), as the index is: the
    looks hold the notes' text. In HANDOVER_ROOT where this user may write there, else in the
    system's temporary folder; those a killed writer left there go first (_sweep)."""
    root = handover_root()
    _sweep(root)
    return tempfile.mkdtemp(prefix=f"{HANDOVER_PREFIX}{os.getpid()}-", dir=root)


def handover_root() -> str:
    """Where pools make their hand-over folders on this machine, for this user."""
    return HANDOVER_ROOT if os.access(HANDOVER_ROOT, os.W_OK | os.X_OK) else tempfile.gettempdir()


def _sweep(root: str) -> None:
    """Remove the hand-over folders of writers that are gone: one killed mid-load never removed
    its own, and in a memory-backed folder its files would hold memory until the machine
    restarts."""
    for entry in os.scandir(root):
        pid = entry.name[len(HANDOVER_PREFIX):].split("-", 1)[0]
        if entry.name.startswith(HANDOVER_PREFIX) and pid.isdigit() and not processes.running(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)
