"""Embedding on several cores for someone waiting (`memsync index --embed`): worker processes,
each with a one-thread engine, take the passages one at a time.

One engine with N OpenMP threads stops all of them at a barrier after every matrix product, and
a thread the system sets aside holds up the rest. Separate processes never wait for each other,
and a process that is free takes the next passage, so one long passage does not idle the others.
On this 2-core machine, 32 short cards, three alternating rounds: one thread 5.7 docs/s, one
engine with two threads 9.1 to 10.3, two processes 9.8 to 10.7; with one busy process beside
them, 4.6, 4.4 to 4.8 and 5.3 to 6.5.

The weights (29 MiB) are mapped from the same file in every process, so the page cache holds
them once; each engine process holds about 21 MiB of its own beside them (on 16 cores, about
340 MiB in all while the embedding runs). This process keeps an engine too, only to count
tokens when it cuts cards into passages (memsync.semantic.passages); it loads it after the
workers start, so no worker inherits it.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from memsync.errors import MemsyncError
from memsync.workerpool import Pool, collected, results, start_method

from .encoder import DIM, MODEL, Encoder

LOAD_WAIT_S = 120  # how long an engine process waits for the others to load the model

_engine: Encoder | None = None  # in a worker process: its one-thread engine
_loaded = None  # in a worker process: the barrier every engine reaches once loaded

ENDED = ("an embedding process ended before its work was done (killed, or out of memory?). "
         "The cards embedded so far are kept: run `memsync index --embed` again, with "
         "--threads 1 if it happens again")


class EnginePool:
    """`processes` engines of one thread each, in worker processes, with the Encoder's
    interface (model, eager, threads, token_count, start, passages). Use it as a context manager: the workers
    end with it. A worker that dies (killed, out of memory) fails the embedding with ENDED
    instead of leaving it waiting for the passages that worker held."""

    model = MODEL
    eager = False  # start() hands the passages over and returns: embed_pending reads on meanwhile

    def __init__(self, processes: int):
        method = start_method()
        self._pool = Pool(processes, _start, method, initargs=(get_context(method).Barrier(processes),))
        try:  # every engine loaded before the first passage (and the bench's clock) starts
            self.pids = sorted(results(self._pool, [_ready] * processes))
        except BrokenProcessPool:
            self._pool.close()
            Encoder(1, force=True)  # a model that cannot load says why here too, and what to do
            raise MemsyncError("an embedding process ended while loading the model (its error, if "
                               "any, is printed above); `memsync index --embed --threads 1` loads "
                               "it in this process instead") from None
        except BaseException:
            self._pool.close()
            raise
        self.threads = processes
        self._counter = Encoder(1, force=True)

    def token_count(self, text: str) -> int:
        return self._counter.token_count(text)

    def passages(self, texts: list[str]):
        """(n, 384) float32 unit vectors, one per passage, in order."""
        return self.start(texts)()

    def start(self, texts: list[str]) -> Callable[[], Any]:
        """Hand the passages to the engines now; the call returned waits for their vectors (as
        passages() gives them). A caller that prepares its next batch meanwhile keeps every
        engine busy to the end of this one, where passages() alone would idle all but the one
        embedding its last passage."""
        import numpy as np

        try:
            futures = [self._pool.submit(functools.partial(_embed, text)) for text in texts]
        except BrokenProcessPool:
            raise MemsyncError(ENDED) from None

        def vectors():
            if not texts:
                return np.zeros((0, DIM), dtype=np.float32)
            try:
                return np.stack(collected(self._pool, futures))
            except BrokenProcessPool:
                raise MemsyncError(ENDED) from None

        return vectors

    def __enter__(self) -> EnginePool:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self._pool.close()  # passages still queued (interrupted, failed) are not wanted


def _start(loaded) -> None:
    """In each worker: end with the process that started it, leave Ctrl-C to that process (which
    then ends the pool), and load a one-thread engine."""
    global _engine, _loaded
    from memsync.reading import watch_parent

    watch_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _loaded = loaded
    _engine = Encoder(1, force=True)
    _engine.passages(["memsync"])  # the weights paged in


def _ready() -> int:
    """Wait until every engine is loaded: one of these per process (each holds its process
    at the barrier, so no process runs two), then say which process this is."""
    assert _loaded is not None, "a pool worker runs after _start"
    _loaded.wait(LOAD_WAIT_S)
    return os.getpid()


def _embed(text: str):
    assert _engine is not None, "a pool worker embeds after _start"
    return _engine.passages([text])[0]
