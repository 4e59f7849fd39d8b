"""Reader processes: the files of a big job looked at (memsync.reading) in worker processes
while this process writes the index, and handed back in the order they were asked for, so ids
and rows come out as a serial run gives them. memsync.sync decides when a job is big enough
and how it is cut into chunks; this module runs the readers, on a pool of
memsync.workerpool.

A reader that falls behind does not hold the writer up: the writer reads later chunks itself
meanwhile (_Flight.next). A reader that dies (killed, out of memory) breaks the pool: its chunk
and every later one are read here instead.

The pool itself also serves a big reconcile's survey (memsync.survey) and the embedding
engines (memsync.semantic.pool).
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, wait
from concurrent.futures.process import BrokenProcessPool

from . import reading
from .model.indexing import SyncReport
from .readerbudget import reserved
from .reading import Look
from .workerpool import CHECK_S, Pool, received
from .workerpool import start_method as start_method  # memsync.sync asks it whether readers fork

Chunk = list[tuple]  # (relative path, stored state) pairs, read as one unit


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
        loaded.set_result(received(future.result()))
    except BaseException as exc:  # noqa: BLE001 - the reader's failure, or the file's: the writer raises it
        loaded.set_exception(exc)


class _Flight:
    """The chunks handed to a pool, oldest first, and whether the pool still works.

    A pool broken by a reader that died (killed, out of memory) should fail every future it
    holds, but the standard library's ProcessPoolExecutor (seen on Python 3.11) can leave some
    for ever pending, in three ways:
    - a reader killed while it sends a result: the pool's manager thread reads the half it got
      and waits for the rest for ever, noticing nothing. So a reader sends only a file's name,
      which one write puts in the pipe whole (workerpool._hand_over), and the looks go in the file;
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
