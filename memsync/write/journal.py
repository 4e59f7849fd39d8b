"""A small write-ahead journal for the writes that touch two names or files (supersede, a run of
consolidate, a move into or out of the trash).

Before the first file changes, the plan is written to `<home>/journal/<op>.json` and fsynced;
after the last one it is removed. While its writer lives, the journal's `.lock` file is held
with flock, so another process never mistakes a supersede in progress for a dead one; the
kernel releases the lock when the writer dies, however it dies. The next write command (or
the watcher at start) then finds the journal unlocked and finishes or rolls back the work.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from memsync import private, processes
from memsync.write import atomic

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: fall back to the writer's pid
    fcntl = None  # type: ignore[assignment]


STALE_LOCK_SECONDS = 60


def folder(home: Path) -> Path:
    return Path(home) / "journal"


def writing(home: Path):
    """The one lock every write that reads a card and writes it back holds (update, supersede,
    delete, restore, purge, recovery), from reading the file to syncing the index. A second
    writer then reads what the first one left, instead of writing back a copy from before it.
    New cards need no lock: they are linked into place, never overwritten."""
    return exclusive(home, "write")


@contextlib.contextmanager
def exclusive(home: Path, name: str):
    """Hold a home-wide lock named `name` (blocking). Not `*.lock`, so replay ignores it.

    Each call opens the lock file anew: flock belongs to the open file, so two threads of one
    process (the MCP SDK runs tools in threads) exclude each other as two processes do."""
    where = folder(home)
    private.mkdir(where)
    fd = os.open(where / f"{name}.mutex", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


class Entry:
    """One operation's journal, locked by this process until finish()."""

    def __init__(self, home: Path, data: dict):
        self.dir = folder(home)
        private.mkdir(self.dir)
        op = f"{data.get('op', 'op')}-{uuid.uuid4().hex[:16]}"
        self.path = self.dir / f"{op}.json"
        self.lock_path = self.dir / f"{op}.lock"
        self.lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        self.data = {**data, "pid": os.getpid()}
        self._save()

    def update(self, **changes) -> None:
        self.data.update(changes)
        self._save()

    def _save(self) -> None:
        payload = json.dumps(self.data, ensure_ascii=False, indent=1).encode("utf-8")
        with atomic.Staged(self.dir, payload, private.FILE_MODE) as staged:
            staged.replace(self.path)

    def release(self) -> None:
        """Give up the lock but keep the plan: the next recovery will deal with it."""
        os.close(self.lock_fd)

    def finish(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        _release(self.lock_fd, self.lock_path)


def _release(fd: int, lock_path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(lock_path)
    os.close(fd)


def _owner_gone(fd: int, path: Path) -> bool:
    if fcntl:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    try:  # pragma: no cover
        pid = json.loads(path.read_text(encoding="utf-8"))["pid"]
    except (OSError, ValueError, KeyError):
        return True
    return not processes.running(int(pid))


def _young(path: Path) -> bool:
    """A lock file just created may not be locked yet: leave it to its writer for a while."""
    try:
        return time.time() - path.stat().st_mtime < STALE_LOCK_SECONDS
    except OSError:
        return True


def replay(home: Path, handle: Callable[[dict], bool]) -> int:
    """Call `handle` for each journal whose writer is gone; drop the journals it handled
    (it returns False for plans that are not its business). Returns how many were handled.

    `handle` must be idempotent: two processes may both see the same orphan."""
    where = folder(home)
    if not where.is_dir():
        return 0
    done = 0
    for path in sorted(where.glob("*.json")):
        lock_path = path.with_suffix(".lock")
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            continue
        handled = False
        try:
            if not _owner_gone(fd, path):
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:  # someone else replayed it first
                handled = True
                continue
            except ValueError:
                continue  # unreadable (plans are written atomically): leave it for a person
            if not handle(data):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            handled = True
            done += 1
        finally:
            if handled:
                _release(fd, lock_path)
            else:
                os.close(fd)
    for lock_path in where.glob("*.lock"):  # locks whose writer died before writing a plan
        if lock_path.with_suffix(".json").exists() or _young(lock_path):
            continue
        with contextlib.suppress(OSError):
            fd = os.open(lock_path, os.O_RDWR)
            if _owner_gone(fd, lock_path):
                _release(fd, lock_path)
            else:
                os.close(fd)
    return done


def orphans(home: Path) -> list[tuple[Path, dict | None]]:
    """The plans whose writer is gone, as (path, plan), plan None when it cannot be read.
    Read-only (for `memsync doctor`): nothing is created, replayed or removed."""
    where = folder(home)
    found: list[tuple[Path, dict | None]] = []
    for path in sorted(where.glob("*.json")) if where.is_dir() else ():
        try:
            fd = os.open(path.with_suffix(".lock"), os.O_RDWR)
        except FileNotFoundError:
            fd = None  # its writer died before it could lock, or the lock went with a recovery
        except OSError:
            continue
        try:
            if fd is not None and not _owner_gone(fd, path):
                continue
        finally:
            if fd is not None:
                os.close(fd)
        try:
            plan = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            plan = None
        found.append((path, plan if isinstance(plan, dict) else None))
    return found
