"""Reader processes: the files of a big job looked at (memsync.reading) in worker processes
while this process writes the index, and handed back in the order they were asked for, so ids
and rows come out as a serial run gives them. memsync.sync decides when a job is big enough
and how it is cut into chunks; this module runs the pool.

A reader that falls behind does not hold the writer up: the writer reads later chunks itself
meanwhile (_Flight.next). A reader that dies (killed, out of memory) breaks the pool: its chunk
and every later one are read here instead.

The pool itself (Pool, results, every_result) also serves a big reconcile's survey
(memsync.survey) and the embedding engines (memsync.semantic.pool).
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import shutil
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import active_children, current_process, get_all_start_methods, get_context
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from . import processes, reading
from .model.indexing import SyncReport
from .readerbudget import reserved
from .reading import Look

Chunk = list[tuple]  # (relative path, stored state) pairs, read as one unit
T = TypeVar("T")


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


def in_order(chunks: Iterable[Chunk], job: Callable[[Chunk], list[tuple]],
             read_here: Callable[[Chunk], list[Look]], processes: int, ahead: int,
             report: SyncReport) -> Iterator[list[Look]]:
    """The looks of each chunk, in order, read by up to `processes` reader processes (as many as
    the budget of this process has free) and by this one whenever they fall behind. `job`
    (picklable: reading.look_batch with its arguments bound) reads a chunk in a reader and gives
    its looks packed; `read_here` reads one in this process. At most `ahead` chunks are in
    flight, so memory stays bounded. Without processes to be had, every chunk is read here."""
    with reserved(processes) as granted:
        pool: Pool | None = None
        if granted:
            try:
                pool = Pool(granted, reading.worker_start)
            except (OSError, ValueError):  # no processes to be had: read here
                pool = None
        if pool is not None:
            report.readers = max(report.readers, granted + 1)  # this process reads too
        flight = _Flight(pool, job, read_here)
        try:
            for chunk in chunks:
                flight.submit(chunk)
                if len(flight) >= ahead:
                    yield flight.next()
            while len(flight):
                yield flight.next()
        finally:
            flight.close()


def results(pool: Pool, jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Each job's result, in order, run by the pool's workers. Raises what a job raised, or
    BrokenProcessPool once the pool stops taking work (a worker killed). Waits CHECK_S at a
    time, as _Flight does, for the same reasons."""
    futures = [pool.submit(job) for job in jobs]
    pending: set[Future] = set(futures)
    while pending:
        done, pending = wait(pending, timeout=CHECK_S, return_when=FIRST_EXCEPTION)
        for future in done:
            failure = future.exception()
            if failure is not None:
                raise failure
        if pending and not pool.takes_work():
            raise BrokenProcessPool("a worker process ended before its work was done")
    return [_taken(future.result()) for future in futures]


def every_result(pool: Pool, jobs: Sequence[Callable[[], T]]) -> list[T] | None:
    """results(pool, jobs), or None once a job fails, the pool breaks or a hand-over is lost
    (its folder full, say): the caller then does the work itself."""
    try:
        return results(pool, jobs)
    except Exception:  # noqa: BLE001 - whatever went wrong, the caller's own run gives the answer
        return None


# How long the writer waits on the reader of a chunk before it asks whether the pool still
# works. A pool can break and leave futures that never complete (_Flight), so no wait is
# unbounded; a pool that works is asked only when one chunk takes this long.
CHECK_S = 0.5
# Where readers hand their looks over: memory-backed where the system has such a folder; in a
# folder of its own for each pool, named after the writer's process (_sweep).
HANDOVER_ROOT = "/dev/shm"
HANDOVER_PREFIX = "memsync-looks-"
# What a worker names itself by in its pool's folder (_started): the pool finds it again there.
WORKER_PREFIX = "worker-"


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
    """The work that asks a pool whether it still takes work (_Flight.takes_work)."""


def _hand_over(folder: str, job: Callable[..., object], *args: object) -> str:
    """In a worker: what job(*args) gives, pickled into a new file in `folder`; the file's name
    is all that goes back through the pool's pipe (_Flight)."""
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


