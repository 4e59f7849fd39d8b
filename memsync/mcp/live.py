"""What keeps an MCP server's view of the vault current: the in-process watcher, started once the
handshake is over, and the configuration as config.json says now. No SDK import here: the stdio
and the HTTP transports share these, one of each per server process."""

from __future__ import annotations

import logging
import threading

from memsync import config
from memsync.config import Config
from memsync.errors import Damaged, MemsyncError

log = logging.getLogger("memsync.mcp")


class LiveIndex:
    """Runs the watcher in this process once the handshake is over, so the index stays live with
    no separate daemon. When another process's watcher holds the lock, that one keeps the index
    live; we retry now and then, to take over if it goes away."""

    # Seconds between attempts while another watcher holds the lock: how stale the index can get
    # after that watcher stops. An attempt is one failed flock, so it can be frequent.
    RETRY_LOCKED = 5.0
    SETTLE = 600.0  # longest wait for the start-up reconcile before `ready` is set anyway

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.ready = threading.Event()  # the start-up pass is done (or is another process's job)
        self._stopping = threading.Event()
        self._guard = threading.RLock()  # re-entered when a signal lands while start() holds it
        self._thread: threading.Thread | None = None
        self._watcher = None

    @property
    def building(self) -> bool:
        """The start-up reconcile is running now: only then may a search say the index is
        still being built (before the first call starts it, the index is as complete as the
        last run left it)."""
        return self._thread is not None and not self.ready.is_set()

    @property
    def starting(self) -> bool:
        """This server's watcher is on its way: not started yet (the first call after the
        handshake starts it) or started and not yet holding the lock. A stats call made now
        would otherwise say no watcher keeps the index live, which is about to be wrong."""
        return not self._stopping.is_set() and not self.ready.is_set() and self._watcher is None

    def start(self) -> None:
        with self._guard:
            if self._thread is not None or self._stopping.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="memsync-live-index", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        from memsync.semantic.background import idle_work
        from memsync.watch import Watcher, WatcherLocked  # watchdog loads only here

        damaged = False
        try:
            while not self._stopping.is_set():
                watcher = Watcher(self.cfg, idle_work=idle_work(self.cfg))
                try:
                    watcher.start()
                except WatcherLocked as err:
                    if not self.ready.is_set():  # not its advice to stop that one: it serves us
                        log.info("%s, which keeps the index live; this server takes over if it "
                                 "stops (looked at every %gs)", err.holder, self.RETRY_LOCKED)
                    self.ready.set()
                    self._stopping.wait(self.RETRY_LOCKED)
                    continue
                except Damaged as err:  # repaired by this server's memory_reindex, say: then watch
                    if not damaged:
                        log.warning("live indexing waits for the index to be repaired: %s (or "
                                    "the memory_reindex tool with rebuild=true)", err.message)
                    damaged = True
                    self.ready.set()
                    self._stopping.wait(self.RETRY_LOCKED)
                    continue
                with self._guard:
                    self._watcher = watcher
                if self._stopping.is_set():  # stop() ran while we were starting: undo
                    self._stop_watcher()
                    return
                log.info("watching %s", self.cfg.vault.path)
                # Ready once the start-up pass is done, not when idle: with writes coming in,
                # idle may never be reached, and "still being built" would then be false.
                watcher.wait_started(self.SETTLE)
                return
        except MemsyncError as err:
            log.warning("live indexing is off: %s", err.message)
        except Exception:
            log.exception("live indexing failed; searches use the index as it is")
        finally:
            self.ready.set()

    def _stop_watcher(self) -> None:
        with self._guard:
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()  # applies what is pending, then releases the lock

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._stop_watcher()
        if self._thread is not None:
            self._thread.join(timeout)
        self._stop_watcher()


class StartAfterHandshake:
    """Middleware: kick off live indexing once any message other than `initialize` arrives, so the
    initialize reply never waits behind a vault scan."""

    def __init__(self, live: LiveIndex):
        self.live = live

    async def __call__(self, ctx, call_next):
        result = await call_next(ctx)
        if ctx.method != "initialize":
            self.live.start()
        return result


class CurrentConfig:
    """The configuration as config.json says now: a source added or removed with `memsync
    sources` while the server runs counts from the next tool call. A config.json that does not
    load keeps the last good one (the error is logged)."""

    def __init__(self, cfg: Config):
        self._cfg = cfg
        self._stamp = config.file_signature(cfg.config_file)
        self._lock = threading.Lock()
        self.problem: str | None = None  # why the current config.json is not the one in use

    def __call__(self) -> Config:
        stamp = config.file_signature(self._cfg.config_file)
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    try:
                        self._cfg = config.reload(self._cfg)
                        self.problem = None
                    except MemsyncError as err:
                        self.problem = (f"{err.message} (the server keeps using the settings it "
                                        "read before; fix the file and they apply at the next call)")
                        log.warning("config.json changed but does not load: %s", self.problem)
                    self._stamp = stamp
        return self._cfg
