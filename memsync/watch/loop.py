"""The worker thread of the Watcher: it alone owns the index connection.

It sleeps until something is due (a path quiet long enough, a rescan, a config.json change),
takes it from `Pending` and hands it to the indexer through `Pairing`. When nothing is pending
it runs the registered idle work one slice at a time (IdleWork below): the seam for low-priority
background jobs.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from memsync import session
from memsync.store.index import Index
from memsync.watch import plan

from ..model import SyncReport
from ..sources import drop_unconfigured
from ..sync import Indexer
from . import reporting
from .following import HEALTH_CHECK, changes
from .state import WatcherState

log = logging.getLogger(__name__)

STOP_GRACE = 5.0  # how long stop() waits for files still being written

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


class WorkerLoop(WatcherState):
    """The worker-thread half of memsync.watch.watcher.Watcher, which sets up its state."""

    def _follow_config(self, indexer: Indexer) -> tuple[Indexer, list[str]]:
        """Take up the sources config.json names now: watch them, forget the cards of those that
        went (or changed folder or adapter), and say which to read afresh. Returns the indexer
        to go on with and the sources to reconcile."""
        fresh = self._config.reread(self.cfg)
        if fresh is None:
            return indexer, []
        if fresh.semantic != self.cfg.semantic:
            log.warning("config.json changed: semantic search %s", "on" if fresh.semantic else "off")
        if fresh.extra_sources == self.cfg.extra_sources:
            self._adopt(fresh)
            return indexer, []
        gone, new = changes(self.cfg, fresh)
        indexer = Indexer(indexer.index, fresh.sources)
        try:
            for name in gone:
                indexer.drop_source(name)
        except Exception:
            self._config.forget_reading()  # nothing taken up yet: try again at the next wake-up
            raise
        self._adopt(fresh)
        self._pairing.forget(gone)
        watched = [s.name for s in fresh.sources]
        log.warning("config.json changed: watching %s (new: %s; dropped: %s)",
                    ", ".join(watched), ", ".join(new) or "none", ", ".join(gone) or "none")
        if self._stopping:
            return indexer, new
        self._eyes.refresh(self.cfg, self._wants, self._stopping)
        # What the old observer still held went with it: look at every source once.
        return indexer, watched

    # --- the worker thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            index = Index(self.cfg.db.path)
            indexer = session.indexer(self.cfg, index)
        except BaseException as exc:
            self._error = exc
            self._opened.set()
            return
        self._opened.set()
        try:
            try:
                self._reconcile_all(indexer, "start-up")
            except Exception:  # e.g. a locked or full disk: keep watching, try again soon
                log.exception("the start-up reconcile failed; retrying")
                self.request_rescan(None, "start-up reconcile failed")
            with self._cond:
                self._ready = True
                self._idle_due = list(self.idle_work)
                self._cond.notify_all()
            self._loop(indexer)
        finally:
            index.close()
            with self._cond:
                self._cond.notify_all()

    def _loop(self, indexer) -> None:
        last_full = time.monotonic()
        stop_deadline = None
        while True:
            with self._cond:
                batch, rescan, idle = self._next(last_full)
                if batch is None:
                    break
                self._busy = not idle
                reread = self._config.take_due(time.monotonic())
            try:
                if idle:
                    self._idle_slice(indexer.index)
                    continue
                if reread:
                    indexer, fresh = self._follow_config(indexer)
                    rescan = {**dict.fromkeys(fresh, "sources changed"), **rescan}
                    self._idle_due = list(self.idle_work)  # a task may want the new settings
                if rescan:
                    last_full = time.monotonic()
                if batch or rescan:
                    self._process(indexer, batch, rescan)
                    self._idle_due = list(self.idle_work)
            except Exception:  # a failed batch must not end watching: redo it as a rescan
                log.exception("a batch failed; the affected sources will be rescanned")
                with self._cond:
                    for name in {m[0] for m in batch.moves} | set(batch.paths) | set(batch.trees):
                        self._rescan.setdefault(name, "retry after a failed batch")
                    self._cond.wait(1.0)  # back off: the cause (disk full, locked DB) may pass
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
                    if self._stopping and self.pending:
                        # What is left was still being written: give it a moment, then give up.
                        stop_deadline = stop_deadline or time.monotonic() + STOP_GRACE
                        if time.monotonic() > stop_deadline:
                            log.warning("stopping with %d paths still changing", len(self.pending))
                            self.pending = plan.Pending(self.debounce)
                        else:
                            self._cond.wait(self.debounce)
        # Nothing was lost between the last event and stop(): a final look at the whole tree,
        # without a source removed meanwhile (it would come back).
        try:
            if self._config.changed():
                indexer, _fresh = self._follow_config(indexer)
            self._reconcile_all(indexer, "final")
        except Exception:
            log.exception("the final reconcile failed; `memsync index` will catch up")

    def _next(self, last_full: float):
        """Wait (holding the condition) until something is due: (batch, rescan, idle), where
        idle means "nothing is due: run a slice of idle work"; a batch of None means stop."""
        while True:
            now = time.monotonic()
            if self._stopping:
                if not self.pending and not self._rescan:
                    return None, None, False
                return self.pending.take(now, everything=True), self._take_rescan(), False
            if now - last_full >= self.rescan_every:
                self._rescan.update({s.name: "periodic check" for s in self.cfg.sources})
            self._config.look(now)  # in case no event said config.json changed
            due = self.pending.next_due()
            if self._config.due is not None:
                due = self._config.due if due is None else min(due, self._config.due)
            if self._rescan or (due is not None and due <= now):
                return self.pending.take(now), self._take_rescan(), False
            if self._idle_due:
                return plan.Batch(), {}, True
            timeout = HEALTH_CHECK if due is None else due - now
            self._wake_at = now + timeout
            woken = self._cond.wait(timeout)
            self._wake_at = None
            if not woken and due is None:
                self._cond.release()  # watchdog's thread may be waiting for it to hand us events
                try:
                    self._check_observer()
                finally:
                    self._cond.acquire()

    def _idle_slice(self, index: Index) -> None:
        """One slice of each idle task that may have work; a task rests once it says it is
        done (or fails) until the next batch."""
        still = []
        for task in self._idle_due:
            try:
                if task(index):
                    still.append(task)
            except Exception:
                log.exception("idle work %r failed; it rests until the next batch", task)
        self._idle_due = still

    def _check_observer(self) -> None:
        """A dead observer means unseen changes: start a new one, then rescan everything."""
        if self._stopping or not self._eyes.dead():
            return
        log.warning("the file-system observer stopped; restarting it and rescanning")
        self._eyes.refresh(self.cfg, self._wants, self._stopping)
        self.request_rescan(None, "observer restarted")

    def _take_rescan(self) -> dict[str, str]:
        rescan, self._rescan = self._rescan, {}
        return rescan

    def _process(self, indexer, batch: plan.Batch, rescan: dict[str, str]) -> None:
        started = time.perf_counter()
        report = SyncReport()
        # Events of a source removed from config.json may still be queued: they are not ours.
        _keep_sources(batch, self._wants)
        rescan = {name: why for name, why in rescan.items() if name in self._wants}
        if batch.rechecks and not self._stopping and self._eyes.missing_watch(self.cfg, batch.trees):
            log.info("re-watching the vault: watchdog missed a new folder")
            self._eyes.refresh(self.cfg, self._wants, self._stopping)
            # What the old observer still held (a rename waiting for its other half, events
            # not yet dispatched) went with it: look at everything once.
            rescan = {**{s.name: "re-watched" for s in self.cfg.sources}, **rescan}
        moves, held = self._pairing.hold_vanished(batch)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("batch: moves %s, held %s, paths %s, trees %s, rescan %s",
                      [m[1:4] for m in moves], [m[1:4] for m in held], batch.paths, batch.trees,
                      rescan)
        if held:
            with self._cond:
                self.pending.hold(held, time.monotonic() + self.debounce)
        sources = list(dict.fromkeys(
            [m[0] for m in moves] + list(batch.paths) + list(batch.trees)
        ))
        for source in sources:
            if source in rescan:
                continue  # the whole source is about to be reconciled
            part, later = self._pairing.apply(
                indexer, source, self._wants[source], [m for m in moves if m[0] == source],
                batch.paths.get(source, []), batch.trees.get(source, []), final=self._stopping,
                renaming=self._renaming,
            )
            self._requeue(source, part.retry)
            self._look_again(source, later)
            report.merge(part)
        for source, why in rescan.items():
            log.info("reconciling %s: %s", source, why)
            part = indexer.reconcile(source)
            self._requeue(source, part.retry)
            report.merge(part)
        report.seconds = time.perf_counter() - started
        self.batches += 1
        self.totals.merge(report)
        self.totals.seconds += report.seconds
        reporting.log_batch(report, batch.size() + len(rescan))

    def _requeue(self, source: str, paths: list[str]) -> None:
        if not paths:
            return
        now = time.monotonic()
        with self._cond:
            for path in paths:
                self.pending.add_path(source, path, now)

    def _look_again(self, source: str, when: dict[str, float]) -> None:
        """Look at each path again once its time comes (at the earliest one quiet window on)."""
        soonest = time.monotonic() + self.debounce
        with self._cond:
            for path, at in when.items():
                self.pending.add_path_later(source, path, max(at, soonest))

    def _renaming(self, source: str, path: str) -> bool:
        with self._cond:
            return self.pending.renames_away(source, path)

    def _reconcile_all(self, indexer, why: str) -> None:
        report = SyncReport()
        started = time.perf_counter()
        for source in self.cfg.sources:
            if os.path.isdir(source.root):
                part = indexer.reconcile(source.name)
                self._requeue(source.name, part.retry)
                report.merge(part)
        # Sources removed from config.json while no watcher ran (or just before this one
        # stopped): the index must hold what a rebuild from the config would.
        report.merge(drop_unconfigured(self.cfg, indexer.index))
        report.seconds = time.perf_counter() - started
        reporting.log_reconcile(report, why)


def _keep_sources(batch: plan.Batch, names) -> None:
    batch.moves = [move for move in batch.moves if move[0] in names]
    for per_source in (batch.paths, batch.trees):
        for name in [n for n in per_source if n not in names]:
            del per_source[name]
