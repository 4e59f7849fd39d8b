"""The Watcher: what its owner and watchdog's threads call (start, stop, the waits, enqueue).

It composes the worker (memsync.watch.loop.WorkerLoop), which owns the index connection and the
state it works on, and hands it the pending queue and the condition that guards it; watchdog's
threads only ever hold that condition for a moment to record hints.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable

from memsync import session
from memsync.store.index import Index
from memsync.watch import plan
from memsync.write import vault

from ..config import Config
from ..model.indexing import RunningTotals
from . import apart, elders, lock
from .idle import IdleWork
from .lock import WatcherLocked, WatchLock
from .loop import WorkerLoop
from .observing import Observation, OverflowAlarm

log = logging.getLogger(__name__)


class Watcher:
    """Keeps the index of `cfg`'s sources live. start() returns once watching; stop() applies
    every pending change before it returns."""

    def __init__(self, cfg: Config, debounce: float = plan.QUIET, rescan_every: float = 600.0,
                 idle_work: Iterable[IdleWork] = ()):
        self._cond = threading.Condition()
        self.pending = plan.Pending(quiet=debounce, cap=max(plan.CAP, 10 * debounce))
        self._eyes = Observation(self)
        self._worker = WorkerLoop(cfg, self.pending, self._cond, self._eyes, debounce=debounce,
                                  rescan_every=rescan_every, idle_work=idle_work)
        self._thread: threading.Thread | None = None
        self._alarm = OverflowAlarm(self)
        self._lock = WatchLock(cfg.lock_file, str(cfg.vault.path))
        self._index_lock: WatchLock | None = None  # beside the index: taken in start()

    # What the worker owns, as its owner reads it.

    @property
    def cfg(self) -> Config:
        return self._worker.cfg

    @property
    def totals(self) -> RunningTotals:
        return self._worker.totals

    @property
    def batches(self) -> int:
        return self._worker.batches

    @property
    def idle_work(self) -> list[IdleWork]:  # register tasks here before start()
        return self._worker.idle_work

    @property
    def _wants(self) -> dict:
        return self._worker.wants

    @property
    def _observer(self):
        return self._eyes.observer

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this watcher was already started")
        self.cfg.ensure_vault()
        self._lock.acquire()
        try:
            self._lock_index()
            # Only now, holding the locks: a watcher refused them (an MCP server's, retrying every
            # few seconds beside `memsync watch`) reads nothing and says nothing of the sources.
            fresh = self._worker.config.reread(self.cfg)  # an MCP server's Config may be hours old
            if fresh is not None:
                self._worker.adopt(fresh)
            # A supersede whose process died between its two files is finished or rolled back by
            # the write side before we index either file.
            for step in vault.recover(self.cfg):
                log.warning("supersede of %s recovered: %s", step.get("old"), step.get("action"))
            self._end_upgrade_window()
            if threading.active_count() == 1:
                self._index_unwatched()
            # Observer first: whatever changes during the start-up reconcile is queued, not lost.
            logging.getLogger("watchdog").addHandler(self._alarm)
            self._eyes.start(self.cfg, self._wants)
            self._thread = threading.Thread(target=self._worker.run, name="memsync-watch", daemon=True)
            self._thread.start()
            self._worker.opened.wait()
            if self._worker.error is not None:
                raise self._worker.error
        except BaseException:
            self._teardown()
            raise

    def _lock_index(self) -> None:
        """Take the lock beside the index file, which every watcher of that file takes whatever
        its home; and make sure no watcher of an older memsync, which takes only its home's,
        has the file open (memsync.watch.elders)."""
        from memsync.store.migrations import MIGRATIONS

        db, schema = self.cfg.db.path, len(MIGRATIONS)
        self._index_lock = WatchLock(
            lock.index_lock_file(db), str(self.cfg.vault.path),
            record={"home": str(self.cfg.home.path), "index": str(db), "schema": schema},
            refusal=functools.partial(lock.index_refusal, db, schema))
        self._index_lock.acquire()
        older = elders.older_watchers(db)
        if older:
            raise WatcherLocked(elders.refusal(db, *older[0]))

    def _end_upgrade_window(self) -> None:
        """We hold the watcher lock: no watcher of an older schema is left to write the index,
        so what was kept for one goes (memsync.store.index.Index.end_upgrade_window)."""
        index = Index(self.cfg.db.path)
        try:
            index.end_upgrade_window()
        finally:
            index.close()

    def _index_unwatched(self) -> None:
        """Catch up before any thread exists, so the indexer may fork readers: a first start on
        a big vault then takes half the time. Whatever changes meanwhile is found by the start-up
        reconcile, which runs once the observer is watching and costs little after this. Where
        it can, in a child process (memsync.watch.apart): what the load held goes with it."""
        if not apart.forks():
            self._catch_up()
            return
        ended = apart.run_apart(self._catch_up)
        if ended.exitcode:
            log.warning("the catch-up's process ended with code %s; the start-up reconcile does "
                        "its work", ended.exitcode)
        else:
            log.info("the catch-up ran in a process of its own (%s), which peaked at %.0f MB",
                     ended.pid, ended.peak_mb)

    def _catch_up(self) -> None:
        index = Index(self.cfg.db.path, lean=True)
        try:
            self._worker.reconcile_all(session.indexer(self.cfg, index), "catch-up")
        except Exception:  # the start-up reconcile tries again, and keeps watching if it fails
            log.exception("the catch-up reconcile failed")
        finally:
            index.close()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._eyes.stop()
        self._worker.stop_soon()
        self._thread.join()
        self._thread = None
        for task in self.idle_work:  # background work with a thread of its own ends with us
            getattr(task, "close", lambda: None)()
        self._teardown()

    def _teardown(self) -> None:
        self._eyes.stop()
        logging.getLogger("watchdog").removeHandler(self._alarm)
        if self._index_lock is not None:
            self._index_lock.release()
        self._lock.release()

    def wait_started(self, timeout: float) -> bool:
        """True once the start-up reconcile is done: the index has caught up with the disk as it
        was at start (later changes may still be on their way, as always)."""
        return self._wait_for(lambda: self._worker.ready, timeout)

    def wait_idle(self, timeout: float) -> bool:
        """True once the start-up reconcile is done and nothing is pending or in progress
        (idle work aside: it is background work, not catching up)."""
        return self._wait_for(self._worker.caught_up, timeout)

    def _wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not condition():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._cond.wait(remaining)
            return True

    # --- called from watchdog's threads -------------------------------------------------------

    def enqueue(self, source: str, actions: list[plan.Action]) -> None:
        now = time.monotonic()
        with self._cond:
            for action in actions:
                self.pending.add(source, action, now)
                if action.op in ("tree", "move_tree"):
                    folder = action.dest if action.op == "move_tree" else action.path
                    self.pending.add_later(source, folder, now + plan.RECHECK)
            # Wake the worker only if this is due before the deadline it sleeps towards: during
            # a burst of thousands of events it then wakes once per quiet window, not per event.
            if self._worker.wakes_after(self.pending.next_due()):
                self._cond.notify_all()

    def config_touched(self) -> None:
        with self._cond:
            self._worker.config.touched(time.monotonic())
            self._cond.notify_all()

    def request_rescan(self, source: str | None, why: str = "requested") -> None:
        self._worker.request_rescan(source, why)
