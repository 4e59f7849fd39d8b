"""The watchdog side of the watcher: the observer, its handlers, and its health checks.

Handlers run on watchdog's threads and only record hints (the watcher's `enqueue`,
`config_touched`, `request_rescan`); they never touch the disk or the index. What the observer
cannot vouch for (an overflow, a dead thread, a folder watched under the wrong path) is reported
back so the watcher reconciles it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
import warnings
from pathlib import Path
from typing import Protocol

from watchdog.events import (
    DirAttribEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEventHandler,
)

from memsync.watch import plan

from ..config import Config
from ..errors import BadEnvironment, MemsyncError
from ..exclusions import APP_JSON
from .roots import Roots

log = logging.getLogger(__name__)

# No Opened / ClosedNoWrite: our own reads would feed the watcher forever. No DirModified: it
# says nothing the other events do not say too. Attrib: a card or a folder made readable again
# (chmod) is reported by nothing else; our reads never cause one (atime updates are not
# reported).
EVENT_FILTER = [
    FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
    FileAttribEvent, DirCreatedEvent, DirDeletedEvent, DirMovedEvent, DirAttribEvent,
]
# config.json is written by `memsync sources` (a rename into place) or by an editor (in steps).
CONFIG_EVENTS = [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent,
                 FileClosedEvent]
# watchdog holds each unpaired rename-away this long hoping for its other half, and every event
# queued behind it waits too; paired halves arrive together, so a short wait is enough.
MOVE_PAIRING = 0.1


class Sink(Protocol):
    """What the handlers report to (the Watcher)."""

    def enqueue(self, source: str, actions: list[plan.Action]) -> None: ...
    def config_touched(self) -> None: ...
    def request_rescan(self, source: str | None, why: str = ...) -> None: ...


class _Handler(FileSystemEventHandler):
    """Runs on watchdog's dispatcher thread: turn the event into actions, record them, return."""

    def __init__(self, sink: Sink, source: str, root: str, wants):
        super().__init__()
        self.sink, self.source, self.root, self.wants = sink, source, root, wants
        # Obsidian's settings file, and its folder (made, removed or renamed as a whole)
        self.app_json = (os.path.join(root, *APP_JSON), os.path.join(root, APP_JSON[0]))

    def dispatch(self, event) -> None:
        if {event.src_path, getattr(event, "dest_path", "")} & set(self.app_json):
            # Obsidian's Excluded files changed: which files are cards may have changed anywhere.
            # The reconcile reads the filters again (memsync.exclusions) and drops or brings back
            # the cards they now cover.
            self.sink.request_rescan(self.source, "Obsidian's excluded files changed")
            return
        try:
            actions = plan.actions(event, self.root, self.wants)
        except Exception:  # never let a surprise kill watchdog's thread: fall back to a rescan
            log.exception("could not interpret %r; rescanning %s", event, self.source)
            self.sink.request_rescan(self.source)
            return
        if log.isEnabledFor(logging.DEBUG):
            log.debug("event %s %s %s -> %s", event.event_type, event.src_path,
                      getattr(event, "dest_path", ""), actions)
        if actions:
            self.sink.enqueue(self.source, actions)


class _ConfigHandler(FileSystemEventHandler):
    """Watches the data home (not recursively) for its config.json being written or replaced."""

    def __init__(self, sink: Sink, config_file: Path):
        super().__init__()
        self.sink, self.name = sink, config_file.name

    def dispatch(self, event) -> None:
        # The index's own files live here too: their writes are seen and ignored.
        ends = (event.src_path, getattr(event, "dest_path", "") or "")
        if any(os.path.basename(os.fsdecode(end)) == self.name for end in ends):
            self.sink.config_touched()


class OverflowAlarm(logging.Handler):
    """watchdog reports a lost-events overflow only as a log record: turn it into a rescan."""

    def __init__(self, sink: Sink):
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.sink.request_rescan(None, "inotify queue overflowed; events were lost")


