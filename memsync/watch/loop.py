"""The worker thread of the Watcher: it alone owns the index connection, and the state below.
It sleeps until something is due (a path quiet long enough, a rescan, a config.json change),
takes it from `Pending` and hands it to the indexer through `Pairing`; with nothing pending it
runs a slice of the registered idle work (memsync.watch.idle)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable

from memsync import session
from memsync.store.index import Index
from memsync.watch import plan

from ..config import Config
from ..model.indexing import RunningTotals, SyncReport
from ..sync import Indexer
from . import following, reporting
from .following import HEALTH_CHECK, ConfigFollower, switch_sources, wants_by_source
from .idle import IdleWork, run_slice
from .observing import Observation
from .pairing import Pairing
from .roots import Held

log = logging.getLogger(__name__)

STOP_GRACE = 5.0  # how long stop() waits for files still being written
AWAY_CHECK = 1.0  # seconds between looks for a source folder that moved or went away


class WorkerLoop:
    """The worker thread and what it owns: the sources it follows, what to rescan, the pending
    queue and the condition guarding it (handed in: watchdog's threads add hints under it)."""

    def __init__(self, cfg: Config, pending: plan.Pending, cond: threading.Condition,
                 eyes: Observation, debounce: float, rescan_every: float,
                 idle_work: Iterable[IdleWork] = ()):
        self.cfg = cfg
        self.pending = pending
        self._cond = cond
        self._eyes = eyes
        self.debounce = debounce
        self.rescan_every = rescan_every  # safety net for what no event reported
        self.idle_work: list[IdleWork] = list(idle_work)
        self.totals, self.batches = RunningTotals(), 0
        self._idle_due: list[IdleWork] = []  # the idle tasks that may have something to do
        self._rescan: dict[str, str] = {}  # source -> why
        self._away = Held()  # sources whose batches were dropped: their folder not in place
        self._stopping = self._busy = False
        self._held = reporting.HeldRenames()
        self._wake_at: float | None = None  # when the sleeping worker will wake by itself
        self.ready = False  # the start-up reconcile is done
        self.opened = threading.Event()  # set once the index is open (or failed to: `error`)
        self.error: BaseException | None = None
        self._pairing = Pairing(lambda name: self.cfg.source(name).root)
        self.wants, self.enters = wants_by_source(cfg), following.enters_by_source(cfg)
        self._failures = reporting.Failures(cfg.db.path)
        self.config = ConfigFollower(cfg.config_file, cfg.ignored_keys)

    def adopt(self, cfg: Config) -> None:
        self.cfg, self.wants, self.enters = cfg, wants_by_source(cfg), following.enters_by_source(cfg)
        for task in self.idle_work:  # e.g. "semantic" switched on: embedding starts without a save
            getattr(task, "follow", lambda cfg: None)(cfg)

    def request_rescan(self, source: str | None, why: str = "requested") -> None:
        with self._cond:
            for name in [source] if source else [s.name for s in self.cfg.sources]:
                self._rescan.setdefault(name, why)
            self._cond.notify_all()

    def stop_soon(self) -> None:
        """Apply what is pending, look at every source once more, and end."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def caught_up(self) -> bool:  # started, nothing pending or in progress (hold the condition)
        return (self.ready and not self._busy and not self.pending and not self._rescan
                and self.config.due is None)

    def wakes_after(self, due: float | None) -> bool:  # due before it would wake by itself?
        return self._wake_at is None or (due is not None and due < self._wake_at)

    def _follow_config(self, indexer: Indexer) -> tuple[Indexer, list[str]]:
        """Take up the sources config.json names now: watch them, forget the cards of those that
        went (or changed folder or adapter); returns the indexer and the sources to read afresh."""
        fresh = self.config.reread(self.cfg)
        if fresh is None:
            return indexer, []
        if fresh.semantic != self.cfg.semantic:
            log.warning("config.json changed: semantic search %s", "on" if fresh.semantic else "off")
        if fresh.extra_sources == self.cfg.extra_sources:
            self.adopt(fresh)
            return indexer, []
        try:
            indexer, gone, new = switch_sources(indexer, self.cfg, fresh)
        except Exception:
            self.config.forget_reading()  # nothing taken up yet: try again at the next wake-up
            raise
        self.adopt(fresh)
        self._pairing.forget(gone)
        if self._stopping:
            return indexer, new
        self._eyes.refresh(self.cfg, self.wants, self._stopping)
        # What the old observer still held went with it: look at every source once.
        return indexer, [s.name for s in fresh.sources]

    # --- the worker thread --------------------------------------------------------------------

    def run(self) -> None:
        try:
            indexer = session.indexer(self.cfg, Index(self.cfg.db.path, lean=True))
        except BaseException as exc:
            self.error = exc
            self.opened.set()
            return
        self.opened.set()
        try:
            try:
                self.reconcile_all(indexer, "start-up")
            except Exception as exc:  # e.g. a locked or full disk: keep watching, try again soon
                self._failures.failed(exc, "the start-up reconcile failed; retrying")
                self.request_rescan(None, "start-up reconcile failed")
            with self._cond:
                self.ready = True
                self._idle_due = list(self.idle_work)
                self._cond.notify_all()
            indexer = self._loop(indexer)
        finally:
            indexer.index.close()
            with self._cond:
                self._cond.notify_all()

    def _loop(self, indexer: Indexer) -> Indexer:  # returns the indexer it ended with
        last_full = time.monotonic()
        stop_deadline = None
        while True:
            with self._cond:
                batch, rescan, idle = self._next(last_full)
                if batch is None:
                    break
                self._busy = not idle
                reread = self.config.take_due(time.monotonic())
            try:
                if indexer.index.replaced():  # e.g. a damaged index set aside and built anew:
                    indexer = session.reopened(self.cfg, indexer)  # what went to the old file is
                    self.request_rescan(None, "the index file was replaced")  # read again into it
                if idle:
                    self._idle_due = run_slice(self._idle_due, indexer.index, self._failures)
                    continue
                if reread:
                    indexer, fresh = self._follow_config(indexer)
                    rescan = {**dict.fromkeys(fresh, "sources changed"), **rescan}
                    self._idle_due = list(self.idle_work)  # a task may want the new settings
                if rescan:
                    last_full = time.monotonic()
                if (batch or rescan) and self._process(indexer, batch, rescan):
                    self._failures.passed()
                    self._idle_due = list(self.idle_work)
            except Exception as exc:  # a failed batch must not end watching: redo it as a rescan
                self._failures.failed(exc, "a batch failed; the affected sources will be rescanned")
                with self._cond:  # a failed rescan too, unless stopping (final reconcile's turn)
                    for name in () if self._stopping else {*(m[0] for m in batch.moves), *batch.paths,
                                                           *batch.trees, *(rescan or ())}:
                        self._rescan.setdefault(name, "retry after a failed batch")
                    self._cond.wait(0 if self._stopping else 1.0)  # back off: the cause may pass
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
                    if self._stopping and self.pending:
                        # What is left was still being written: give it a moment, then give up.
                        stop_deadline = stop_deadline or time.monotonic() + STOP_GRACE
                        if time.monotonic() > stop_deadline:
                            log.warning("stopping with %d paths still changing", len(self.pending))
                            self.pending.clear()
                        else:
                            self._cond.wait(self.debounce)
        # Nothing was lost between the last event and stop(): a final look at the whole tree,
        # without a source removed meanwhile (it would come back).
        try:
            if self.config.changed():
                indexer, _fresh = self._follow_config(indexer)
            self.reconcile_all(indexer, "final")
        except Exception as exc:
            self._failures.failed(exc, "the final reconcile failed; `memsync index` will catch up")
        return indexer

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
            self.config.look(now)  # in case no event said config.json changed
            due = self.pending.next_due()
            if self.config.due is not None:
                due = self.config.due if due is None else min(due, self.config.due)
            if self._rescan or (due is not None and due <= now):
                return self.pending.take(now), self._take_rescan(), False
            if self._idle_due:
                return plan.Batch(), {}, True
            timeout = HEALTH_CHECK if due is None else due - now
            if self._away:  # a folder put back is looked at soon, not at the next health check
                timeout = min(timeout, AWAY_CHECK)
            self._wake_at = now + timeout
            woken = self._cond.wait(timeout)
            self._wake_at = None
            if not woken and due is None:
                self._cond.release()  # watchdog's thread may be waiting for it to hand us events
                try:
                    if not self._stopping and self._eyes.revive(self.cfg, self.wants):
                        self._away.names.clear()  # every source is looked at whole
                        self.request_rescan(None, "observer restarted")
                    for name in self._away.back(self._eyes.roots, self.cfg, set(self.wants)):
                        self.request_rescan(name, "its folder is back")
                finally:
                    self._cond.acquire()

    def _take_rescan(self) -> dict[str, str]:
        rescan, self._rescan = self._rescan, {}
        return rescan

    def _process(self, indexer, batch: plan.Batch, rescan: dict[str, str]) -> bool:
        """Apply a batch, reconcile `rescan`; False if there was nothing but renames to hold."""
        started = time.perf_counter()
        report = SyncReport()
        # Events of a source removed from config.json may still be queued: they are not ours.
        plan.keep_sources(batch, self.wants)
        rescan = {name: why for name, why in rescan.items() if name in self.wants}
        self._away.hold(self._eyes.roots, self.cfg, batch, rescan, set(self.wants))
        if batch.rechecks and not self._stopping and self._eyes.missing_watch(self.cfg, batch.trees):
            log.info("re-watching the vault: watchdog missed a new folder")
            self._eyes.refresh(self.cfg, self.wants, self._stopping)
            # What the old observer still held (a rename waiting for its other half, events
            # not yet dispatched) went with it: look at everything once.
            rescan = {**{s.name: "re-watched" for s in self.cfg.sources}, **rescan}
        moves, held = self._pairing.hold_vanished(batch, indexer.index)
        with self._cond:
            self.pending.hold(held, time.monotonic() + self.debounce)
        if self._held.only(moves, held, batch, rescan):
            return False
        sources = list(dict.fromkeys(
            [m[0] for m in moves] + list(batch.paths) + list(batch.trees)
        ))
        for source in sources:
            if source in rescan:
                continue  # the whole source is about to be reconciled
            part, later = self._pairing.apply(
                indexer, source, (self.wants[source], self.enters[source]),
                [m for m in moves if m[0] == source],
                batch.paths.get(source, []), batch.trees.get(source, []), final=self._stopping,
                renaming=self._renaming,
            )
            self._requeue(source, part.retry)
            self._look_again(source, later)
            report.merge(part)
        for source, why in rescan.items():
            if not os.path.isdir(self.cfg.source(source).root):
                continue  # a folder gone (unmounted?) is looked at when it is back, as at start
            log.info("reconciling %s: %s", source, why)
            part = reporting.reconciled(indexer, source)
            self._requeue(source, part.retry)
            report.merge(part)
        report.seconds = time.perf_counter() - started
        self.batches += 1
        self.totals.merge(report)
        self.totals.seconds += report.seconds
        reporting.log_batch(report, batch.size() - len(held) + len(rescan))
        return True

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

    def reconcile_all(self, indexer: Indexer, why: str) -> None:
        reporting.reconcile_all(self.cfg, indexer, self._requeue, why)
