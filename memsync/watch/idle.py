"""The idle-work seam: low-priority jobs the watcher's worker runs when nothing is pending."""

from __future__ import annotations

import logging
from collections.abc import Callable

from memsync.store.index import Index

log = logging.getLogger(__name__)

IdleWork = Callable[[Index], bool]
"""Low-priority work the worker does when no event is pending (e.g. background embeddings).

Register it with `Watcher(cfg, idle_work=[task])` or `watcher.idle_work.append(task)` before
start(). It is called on the worker thread with the worker's own Index connection, only after the
start-up reconcile, never while stopping, and again after every batch (new cards may need it).
A task with a `follow(cfg)` method is given each config.json the watcher takes up (before its
next call). Each call does one small slice (aim for well under the quiet window, ~50 ms: events wait while
it runs) and returns True if more remains, False once there is nothing to do until the next
batch. An exception is logged and the task rests until the next batch. It must not call the
Watcher.
"""


def run_slice(due: list[IdleWork], index: Index) -> list[IdleWork]:
    """One slice of each idle task that may have work; returns those that have more. A task
    rests once it says it is done (or fails) until the next batch."""
    still = []
    for task in due:
        try:
            if task(index):
                still.append(task)
        except Exception:
            log.exception("idle work %r failed; it rests until the next batch", task)
    return still
