"""What the watcher says about its work: one log line per batch or reconcile, and the problems
it met (a broken card never stops the watcher; it is named here and in `memsync stats`); and
the reconcile of every source, which it logs."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from memsync import heap, reindexlock

from ..config import Config
from ..errors import MassRemoval
from ..model.indexing import SyncReport
from ..sources import drop_unconfigured
from ..store.connection import as_error, failure_kind

log = logging.getLogger(__name__)


class Failures:
    """How the worker says that a batch (or a reconcile) failed. A full disk fails every batch,
    one a second, until space is freed, and a damaged index until it is rebuilt: either is said
    in one line the first time, not as a traceback each time, and once more when the index
    takes writes again. Any other failure keeps its traceback: it may be a bug."""

    def __init__(self, db: Path):
        self.db = db
        self.said: str | None = None  # the kind of failure said in one line, until a batch passes
        # Idle tasks (memsync.watch.idle) whose failure on a full disk was said: each runs again
        # after every batch, and a batch small enough to fit does not mean its task will.
        self.idle_full: set = set()

    def failed(self, exc: BaseException, what: str) -> None:
        kind = failure_kind(exc)
        if kind not in ("full", "damaged"):
            log.error("%s", what, exc_info=exc)
        elif self.said != kind:
            self.said = kind
            if kind == "full":
                log.error("%s — free space on the disk of %s; the watcher retries", exc, self.db)
            else:  # the message says how to rebuild it
                log.error("%s: %s; the watcher retries meanwhile", what, as_error(exc, self.db))

    def idle_failed(self, task, exc: BaseException) -> None:
        kind = failure_kind(exc)
        if kind not in ("full", "damaged"):
            log.error("idle work %r failed; it rests until the next batch", task, exc_info=exc)
        elif kind == "damaged":  # said once, as a batch's is
            self.failed(exc, f"idle work {task!r} failed")
        elif task not in self.idle_full:
            self.idle_full.add(task)
            log.error("idle work %r: %s — free space on the disk of %s; it rests until the next "
                      "batch", task, exc, self.db)

    def idle_passed(self, task) -> None:
        self.idle_full.discard(task)

    def passed(self) -> None:
        if self.said == "full":
            log.warning("the index takes writes again: the disk of %s has room", self.db)
        elif self.said == "damaged":
            log.warning("the index takes writes again: %s is sound", self.db)
        self.said = None


class HeldRenames:
    """What the worker says of the renames it holds back for the rename or deletion that follows
    (memsync.watch.pairing, up to plan.HOLD). It looks again each quiet window meanwhile: such a
    wake-up is no batch, and logged "batch: 2 items, 0 paths looked at" each time."""

    def __init__(self) -> None:
        self.said: list = []  # the renames held at the last wake-up

    def only(self, moves: list, held: list, batch, rescan: dict) -> bool:
        """Whether this wake-up has nothing to do (but hold renames back, said once a hold at
        -vv); if it has, the batch it applies is said at -vv."""
        said, self.said = self.said, held
        if moves or rescan or any(batch.paths.values()) or any(batch.trees.values()):
            if log.isEnabledFor(logging.DEBUG):
                log.debug("batch: moves %s, held %s, paths %s, trees %s, rescan %s",
                          [m[1:4] for m in moves], [m[1:4] for m in held], batch.paths,
                          batch.trees, rescan)
            return False
        if held and held != said:
            log.debug("holding back renames %s for the rename or deletion that follows",
                      [m[1:4] for m in held])
        return True


def log_batch(report: SyncReport, items: int) -> None:
    log.info(
        "batch: %d items, %d paths looked at -> +%d ~%d -%d moved %d, in %.1f ms",
        items, report.scanned, report.added, report.updated, report.removed, report.moved,
        report.seconds * 1000,
    )
    warn_problems(report)


def reconciled(indexer, source: str) -> SyncReport:
    """A whole source reconciled; where that would remove most of its files at once (an
    unmounted disk looks so) nothing is done and the refusal is logged: the cards are kept,
    the folder may come back. In the index's reindex turn (memsync.reindexlock): a catch-up
    beside a `memsync index` read and wrote every changed file twice (3,000 edits: "updated"
    3,000 in each)."""
    try:
        with reindexlock.turn(indexer.index.path, _log_waiting):
            return indexer.reconcile(source)
    except MassRemoval as refused:
        log.warning("%s", refused.message)
        return SyncReport()


def _log_waiting(pid: int | None) -> None:
    log.info("waiting for another process's reindex%s to end", f" (pid {pid})" if pid else "")


def reconcile_all(cfg: Config, indexer, requeue: Callable[[str, list[str]], None], why: str) -> None:
    """Every source whose folder is there reconciled (`requeue` takes the paths still being
    written), the cards of sources no longer configured dropped, and the whole logged."""
    report = SyncReport()
    started = time.perf_counter()
    for source in cfg.sources:
        if os.path.isdir(source.root):
            part = reconciled(indexer, source.name)
            requeue(source.name, part.retry)
            report.merge(part)
    # Sources removed from config.json while no watcher ran (or just before this one
    # stopped): the index must hold what a rebuild from the config would.
    report.merge(drop_unconfigured(cfg, indexer.index))
    report.seconds = time.perf_counter() - started
    log_reconcile(report, why)
    heap.give_back()  # a watcher outlives a bulk load: not the memory it freed (rare, cheap)


def log_reconcile(report: SyncReport, why: str) -> None:
    log.info(
        "%s reconcile: %d files, +%d ~%d -%d, %d read, in %.0f ms", why, report.scanned,
        report.added, report.updated, report.removed, report.hashed, report.seconds * 1000,
    )
    warn_problems(report)


def warn_problems(report: SyncReport, limit: int = 20) -> None:
    retried = set(report.retry)  # still being written: not a problem yet
    problems = [p for p in report.problems if p["path"] not in retried]
    for problem in problems[:limit]:
        log.warning("%s: %s", problem["path"], problem["message"])
    if len(problems) > limit:
        log.warning("... and %d more problems (see `memsync stats`)", len(problems) - limit)
