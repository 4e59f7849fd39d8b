"""The idle-work seam: low-priority jobs the watcher's worker runs when nothing is pending."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from memsync.store.index import Index

if TYPE_CHECKING:
    from .reporting import Failures

log = logging.getLogger(__name__)

IdleWork = Callable[[Index], bool]
"""Low-priority work the worker does when no event is pending (e.g. background embeddings).

Register it with `Watcher(cfg, idle_work=[task])` or `watcher.idle_work.append(task)` before
start(). It is called on the worker thread with the worker's own Index connection, only after the
start-up reconcile, never while stopping, and again after every batch (new cards may need it).
A task with a `follow(cfg)` method is given each config.json the watcher takes up (before its
next call). Each call does one small slice (aim for well under the quiet window, ~50 ms: events wait while
it runs) and returns True if more remains, False once there is nothing to do until the next
batch. An exception is logged and the task rests until the next batch; a full disk, which fails
the task again after every batch until space is freed, is said in one line, once, as a batch's is
(memsync.watch.reporting.Failures). It must not call the Watcher.
"""


def run_slice(due: list[IdleWork], index: Index, failures: Failures | None = None) -> list[IdleWork]:
    """One slice of each idle task that may have work; returns those that have more. A task
    rests once it says it is done (or fails) until the next batch. `failures`: the worker's,
    which say a failure (without one, each is logged with its traceback)."""
    still = []
    for task in due:
        try:
            more = task(index)
        except Exception as exc:
            if failures is None:
                log.exception("idle work %r failed; it rests until the next batch", task)
            else:
                failures.idle_failed(task, exc)
            continue
        if failures is not None:
            failures.idle_passed(task)
        if more:
            still.append(task)
    return still
