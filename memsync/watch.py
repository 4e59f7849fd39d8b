"""The live watcher: the one module that talks to watchdog.

    watchdog events --plan.actions--> Pending (per-path coalescing) --worker thread--> Indexer

The watchdog handler only records hints; a single worker thread owns the index connection, takes
whatever is due, and lets the indexer decide from the disk at that moment. Anything the event
stream cannot vouch for (an inotify overflow, a dead observer, a new or vanished folder) becomes a
reconcile of the affected subtree. One watcher per data home, enforced by a lock file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
import warnings
from dataclasses import replace
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEventHandler,
)

from . import api, config, dates, plan, private, vault
from .config import Config
from .errors import BadEnvironment, MemsyncError
from .index import Index
from .model import SyncReport
from .sources import drop_unconfigured
from .sync import Indexer, storable

log = logging.getLogger("memsync.watch")

# No Opened / ClosedNoWrite: our own reads would feed the watcher forever. No Attrib or
# DirModified: they say nothing about content that the other events do not say too.
EVENT_FILTER = [
    FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
]
# config.json is written by `memsync sources` (a rename into place) or by an editor (in steps).
CONFIG_EVENTS = [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent,
                 FileClosedEvent]
CONFIG_QUIET = 0.2  # re-read config.json once it has been left alone this long
# watchdog holds each unpaired rename-away this long hoping for its other half, and every event
# queued behind it waits too; paired halves arrive together, so a short wait is enough.
MOVE_PAIRING = 0.1
# Idle wake-up to notice a dead observer, and to look at config.json's signature in case no
# event said it changed (the data home's watch normally does, at once). Each wake-up shows in
# idle CPU (measured: 5 s doubled it), so it is as rare as config.RELOAD_WITHIN allows.
HEALTH_CHECK = config.RELOAD_WITHIN
STOP_GRACE = 5.0  # how long stop() waits for files still being written
PAIR_WINDOW = 2.0  # how long a new file's content is remembered to pair it with a late deletion


class WatcherLocked(BadEnvironment):
    code = "watcher_locked"


# --- the lock ---------------------------------------------------------------------------------


class WatchLock:
    """`<home>/watch.lock`: JSON naming the holder, held with flock for as long as it lives.

    The kernel drops the flock when the holder dies, even by kill -9, so a lock file whose flock
    can be taken is stale whatever pid it names (pids get reused). The file appears complete in
    one step (written aside, then hard-linked into place), so readers never see it half written.
    """

    def __init__(self, path: Path, vault: str):
        self.path = path
        self.vault = vault
        self._fd: int | None = None
        self._ino = 0

    def acquire(self) -> None:
        private.mkdir(self.path.parent)
        record = {"pid": os.getpid(), "vault": self.vault, "since": dates.now_iso()}
        aside = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        fd = os.open(aside, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        try:
            os.write(fd, json.dumps(record).encode())
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a brand-new file: cannot be held
            for _attempt in range(5):
                try:
                    os.link(aside, self.path)
                    break
                except FileExistsError:
                    if self._take_over(aside):
                        break
            else:
                raise WatcherLocked(self._held_message())
        except BaseException:
            os.close(fd)
            raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(aside)
        self._fd, self._ino = fd, os.fstat(fd).st_ino

    def _take_over(self, aside: Path) -> bool:
        """Replace a lock nobody holds. False if the file changed under us: try again."""
        try:
            old = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            try:
                fcntl.flock(old, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise WatcherLocked(self._held_message()) from None
            try:
                if os.stat(self.path).st_ino != os.fstat(old).st_ino:
                    return False
            except FileNotFoundError:
                return False
            stale = _read_json(self.path).get("pid", "?")
            os.replace(aside, self.path)
            log.warning("took over a stale watcher lock (pid %s is gone)", stale)
            return True
        finally:
            os.close(old)

    def _held_message(self) -> str:
        holder = _read_json(self.path)
        pid = holder.get("pid", "unknown")
        since = f", since {holder['since']}" if holder.get("since") else ""
        return (
            f"another memsync watcher (pid {pid}{since}) already watches {holder.get('vault', self.vault)} "
            f"for this data home; stop it first (kill {pid}) or use another --home"
        )

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            if os.stat(self.path).st_ino == self._ino:
                os.unlink(self.path)
        os.close(self._fd)
        self._fd = None


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# --- watchdog glue ----------------------------------------------------------------------------


class _Handler(FileSystemEventHandler):
    """Runs on watchdog's dispatcher thread: turn the event into actions, record them, return."""

    def __init__(self, watcher: Watcher, source: str, root: str, wants):
        super().__init__()
        self.watcher, self.source, self.root, self.wants = watcher, source, root, wants

    def dispatch(self, event) -> None:
        try:
            actions = plan.actions(event, self.root, self.wants)
        except Exception:  # never let a surprise kill watchdog's thread: fall back to a rescan
            log.exception("could not interpret %r; rescanning %s", event, self.source)
            self.watcher.request_rescan(self.source)
            return
        if log.isEnabledFor(logging.DEBUG):
            log.debug("event %s %s %s -> %s", event.event_type, event.src_path,
                      getattr(event, "dest_path", ""), actions)
        if actions:
            self.watcher.enqueue(self.source, actions)


