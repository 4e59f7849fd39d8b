"""One watcher per data home and per index file: the lock files that say which process it is.

A watcher takes two: `<home>/watch.lock`, and `<index>.watch-lock` beside the index file it
writes, which every watcher of that file takes whatever its home (two homes whose config.json
name the same index, or --db / MEMSYNC_DB). A watcher of a memsync from before the second one
takes only the first: memsync.watch.elders finds it, where the system lets it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import dates
from ..errors import BadEnvironment


class WatcherLocked(BadEnvironment):
    code = "watcher_locked"

    def __init__(self, message: str, holder: str | None = None):
        super().__init__(message)
        # who holds the lock, without the advice to stop it: for a caller that waits for the
        # holder instead (the MCP server's own watcher, memsync.mcp.live)
        self.holder = holder or message


# What a lock file's record holds. A later memsync that finds watchers another way must go on
# taking these files too, so that a watcher of this one still sees it.
FORMAT = 1
INDEX_LOCK_TAIL = ".watch-lock"


def index_lock_file(db: Path) -> Path:
    """The lock beside an index file, which every watcher of that file takes."""
    return db.with_name(db.name + INDEX_LOCK_TAIL)


def aside_of(path: Path) -> Path:
    """Where a watcher writes its record before it links it into place at `path`: named after
    its process and thread, so that a watcher killed meanwhile leaves a file `memsync doctor`
    knows as its own (ASIDE_NAME) and removes once that process is gone."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")


# aside_of's names, for either lock (`watch.lock` in the home, `<index>.watch-lock` beside the
# index); the group is the writer's pid.
ASIDE_NAME = re.compile(rf"^\.(?:watch\.lock|.+{re.escape(INDEX_LOCK_TAIL)})\.(\d+)\.\d+$")


class WatchLock:
    """A lock file (`<home>/watch.lock`, or the one beside the index): JSON naming the holder,
    held with flock for as long as it lives (a memsync.lockfile).

    The kernel drops the flock when the holder dies, even by kill -9, so a lock file whose flock
    can be taken is stale whatever pid it names (pids get reused). The file appears complete in
    one step (written aside, then hard-linked into place), so readers never see it half written.
    """

    def __init__(self, path: Path, vault: str, record: dict | None = None,
                 refusal: Callable[[dict], str] | None = None):
        self.path = path
        self.vault = vault
        self.record = record or {}  # what more the file says of its holder
        self.refusal = refusal  # the holder's record -> why we may not start
        self._fd: int | None = None
        self._ino = 0

    def acquire(self) -> None:
        from .. import lockfile  # here: a search that asks whether a watcher runs takes no lock

        record = {"pid": os.getpid(), "vault": self.vault, "since": dates.now_iso(),
                  "format": FORMAT, **self.record}
        aside = aside_of(self.path)
        fd = lockfile.opened(aside, new=True)
        try:
            lockfile.record(fd, json.dumps(record))
            held = lockfile.try_hold(fd)
            assert held, aside  # a brand-new file: nobody else can hold it
            for _attempt in range(5):
                try:
                    os.link(aside, self.path)
                    break
                except FileExistsError:
                    if self._take_over(aside):
                        break
            else:
                raise self._held()
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
            with probe_stale(self.path) as stale:
                if not stale:
                    return False
                pid = _read_json(self.path).get("pid", "?")
                os.replace(aside, self.path)
        except LockHeld:
            raise self._held() from None
        import logging  # here: a search that only asks whether a watcher runs has no use for it

        # named by its file: a watcher holds two (its home's and its index's), and two lines
        # saying the same read as one event logged twice
        logging.getLogger(__name__).warning("took over a stale watcher lock, %s (pid %s is gone)", self.path, pid)
        return True

    def _held(self) -> WatcherLocked:
        holder = _read_json(self.path)
        if self.refusal is not None:
            return WatcherLocked(self.refusal(holder))
        pid = holder.get("pid", "unknown")
        since = f", since {holder['since']}" if holder.get("since") else ""
        who = (f"another memsync watcher (pid {pid}{since}) already watches "
               f"{holder.get('vault', self.vault)} for this data home")
        return WatcherLocked(f"{who}; stop it first (kill {pid}) or use another --home", who)

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            if os.stat(self.path).st_ino == self._ino:
                os.unlink(self.path)
        os.close(self._fd)
        self._fd = None


class LockHeld(Exception):
    """A live watcher holds the lock file."""


@contextlib.contextmanager
def probe_stale(path: Path) -> Iterator[bool]:
    """Take the flock of the lock file now at `path`, to replace or remove it while nobody else
    can. Yields True while it is held, if it is still the file at `path` (False if the file went
    or was replaced meanwhile: look again). Raises LockHeld if a live watcher holds it."""
    from .. import lockfile

    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield False
        return
    try:
        if not lockfile.try_hold(fd):
            raise LockHeld(str(path))
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        yield same
    finally:
        os.close(fd)


def remove_stale(path: Path) -> bool:
    """Remove the lock file if nobody holds it; False if a watcher holds it or it is gone."""
    try:
        with probe_stale(path) as stale:
            if stale:
                os.unlink(path)
            return stale
    except (LockHeld, FileNotFoundError):
        return False


def status(path: Path) -> dict:
    """Whether a watcher holds the lock file at `path`: {"live": True, pid, vault, since}, or
    {"live": False} with the `stale_pid` a dead holder left. The holder keeps an flock on the
    file, which the kernel drops when it dies, so a lock we can take is stale whatever its pid
    says."""
    holder = {}
    try:
        with open(path, "rb") as handle:
            holder = json.loads(handle.read() or b"{}")
            if not isinstance(holder, dict):
                holder = {}
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                live = {"live": True, "pid": holder.get("pid"), "vault": holder.get("vault"),
                        "since": holder.get("since")}
                return {**live, "home": holder["home"]} if holder.get("home") else live
    except (OSError, ValueError):
        return {"live": False}
    return {"live": False, "stale_pid": holder.get("pid")}


def watching(cfg) -> dict:
    """status() of the watcher that keeps `cfg`'s index live: this home's, or else one of another
    home writing the same index file (it holds the lock beside it, and says its home)."""
    found = status(cfg.lock_file)
    if found["live"]:
        return found
    beside = status(index_lock_file(cfg.db.path))
    return beside if beside["live"] else found


def index_refusal(index: Path, schema: int, holder: dict) -> str:
    """Why a watcher may not start while `holder` (its lock's record) writes `index`."""
    pid = holder.get("pid", "unknown")
    said = [f"pid {pid}", f"home {holder.get('home', 'unknown')}"]
    if holder.get("since"):
        said.append(f"since {holder['since']}")
    theirs = holder.get("schema")
    if isinstance(theirs, int) and theirs != schema:
        age = "an older" if theirs < schema else "a newer"
        said.append(f"{age} memsync, index schema {theirs} against this one's {schema}")
    return (f"another memsync watcher ({', '.join(said)}) already writes the index {index}, and "
            f"two watchers would both write it; stop that one first (kill {pid}), or give this "
            "home an index of its own (--db, MEMSYNC_DB or \"db\" in config.json)")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
