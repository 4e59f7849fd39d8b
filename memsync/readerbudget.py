"""The reader processes one memsync process runs at once, over all its jobs (memsync.readers):
a budget each job reserves its readers from."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from . import cores


def most() -> int:
    """How many reader processes this process runs at once, over all its jobs: one per usable
    core, as many as embedding engines (memsync.semantic.worker). A job on its own asks for one
    fewer (memsync.sync.default_workers: it reads too), so the cap binds on jobs at once and on a
    `threads` past the cores."""
    return cores.usable()


class _Budget:
    """The reader processes running now, over every job of this process. An MCP server runs its
    tool calls on threads: each memory_reindex that found many files to read started readers of
    its own, so six calls at once ran 6 x (cores - 1) of them, and with config.json's `threads`
    at 16, 6 x 15 on two cores. A job takes what is free and reads the rest itself."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0

    def take(self, wanted: int) -> int:
        with self._lock:
            granted = max(0, min(wanted, most() - self._running))
            self._running += granted
            return granted

    def give_back(self, granted: int) -> None:
        with self._lock:
            self._running -= granted


_BUDGET = _Budget()


@contextlib.contextmanager
def reserved(wanted: int) -> Iterator[int]:
    """Up to `wanted` reader processes of the budget, for as long as the block runs: how many
    the caller may start (0: it reads in its own process)."""
    granted = _BUDGET.take(wanted)
    try:
        yield granted
    finally:
        _BUDGET.give_back(granted)