class Observation:
    """The one live observer of a watcher, replaced whole when it cannot be trusted."""

    def __init__(self, sink: Sink):
        self.sink = sink
        self.observer = None
        self._lock = threading.Lock()  # guards swapping `observer`
        self.roots = Roots()  # each source's folder as the live observer watches it

    def start(self, cfg: Config, wants: dict) -> None:
        self.roots.record(cfg)
        self.observer = self._new(cfg, wants)

    def _new(self, cfg: Config, wants: dict):
        from watchdog.observers import Observer

        with contextlib.suppress(ImportError):
            from watchdog.observers.inotify_move_event_grouper import InotifyMoveEventGrouper

            InotifyMoveEventGrouper.delay = MOVE_PAIRING
        # A new folder's walk can register a callback twice; watchdog says so on stderr. Harmless.
        warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
        observer = Observer()
        for source in cfg.sources:
            root = os.path.abspath(source.root)
            if not os.path.isdir(root):
                log.warning("source %s: %s is not a folder; not watching it", source.name, root)
                continue
            handler = _Handler(self.sink, source.name, root, wants[source.name])
            observer.schedule(handler, root, recursive=True, event_filter=EVENT_FILTER)
        home = cfg.config_file.parent
        if home.is_dir():
            observer.schedule(_ConfigHandler(self.sink, cfg.config_file), str(home),
                              recursive=False, event_filter=CONFIG_EVENTS)
        try:
            observer.start()
        except OSError as exc:
            with contextlib.suppress(RuntimeError):
                observer.stop()
            raise BadEnvironment(
                f"cannot watch {cfg.vault.path}: {exc}; if the inotify watch limit is "
                "reached, raise fs.inotify.max_user_watches (sysctl) or watch a smaller vault"
            ) from None
        return observer

    def stop(self) -> None:
        with self._lock:
            observer, self.observer = self.observer, None
        _halt(observer)

    def refresh(self, cfg: Config, wants: dict, stopping: bool) -> None:
        """Watch every folder afresh after folders appeared or moved.

        watchdog can miss putting a watch on a folder created inside a new folder that is
        renamed at once (it looks for the child under the old name), and then reports nothing
        from it ever after. A new observer walks the tree as it is now; it starts before the
        old one stops, so no event falls between them (some arrive twice, which is harmless).
        The caller reconciles afterwards what happened unwatched or was still in the old
        observer's hands.
        """
        self.roots.record(cfg)  # before the new watches: a move after it is seen as one
        try:
            fresh = self._new(cfg, wants)
        except MemsyncError as exc:
            log.error("%s", exc.message)
            return
        with self._lock:
            old, self.observer = self.observer, fresh
            if stopping:
                old, self.observer = fresh, old
        _halt(old)

    def missing_watch(self, cfg: Config, trees: dict[str, list[str]]) -> bool:
        """Whether a folder below `trees` (per source) has no inotify watch, or a watch is filed
        under a folder it does not watch.

        Both happen when a folder is created, renamed and created again under its old name
        faster than watchdog reads the events: it watches the second folder while handling the
        first one's creation, files that watch under the new name with the rename, and gets the
        same watch back for the second creation, so the renamed folder has none and its files
        are never reported (or reported under the wrong path). This reads watchdog 7's private
        bookkeeping (path <-> watch) and, where the kernel shows it, which inode each watch is
        on; if that bookkeeping ever changes, we assume the worst and re-watch.
        """
        observer = self.observer
        if observer is None:
            return False
        try:
            watched = set()
            for emitter in list(observer.emitters):
                group = emitter._inotify
                if group is None:
                    continue
                by_path = dict(group._active_callbacks_by_path)
                by_watch = dict(group._active_callbacks_by_watch)
                if any(by_watch.get(wd) != path for path, wd in by_path.items()):
                    return True
                inodes = kernel_watches(group._inotify_fd._inotify_fd)
                for wd, path in by_watch.items():
                    if by_path.get(path) != wd or not _watches(path, inodes.get(wd, -1), inodes):
                        return True
                watched.update(os.fsdecode(p) for p in by_path)
        except AttributeError:
            return True
        for source, folders in trees.items():
            root = cfg.source(source).root
            for tree in folders:
                start = os.path.join(root, *tree.split("/")) if tree else root
                for dirpath, dirs, _files in os.walk(start):
                    dirs[:] = [d for d in dirs if not d.startswith(".")]  # not ours to index
                    if dirpath not in watched:
                        return True
        return False

    def revive(self, cfg: Config, wants: dict) -> bool:
        """A dead observer means unseen changes: start a new one (then rescan everything). So
        does another folder at a source's place (memsync.watch.roots); a folder merely gone is waited
        for (WorkerLoop)."""
        replaced = self.roots.replaced(cfg)
        if replaced:
            log.warning("the folder of %s is not the one watched; watching afresh and rescanning",
                        ", ".join(sorted(replaced)))
        elif self.dead():
            log.warning("the file-system observer stopped; restarting it and rescanning")
        else:
            return False
        self.refresh(cfg, wants, False)
        return True

    def dead(self) -> bool:
        """Whether a thread of the observer stopped: changes are going unseen."""
        observer = self.observer
        if observer is None:
            return False
        # An emitter stops by itself when its folder is deleted or unmounted; the inotify reader
        # thread (private in watchdog 7) dies on any exception in its callbacks.
        reader = getattr(observer, "_inotify_fd", None)
        threads = [observer, *observer.emitters, *([reader] if reader is not None else [])]
        return not all(thread.is_alive() for thread in threads)


def _halt(observer) -> None:
    if observer is not None:
        observer.stop()
        with contextlib.suppress(RuntimeError):
            observer.join(timeout=5)


def kernel_watches(fd: int) -> dict[int, int]:
    """watch descriptor -> inode of every watch of an inotify fd, as the kernel lists them in
    /proc (empty where it does not)."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return {}
    found = {}
    for line in lines:
        if line.startswith("inotify "):  # "inotify wd:1f ino:23dfbd ...": both in hex
            fields = dict(item.split(":", 1) for item in line.split()[1:] if ":" in item)
            try:
                found[int(fields["wd"], 16)] = int(fields["ino"], 16)
            except (KeyError, ValueError):
                continue
    return found


def _watches(path: bytes, inode: int, inodes: dict[int, int]) -> bool:
    """Whether the folder at `path` is the one its watch is on (only that it is a folder, when
    the kernel lists no inodes)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and (not inodes or st.st_ino == inode)