class _ConfigHandler(FileSystemEventHandler):
    """Watches the data home (not recursively) for its config.json being written or replaced."""

    def __init__(self, watcher: Watcher, config_file: Path):
        super().__init__()
        self.watcher, self.name = watcher, config_file.name

    def dispatch(self, event) -> None:
        # The index's own files live here too: their writes are seen and ignored.
        ends = (event.src_path, getattr(event, "dest_path", "") or "")
        if any(os.path.basename(os.fsdecode(end)) == self.name for end in ends):
            self.watcher.config_touched()


class _OverflowAlarm(logging.Handler):
    """watchdog reports a lost-events overflow only as a log record: turn it into a rescan."""

    def __init__(self, watcher: Watcher):
        super().__init__(logging.WARNING)
        self.watcher = watcher

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.watcher.request_rescan(None, "inotify queue overflowed; events were lost")


# --- the watcher ------------------------------------------------------------------------------


class Watcher:
    """Keeps the index of `cfg`'s sources live. start() returns once watching; stop() applies
    every pending change before it returns."""

    def __init__(self, cfg: Config, debounce: float = plan.QUIET, rescan_every: float = 600.0):
        self.cfg = cfg
        self.debounce = debounce
        self.rescan_every = rescan_every  # safety net for what no event reported
        self.pending = plan.Pending(quiet=debounce, cap=max(plan.CAP, 10 * debounce))
        self.totals = SyncReport()
        self.batches = 0
        self._cond = threading.Condition()
        self._rescan: dict[str, str] = {}  # source -> why
        self._stopping = False
        self._busy = False
        self._wake_at: float | None = None  # when the sleeping worker will wake by itself
        self._ready = False  # the start-up reconcile is done
        self._opened = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._observer = None
        self._observer_lock = threading.Lock()
        self._alarm = _OverflowAlarm(self)
        self._arrived: dict[tuple[str, str], tuple[str, float]] = {}  # (source, hash) -> path, when
        self._held: dict[tuple[str, str], float] = {}  # deletions waiting for a second look
        self._hashes: dict[tuple[str, str], tuple[str, float]] = {}  # renamed: (hash, when)
        self._wants = _wants_by_source(cfg)
        self._config_sig: tuple | None = None  # config.json's stat signature when last read
        self._config_checked = 0.0  # when that signature was last compared
        self._config_due: float | None = None  # when to re-read config.json (an event said so)
        self._lock = WatchLock(cfg.lock_file, str(cfg.vault.path))

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this watcher was already started")
        fresh = self._reread_config()  # an MCP server's Config may be hours old
        if fresh is not None:
            self._adopt(fresh)
        self.cfg.ensure_vault()
        self._lock.acquire()
        try:
            # A supersede whose process died between its two files is finished or rolled back by
            # the write side before we index either file.
            for step in vault.recover(self.cfg):
                log.warning("supersede of %s recovered: %s", step.get("old"), step.get("action"))
            if threading.active_count() == 1:
                self._index_unwatched()
            # Observer first: whatever changes during the start-up reconcile is queued, not lost.
            logging.getLogger("watchdog").addHandler(self._alarm)
            self._observer = self._start_observer()
            self._thread = threading.Thread(target=self._run, name="memsync-watch", daemon=True)
            self._thread.start()
            self._opened.wait()
            if self._error is not None:
                raise self._error
        except BaseException:
            self._teardown()
            raise

    def _index_unwatched(self) -> None:
        """Catch up before any thread exists, so the indexer may fork readers: a first start on
        a big vault then takes half the time. Whatever changes meanwhile is found by the start-up
        reconcile, which runs once the observer is watching and costs little after this."""
        index = Index(self.cfg.db.path)
        try:
            self._reconcile_all(api.indexer(self.cfg, index), "catch-up")
        except Exception:  # the start-up reconcile tries again, and keeps watching if it fails
            log.exception("the catch-up reconcile failed")
        finally:
            index.close()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop_observer()
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join()
        self._thread = None
        self._teardown()

    def _teardown(self) -> None:
        self._stop_observer()
        logging.getLogger("watchdog").removeHandler(self._alarm)
        self._lock.release()

    def wait_started(self, timeout: float) -> bool:
        """True once the start-up reconcile is done: the index has caught up with the disk as it
        was at start (later changes may still be on their way, as always)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._ready:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._cond.wait(remaining)
            return True

    def wait_idle(self, timeout: float) -> bool:
        """True once the start-up reconcile is done and nothing is pending or in progress."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._idle():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._cond.wait(remaining)
            return True

    def _idle(self) -> bool:
        return (self._ready and not self._busy and not self.pending and not self._rescan
                and self._config_due is None)

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
            due = self.pending.next_due()
            if self._wake_at is None or (due is not None and due < self._wake_at):
                self._cond.notify_all()

    def config_touched(self) -> None:
        with self._cond:
            self._config_due = time.monotonic() + CONFIG_QUIET
            self._cond.notify_all()

    def request_rescan(self, source: str | None, why: str = "requested") -> None:
        with self._cond:
            for name in [source] if source else [s.name for s in self.cfg.sources]:
                self._rescan.setdefault(name, why)
            self._cond.notify_all()

    # --- the observer -------------------------------------------------------------------------

    def _start_observer(self):
        from watchdog.observers import Observer

        with contextlib.suppress(ImportError):
            from watchdog.observers.inotify_move_event_grouper import InotifyMoveEventGrouper

            InotifyMoveEventGrouper.delay = MOVE_PAIRING
        # A new folder's walk can register a callback twice; watchdog says so on stderr. Harmless.
        warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
        observer = Observer()
        for source in self.cfg.sources:
            root = os.path.abspath(source.root)
            if not os.path.isdir(root):
                log.warning("source %s: %s is not a folder; not watching it", source.name, root)
                continue
            handler = _Handler(self, source.name, root, self._wants[source.name])
            observer.schedule(handler, root, recursive=True, event_filter=EVENT_FILTER)
        home = self.cfg.config_file.parent
        if home.is_dir():
            observer.schedule(_ConfigHandler(self, self.cfg.config_file), str(home),
                              recursive=False, event_filter=CONFIG_EVENTS)
        try:
            observer.start()
        except OSError as exc:
            with contextlib.suppress(RuntimeError):
                observer.stop()
            raise BadEnvironment(
                f"cannot watch {self.cfg.vault.path}: {exc}; if the inotify watch limit is "
                "reached, raise fs.inotify.max_user_watches (sysctl) or watch a smaller vault"
            ) from None
        return observer

    def _stop_observer(self) -> None:
        with self._observer_lock:
            observer, self._observer = self._observer, None
        _halt(observer)

    def _refresh_observer(self) -> None:
        """Watch every folder afresh after folders appeared or moved.

        watchdog can miss putting a watch on a folder created inside a new folder that is
        renamed at once (it looks for the child under the old name), and then reports nothing
        from it ever after. A new observer walks the tree as it is now; it starts before the
        old one stops, so no event falls between them (some arrive twice, which is harmless).
        The caller reconciles afterwards what happened unwatched or was still in the old
        observer's hands.
        """
        try:
            fresh = self._start_observer()
        except MemsyncError as exc:
            log.error("%s", exc.message)
            return
        with self._observer_lock:
            old, self._observer = self._observer, fresh
            if self._stopping:
                old, self._observer = fresh, old
        _halt(old)

    def _watch_missing(self, batch: plan.Batch) -> bool:
        """Whether a folder below the ones being looked at again has no inotify watch, or a
        watch is filed under a folder that is not there.

        The second happens when a folder is created, renamed and created again under its old
        name faster than watchdog reads the events: it then files the new folder's watches
        under the renamed one's path and reports its files under that wrong path for good.
        This reads watchdog 7's private bookkeeping (path <-> watch); if that ever changes, we
        assume the worst and re-watch.
        """
        observer = self._observer
        if observer is None:
            return False
        try:
            watched = set()
            for emitter in list(observer.emitters):
                by_path = emitter._inotify._active_callbacks_by_path
                by_watch = emitter._inotify._active_callbacks_by_watch
                for wd, path in list(by_watch.items()):
                    if by_path.get(path) != wd or not os.path.isdir(path):
                        return True
                watched.update(os.fsdecode(p) for p in by_path)
        except AttributeError:
            return True
        for source, trees in batch.trees.items():
            root = self.cfg.source(source).root
            for tree in trees:
                start = os.path.join(root, *tree.split("/")) if tree else root
                for dirpath, dirs, _files in os.walk(start):
                    dirs[:] = [d for d in dirs if not d.startswith(".")]  # not ours to index
                    if dirpath not in watched:
                        return True
        return False

    def _check_observer(self) -> None:
        """A dead observer means unseen changes: start a new one, then rescan everything."""
        observer = self._observer
        if observer is None or self._stopping:
            return
        # An emitter stops by itself when its folder is deleted or unmounted; the inotify reader
        # thread (private in watchdog 7) dies on any exception in its callbacks.
        reader = getattr(observer, "_inotify_fd", None)
        threads = [observer, *observer.emitters, *([reader] if reader is not None else [])]
        if all(thread.is_alive() for thread in threads):
            return
        log.warning("the file-system observer stopped; restarting it and rescanning")
        self._refresh_observer()
        self.request_rescan(None, "observer restarted")

    # --- following config.json ----------------------------------------------------------------

    def _reread_config(self) -> Config | None:
        """Our Config with the sources config.json names now; None if they are the same (or the
        file cannot be read: then we go on as we are, and say so)."""
        self._config_sig = config.file_signature(self.cfg.config_file)
        try:
            fresh = config.reload(self.cfg)
        except MemsyncError as exc:
            log.error("%s; still watching the sources it named before", exc.message)
            return None
        if (fresh.vault.path, fresh.db.path) != (self.cfg.vault.path, self.cfg.db.path):
            log.warning("config.json names another vault or index now: restart the watcher to "
                        "use them; it goes on with %s", self.cfg.vault.path)
        # Sources that overlap are left out against the vault we go on with, not a new one.
        ours = replace(self.cfg, listed_sources=fresh.listed_sources)
        for left_out in ours.ignored_sources:
            log.warning("%s", ours.ignored_problem(left_out))
        if ours.extra_sources == self.cfg.extra_sources:
            return None
        return ours

    def _adopt(self, cfg: Config) -> None:
        self.cfg, self._wants = cfg, _wants_by_source(cfg)

    def _follow_config(self, indexer: Indexer) -> tuple[Indexer, list[str]]:
        """Take up the sources config.json names now: watch them, forget the cards of those that
        went (or changed folder or adapter), and say which to read afresh. Returns the indexer
        to go on with and the sources to reconcile."""
        fresh = self._reread_config()
        if fresh is None:
            return indexer, []
        before = {s.name: s for s in self.cfg.sources}
        after = {s.name: s for s in fresh.sources}
        gone = [name for name, source in before.items() if after.get(name) != source]
        new = [name for name, source in after.items() if before.get(name) != source]
        indexer = Indexer(indexer.index, fresh.sources)
        try:
            for name in gone:
                indexer.drop_source(name)
        except Exception:
            self._config_sig = None  # nothing taken up yet: try again at the next wake-up
            raise
        self._adopt(fresh)
        for memory in (self._arrived, self._held, self._hashes):
            for key in [k for k in memory if k[0] in gone]:
                del memory[key]
        log.warning("config.json changed: watching %s (new: %s; dropped: %s)",
                    ", ".join(after), ", ".join(new) or "none", ", ".join(gone) or "none")
        if self._stopping:
            return indexer, new
        self._refresh_observer()
        # What the old observer still held went with it: look at every source once.
        return indexer, list(after)

    # --- the worker thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            index = Index(self.cfg.db.path)
            indexer = api.indexer(self.cfg, index)
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
                batch, rescan = self._next(last_full)
                if batch is None:
                    break
                self._busy = True
                reread = self._config_due is not None and self._config_due <= time.monotonic()
                if reread:
                    self._config_due = None
            try:
                if reread:
                    indexer, fresh = self._follow_config(indexer)
                    rescan = {**dict.fromkeys(fresh, "sources changed"), **rescan}
                if rescan:
                    last_full = time.monotonic()
                if batch or rescan:
                    self._process(indexer, batch, rescan)
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
            if config.file_signature(self.cfg.config_file) != self._config_sig:
                indexer, _fresh = self._follow_config(indexer)
            self._reconcile_all(indexer, "final")
        except Exception:
            log.exception("the final reconcile failed; `memsync index` will catch up")

    def _next(self, last_full: float):
        """Wait (holding the condition) until something is due; (None, None) means stop."""
        while True:
            now = time.monotonic()
            if self._stopping:
                if not self.pending and not self._rescan:
                    return None, None
                return self.pending.take(now, everything=True), self._take_rescan()
            if now - last_full >= self.rescan_every:
                self._rescan.update({s.name: "periodic check" for s in self.cfg.sources})
            if now - self._config_checked >= HEALTH_CHECK:  # in case no event said it changed
                self._config_checked = now
                if config.file_signature(self.cfg.config_file) != self._config_sig:
                    self._config_due = self._config_due or now
            due = self.pending.next_due()
            if self._config_due is not None:
                due = self._config_due if due is None else min(due, self._config_due)
            if self._rescan or (due is not None and due <= now):
                return self.pending.take(now), self._take_rescan()
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

    def _take_rescan(self) -> dict[str, str]:
        rescan, self._rescan = self._rescan, {}
        return rescan

    def _process(self, indexer, batch: plan.Batch, rescan: dict[str, str]) -> None:
        started = time.perf_counter()
        report = SyncReport()
        # Events of a source removed from config.json may still be queued: they are not ours.
        _keep_sources(batch, self._wants)
        rescan = {name: why for name, why in rescan.items() if name in self._wants}
        if batch.rechecks and not self._stopping and self._watch_missing(batch):
            log.info("re-watching the vault: watchdog missed a new folder")
            self._refresh_observer()
            # What the old observer still held (a rename waiting for its other half, events
            # not yet dispatched) went with it: look at everything once.
            rescan = {**{s.name: "re-watched" for s in self.cfg.sources}, **rescan}
        moves = self._hold_vanished(batch)
        sources = list(dict.fromkeys(
            [m[0] for m in moves] + list(batch.paths) + list(batch.trees)
        ))
        for source in sources:
            if source in rescan:
                continue  # the whole source is about to be reconciled
            part = self._apply(
                indexer, source, [m for m in moves if m[0] == source],
                batch.paths.get(source, []), batch.trees.get(source, []),
            )
            self._requeue(source, part.retry)
            report.merge(part)
        for source, why in rescan.items():
            log.info("reconciling %s: %s", source, why)
            part = indexer.reconcile(source)
            self._requeue(source, part.retry)
            report.merge(part)
        report.seconds = time.perf_counter() - started
        self._account(report, batch.size() + len(rescan))

    def _apply(self, indexer, source: str, moves: list, paths: list[str], trees: list[str]):
        """One source's share of a batch, as one indexer batch: renames re-keyed in order, then
        every path touched, every file found in a folder that appeared, and every indexed file
        of a folder that changed or vanished.

        watchdog cannot always pair the two halves of a rename (the target folder was too new to
        be watched yet, or the source folder was): the card then seems to vanish in one place
        and appear in another, in either order. New files are remembered by content hash for a
        short while, and a card whose file vanished is dropped only on a second look, one quiet
        window later; whichever comes second is turned into a rename, so the card keeps its id
        and read stats.
        """
        index = indexer.index
        report = SyncReport()
        pairs, moved_trees = plan.expand_moves(moves, lambda: set(index.file_states(source)))
        if pairs:
            self._carry_hashes(index, source, pairs)
            report.merge(indexer.move_many(source, pairs, paths=()))
            self._follow_arrivals(source, pairs)
        candidates = dict.fromkeys([*(p for pair in pairs for p in pair), *paths])
        wants = self._wants[source]
        for tree in plan.outermost([*moved_trees, *trees]):
            candidates.update(dict.fromkeys(index.file_states(source, tree or None)))
            candidates.update(dict.fromkeys(_walk(self.cfg.source(source).root, tree, wants)))
        states = {p: index.file_state(source, p) for p in candidates if storable(p)}
        vanished = {
            p: state[1] or self._hashes.get((source, p), ("", 0))[0]
            for p, state in states.items()
            if state is not None and not os.path.lexists(self._full(source, p))
        }
        renames = self._pair_with_arrivals(source, vanished)
        to_sync = self._hold_deletions(source, list(candidates), vanished, {a for a, _ in renames})
        to_sync += [b for _a, b in renames if b not in to_sync]
        if renames or to_sync:
            report.merge(indexer.move_many(source, renames, paths=to_sync))
        for path in to_sync:
            if path in states and states[path] is None:
                state = index.file_state(source, path)
                if state is not None:
                    self._remember_arrival(source, path, state)
        return report

    def _carry_hashes(self, index, source: str, pairs: list[tuple[str, str]]) -> None:
        """Remember each renamed file's content hash at its new path: the index forgets it on a
        rename (the card is re-read), and a file that is gone again cannot be re-read."""
        now = time.monotonic()
        known: dict[str, str] = {}
        for src, dst in pairs:
            content = known.pop(src, None)
            if content is None:
                content = self._hashes.get((source, src), ("", 0))[0]
                state = index.file_state(source, src) if storable(src) else None
                content = (state[1] if state else "") or content
            if content:
                known[dst] = content
        for path, content in known.items():
            self._hashes[(source, path)] = (content, now)

    def _follow_arrivals(self, source: str, pairs: list[tuple[str, str]]) -> None:
        """A remembered new file that was renamed on is remembered at its new path."""
        where = {path: key for key, (path, _when) in self._arrived.items() if key[0] == source}
        for src, dst in pairs:
            key = where.pop(src, None)
            if key is not None:
                self._arrived[key] = (dst, self._arrived[key][1])
                where[dst] = key

    def _remember_arrival(self, source: str, path: str, state: tuple) -> None:
        self._arrived[(source, state[1])] = (path, time.monotonic())

    def _hold_deletions(self, source, candidates, vanished, renamed) -> list[str]:
        """The candidates to sync now: a card whose file vanished is kept one quiet window more
        (unless we are stopping), in case its content shows up elsewhere meanwhile."""
        now = time.monotonic()
        to_sync = []
        for path in candidates:
            key = (source, path)
            if path in renamed:
                self._held.pop(key, None)
                to_sync.append(path)
                continue
            if path in vanished and not self._stopping and key not in self._held:
                self._held[key] = now
                with self._cond:
                    self.pending.add_path(source, path, now)
                continue
            self._held.pop(key, None)
            to_sync.append(path)
        for key, when in list(self._held.items()):
            if now - when > PAIR_WINDOW:  # it came back, or was taken care of by a reconcile
                del self._held[key]
        return to_sync

    def _pair_with_arrivals(self, source: str, candidates: dict) -> list[tuple[str, str]]:
        """(gone, arrived) for each vanished path (-> its content hash) whose content arrived
        elsewhere moments ago."""
        now = time.monotonic()
        for key, (_path, when) in list(self._arrived.items()):
            if now - when > PAIR_WINDOW:
                del self._arrived[key]
        for key, (_hash, when) in list(self._hashes.items()):
            if now - when > 2 * PAIR_WINDOW:
                del self._hashes[key]
        pairs = []
        for path, content in candidates.items():
            if not content:
                continue
            arrived = self._arrived.pop((source, content), None)
            if arrived and arrived[0] != path and os.path.lexists(self._full(source, arrived[0])):
                pairs.append((path, arrived[0]))
        return pairs

    def _hold_vanished(self, batch: plan.Batch) -> list:
        """Renames to apply now. A rename whose target is already gone again, with no later
        rename in hand that moved it on, was followed by a rename or a delete still on its way:
        hold it (and every later rename, to keep their order) briefly, so a chain a->b->c is
        applied whole and the card keeps its id."""
        now = time.monotonic()
        moves = batch.moves
        for i, (source, _src, dst, _tree, seen) in enumerate(moves):
            if now - seen >= plan.HOLD or os.path.lexists(self._full(source, dst)):
                continue
            if any(m[0] == source and plan.covered(dst, [m[1]]) for m in moves[i + 1:]):
                continue  # the chain goes on within this batch
            held = moves[i:]
            with self._cond:
                self.pending.hold(held, now + self.debounce)
            for source_, src_, dst_, tree_, _seen in held:
                if not tree_ and source_ in batch.paths:
                    ends = {src_, dst_}
                    batch.paths[source_] = [p for p in batch.paths[source_] if p not in ends]
            return moves[:i]
        return moves

    def _full(self, source: str, rel: str) -> str:
        return os.path.join(self.cfg.source(source).root, *rel.split("/"))

    def _requeue(self, source: str, paths: list[str]) -> None:
        if not paths:
            return
        now = time.monotonic()
        with self._cond:
            for path in paths:
                self.pending.add_path(source, path, now)

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
        log.info(
            "%s reconcile: %d files, +%d ~%d -%d, %d read, in %.0f ms", why, report.scanned,
            report.added, report.updated, report.removed, report.hashed, report.seconds * 1000,
        )
        self._warn_problems(report)

    def _account(self, report: SyncReport, items: int) -> None:
        self.batches += 1
        self.totals.merge(report)
        self.totals.seconds += report.seconds
        log.info(
            "batch: %d items, %d paths looked at -> +%d ~%d -%d moved %d, in %.1f ms",
            items, report.scanned, report.added, report.updated, report.removed, report.moved,
            report.seconds * 1000,
        )
        self._warn_problems(report)

    @staticmethod
    def _warn_problems(report: SyncReport, limit: int = 20) -> None:
        problems = [p for p in report.problems if p["path"] not in set(report.retry)]
        for problem in problems[:limit]:
            log.warning("%s: %s", problem["path"], problem["message"])
        if len(problems) > limit:
            log.warning("... and %d more problems (see `memsync stats`)", len(problems) - limit)


def _halt(observer) -> None:
    if observer is not None:
        observer.stop()
        with contextlib.suppress(RuntimeError):
            observer.join(timeout=5)


def _walk(root: str, folder: str, wants) -> list[str]:
    """Card paths on disk below `folder` (relative to `root`), skipping dot-folders."""
    start = os.path.join(root, *folder.split("/")) if folder else root
    found = []
    for dirpath, dirnames, filenames in os.walk(start):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        found += [prefix + name for name in filenames if wants(prefix + name)]
    return found


def _keep_sources(batch: plan.Batch, names) -> None:
    batch.moves = [move for move in batch.moves if move[0] in names]
    for per_source in (batch.paths, batch.trees):
        for name in [n for n in per_source if n not in names]:
            del per_source[name]


def _wants_by_source(cfg: Config) -> dict:
    import memsync.adapters as adapters

    return {s.name: adapters.get(s.adapter).wants for s in cfg.sources}
