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

import os
import signal
from multiprocessing import get_context

from memsync.errors import MemsyncError

from .encoder import DIM, MODEL, Encoder

_engine: Encoder | None = None  # in a worker process: its one-thread engine


class EnginePool:
    """`processes` engines of one thread each, in worker processes, with the Encoder's
    interface (model, threads, token_count, passages). Use it as a context manager: the workers
    end with it."""

    model = MODEL

    def __init__(self, processes: int):
        from memsync.sync import start_method

        context = get_context(start_method())
        ready = context.SimpleQueue()
        self._pool = context.Pool(processes, initializer=_start, initargs=(ready,))
        self.pids: list[int] = []
        try:
            for _ in range(processes):  # every engine loaded before the first passage is timed
                pid, error = ready.get()
                if error:
                    raise MemsyncError(f"an embedding process could not load the model: {error}")
                self.pids.append(pid)
        except BaseException:
            self._pool.terminate()
            raise
        self.threads = processes
        self._counter = Encoder(1, force=True)

    def token_count(self, text: str) -> int:
        return self._counter.token_count(text)

    def passages(self, texts: list[str]):
        """(n, 384) float32 unit vectors, one per passage, in order."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack(self._pool.map(_embed, texts, chunksize=1))

    def close(self) -> None:
        self._pool.close()
        self._pool.join()

    def __enter__(self) -> EnginePool:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.close()
        else:  # interrupted or failed: the passages in flight are not wanted
            self._pool.terminate()
            self._pool.join()


def _start(ready) -> None:
    """In each worker: end with the process that started it, leave Ctrl-C to that process (which
    then ends the pool), and load a one-thread engine."""
    global _engine
    from memsync.reading import watch_parent

    watch_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _engine = Encoder(1, force=True)
        _engine.passages(["memsync"])  # the weights paged in
    except Exception as error:  # said to the waiting process, which stops the pool
        ready.put((os.getpid(), f"{type(error).__name__}: {error}"))
        return
    ready.put((os.getpid(), None))


def _embed(text: str):
    assert _engine is not None, "a pool worker embeds after _start"
    return _engine.passages([text])[0]
