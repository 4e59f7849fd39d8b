"""Embedding in the background of a watcher, at the lowest priority, pausing while saves arrive.

The watcher calls idle work only when no event is pending, one short slice at a time (the seam
in memsync.watch.loop). Each slice here is a heartbeat, not the work: the embedding runs on a
thread of its own (nice 19, one model thread, its own index connection), which goes on only
while the heartbeats keep coming. When saves arrive the watcher stops calling, the beats stop,
and the thread pauses after the model call in hand; lexical indexing never waits for a model.
With nothing left to embed the thread ends and the model's memory goes with it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable

from memsync.store.connection import failure_kind

from . import SemanticUnavailable, available, store
from .encoder import MODEL, Encoder, PassageEncoder
from .worker import embed_pending

log = logging.getLogger(__name__)

SLICE = 0.02  # seconds one heartbeat holds the watcher's worker thread (events wait that long)
PAUSE_AFTER = 0.25  # no heartbeat for this long: the watcher is busy, pause
LINGER = 30.0  # paused this long (the watcher busy or gone): end the thread
STEP = 2  # cards per model call: how long a pause can take to come into effect
CLOSE_WAIT = 2.0  # seconds close() waits for the card being embedded


def idle_work(cfg) -> list:
    """The watcher's background tasks for this config: embedding, where the extra is installed."""
    return [BackgroundEmbedder(cfg.db.path, cfg.semantic)] if available() else []


class BackgroundEmbedder:
    """An IdleWork task (memsync.watch.idle): called with the worker's Index, returns whether
    more remains."""

    def __init__(self, db_path, enabled: bool, encoder_factory: Callable[[], PassageEncoder] = Encoder):
        self.db_path, self.enabled, self._factory = db_path, enabled, encoder_factory
        self._cond = threading.Condition()
        self._beat = 0.0
        self._thread: threading.Thread | None = None
        self._closed = False
        self._running = False  # a run is on: its thread has not said it ended
        self._more = True  # call again: a run is on, or one just ended without failing
        self._full = False  # a full disk was said: not again (its traceback each batch) until a run passes
        self._unloadable = False  # the model cannot load: said once, not tried again each batch
        self.totals = {"embedded": 0, "reused": 0, "passages": 0, "seconds": 0.0}

    def __call__(self, index) -> bool:
        with self._cond:
            if self._closed:
                return False
            if not self._running:
                # Asked here, on the watcher's connection, which has every save it applied: a
                # run that ended has counted what was pending before the last of them, maybe.
                if not self._wanted(index):
                    return False
                self._running = self._more = True
                self._thread = threading.Thread(target=self._run, name="memsync-embed", daemon=True)
                self._thread.start()
            self._beat = time.monotonic()
            self._cond.notify_all()
            self._cond.wait(SLICE)  # the loop calls again at once: this keeps it from spinning
            return self._more

    def follow(self, cfg) -> None:
        """config.json changed while watching (memsync.watch.loop): take up its "semantic"."""
        self.enabled = cfg.semantic

    def close(self) -> None:
        """Stop: the card being embedded is waited for CLOSE_WAIT at most. One model call takes a
        whole card, a minute for a very long one, and a stopping watcher or server must not wait
        that long; the card stays pending (its vectors are written in one transaction) and is
        embedded at the next start."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(CLOSE_WAIT)
            if thread.is_alive():
                log.info("background embedding stops with the process; the card it was on stays pending")

    def _wanted(self, index) -> bool:
        """Semantic search is on in config.json, or the index already has vectors (someone ran
        `index --embed`): then cards lacking a vector for their content get one."""
        if self._unloadable or (not self.enabled and not store.any_vectors(index)):
            return False
        return bool(store.pending(index, MODEL, 1))

    def _beating(self) -> bool:
        return not self._closed and time.monotonic() - self._beat < PAUSE_AFTER

    def _run(self) -> None:
        more = False
        try:
            more = self._embed()
        finally:
            with self._cond:
                # Ended: the next call starts another run if the index has a card pending then.
                # Its thread's word that nothing was left is not taken: a save applied after its
                # last count, and called about before it was gone, would wait for the next save.
                self._running, self._more = False, more
                self._cond.notify_all()

    def _embed(self) -> bool:
        """The run: embed while the heartbeats come; False when it failed (the task then rests
        until the next batch, rather than fail again at once)."""
        from memsync.store.index import Index

        with contextlib.suppress(OSError):  # lowest priority, for this thread only
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        index = Index(self.db_path)
        try:
            encoder = self._factory()
            while not self._closed:
                if not self._wait_for_beat():
                    break
                if index.replaced():
                    # A damaged index set aside and built anew, or the file moved away: what this
                    # thread wrote there no search would read. The watcher's worker reopens the
                    # path and reads every source into it (memsync.watch.loop), and its next call
                    # starts a run on that file (_wanted). Going on here embedded every card left
                    # in the old file, held open till then, while the new one's waited for a save.
                    log.info("background embedding: the index file was replaced; it starts again "
                             "on the new one")
                    break
                report = embed_pending(index, encoder, limit=STEP, pause=lambda: not self._beating())
                self._count(index, report)
                if report["pending"] == 0:
                    break
            self._full = False
            return True
        except SemanticUnavailable as exc:  # reinstalling is the fix; the watcher's restart retries
            self._unloadable = True
            log.error("background embedding is off until the watcher restarts: %s; searches go by "
                      "words meanwhile", exc.message)
        except Exception as exc:
            if failure_kind(exc) != "full":
                log.exception("background embedding stopped; `memsync index --embed` does it by hand")
            elif not self._full:  # each batch would start it again, to fail again
                self._full = True
                log.error("background embedding: %s — free space on the disk of %s; it tries again "
                          "after the next batch", exc, self.db_path)
        finally:
            index.close()
        return False

    def _wait_for_beat(self) -> bool:
        deadline = time.monotonic() + LINGER
        with self._cond:
            while not self._beating():
                if self._closed or time.monotonic() > deadline:
                    return False
                self._cond.wait(PAUSE_AFTER)
        return True

    def _count(self, index, report: dict) -> None:
        for key in ("embedded", "reused", "passages", "seconds"):
            self.totals[key] += report[key]
        if self.totals["embedded"] >= 8:  # a rate for stats' ETA, once there is one to speak of
            rate = self.totals["embedded"] / max(self.totals["seconds"], 1e-6)
            with index.transaction():
                store.record_rate(index, rate)