def _claimed(folder: str, key: int, taken: bool = False) -> bool:
    """Whether this process claims chunk `key` first, by making its claim file in `folder`: a
    reader before it reads the chunk, the writer before it reads one itself (_Flight._claim).
    With `taken`, a claim file that cannot be made (other than for being there) counts as made."""
    try:
        os.close(os.open(os.path.join(folder, f"claim-{key}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    except OSError:
        return taken
    return True


def _read_claimed(folder: str, key: int, job: Callable[[Chunk], list[tuple]],
                  chunk: Chunk) -> list[tuple] | None:
    """In a reader: job(chunk), unless the writer claimed the chunk first (None)."""
    return job(chunk) if _claimed(folder, key, taken=True) else None


def _load(loaded: Future[list[tuple]], future: Future) -> None:
    """Once a reader is done with a chunk: its packed looks (or its failure) into `loaded`."""
    if future.cancelled():
        loaded.cancel()
        return
    try:
        loaded.set_result(_taken(future.result()))
    except BaseException as exc:  # noqa: BLE001 - the reader's failure, or the file's: the writer raises it
        loaded.set_exception(exc)


def _taken(path: str) -> Any:
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
        (_taken). Raises BrokenProcessPool or RuntimeError when the pool takes no more work."""
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
        # A pool whose manager thread failed (_Flight) leaves its other workers waiting for work
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


class _Flight:
    """The chunks handed to a pool, oldest first, and whether the pool still works.

    A pool broken by a reader that died (killed, out of memory) should fail every future it
    holds, but the standard library's ProcessPoolExecutor (seen on Python 3.11) can leave some
    for ever pending, in three ways:
    - a reader killed while it sends a result: the pool's manager thread reads the half it got
      and waits for the rest for ever, noticing nothing. So a reader sends only a file's name,
      which one write puts in the pipe whole (_hand_over), and the looks go in the file;
    - a chunk submitted while the pool marks itself broken is never failed nor run;
    - a future cancelled but not yet dropped by the pool makes its manager thread fail (with a
      traceback on stderr) as it marks the others, which are then never failed either. So the
      writer never cancels one: it takes a chunk from the readers by claiming it first (_claim).
    So besides the file, a chunk is waited for CHECK_S at a time, and between waits it is read
    here once no reader has claimed it or the pool refuses work. A rebuild of 10,000 cards with
    one of its two readers killed at a random moment hung in 3 runs of 6 with neither guard, in
    6 of 70 with the waits alone (each time in the first way), and in none of 80 with both;
    with chunks cancelled, 1 run in 40 still printed the manager thread's traceback, and none
    in 100 since they are claimed."""

    def __init__(self, pool: Pool | None, job: Callable[[Chunk], list[tuple]],
                 read_here: Callable[[Chunk], list[Look]]):
        # readers: the pool, to close at the end; pool: the same, until it takes no more work or
        # a reader dies, then None (what is in flight is read here from then on)
        self.readers = self.pool = pool
        self.job, self.read_here = job, read_here
        # each chunk, its reader's future (or its looks once read here), and its claim key
        self.chunks: deque[tuple[Chunk, Future | list[Look] | None, int]] = deque()
        self.sent = 0
        self.loaded: dict[Future, Future[list[tuple]]] = {}  # a reader's future: its looks, once loaded

    def __len__(self) -> int:
        return len(self.chunks)

    def submit(self, chunk: Chunk) -> None:
        future, key = None, self.sent
        self.sent += 1
        if self.pool is not None:
            try:
                future = self.pool.submit(_read_claimed, self.pool.folder, key, self.job, chunk)
            except (BrokenProcessPool, RuntimeError):
                self.pool = None
            else:
                # Loaded by the thread that completes the future, the pool's own, as the looks
                # were when they came through its pipe: not by this one, which writes the index
                # and is what a big rebuild waits on (100,000 cards, loaded here, frame by frame:
                # 24.7 against 22.2 s by the pipe, medians of 3 alternating rounds).
                loaded: Future[list[tuple]] = Future()
                self.loaded[future] = loaded
                future.add_done_callback(functools.partial(_load, loaded))
        self.chunks.append((chunk, future, key))

    def next(self) -> list[Look]:
        """The looks of the oldest chunk in flight. Until its reader has them, this process
        reads the newest chunk no reader has begun, rather than wait: readers kept off the
        cores by other programs (at their lower priority, reading.worker_start) held the writer
        up. With two busy loops running beside it, a rebuild of 10,000 cards with two readers
        took 4.6-5.1 s waiting, more than the 4.1-4.6 s of reading every file here, and takes
        3.5 s now (medians of 3 alternating rounds). On a quiet machine, where the oldest chunk
        is nearly always read by then, the two are even: 1.65 against 1.67 s and 1.70 against
        1.71 s in two sets of alternating rounds (medians of 11 and 9), 1.94 against 1.84 s in a
        third, within the drift of the machine. Waiting 5-20 ms before reading here saved
        nothing there and cost up to 0.4 s under load."""
        chunk, future, key = self.chunks.popleft()
        while isinstance(future, Future) and not future.done():
            for at in range(len(self.chunks) - 1, -1, -1):
                later, pending, later_key = self.chunks[at]
                if isinstance(pending, Future) and self._claim(later_key, pending):  # no reader began it
                    self.chunks[at] = (later, self.read_here(later), later_key)
                    break
            else:
                break  # every later chunk is being read: wait for the oldest
        if isinstance(future, list):  # read here already
            return future
        rows = self._rows(future, key) if future is not None else None
        return self.read_here(chunk) if rows is None else [reading.unpacked(row) for row in rows]

    def _claim(self, key: int, future: Future) -> bool:
        """Whether this process takes chunk `key` from the readers, to read it itself: it does
        unless a reader claimed the chunk first. The reader's future is then left to finish
        with nothing. Were both to read it, the reader's looks would only be dropped: a claim
        saves work, and a claim file that cannot be made costs nothing else."""
        if future.running():  # on its way to a reader: taking those too kept the writer from writing
            return False
        if self.readers is not None and not _claimed(self.readers.folder, key, taken=True):
            return False
        self.loaded.pop(future, None)
        return True

    def _rows(self, future: Future, key: int) -> list[tuple] | None:
        """The packed looks a reader gives for a chunk; None when none ever will: the pool
        broke, or no reader has claimed the chunk (this process claims it, to read it here)."""
        while not future.done():
            if self.pool is None or self._claim(key, future):
                return None
            wait([future], timeout=CHECK_S)
            if not future.done() and not self.takes_work():
                self.pool = None
        try:
            return self.loaded.pop(future).result()
        except BrokenProcessPool:  # its reader died
            self.pool = None
            return None
        except OSError:  # the hand-over failed (a small /dev/shm filled by large notes, say)
            return None

    def takes_work(self) -> bool:
        return self.pool is not None and self.pool.takes_work()

    def close(self) -> None:
        if self.readers is not None:
            self.readers.close()


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
