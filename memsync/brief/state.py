"""When each agent last had a brief for each project: `brief.json` in the data home (0600).

Keyed by the agent (the hook's client, `mcp`, or `cli`) and the project's folder, so Claude Code
and Codex working in one repository each hear what changed since their own last brief. Losing
the file only means the next brief has no "changed since" section; it is written whole, through
a temp file renamed into place, so a reader never sees half of it. Briefs asked for at
once (an MCP server's threads, two agents' hooks) take turns to change it under a lock file
(LOCK_NAME), so none loses another's mark.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from memsync import private

FILE_NAME = "brief.json"
LOCK_NAME = ".brief.lock"
KEEP = 500  # marks kept, the oldest dropped past it


def key(agent: str, project_root: str | None, project_name: str) -> str:
    return f"{agent}:{project_root or 'name:' + project_name}"


def _read(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    marks = data.get("last_brief") if isinstance(data, dict) else None
    return {k: v for k, v in marks.items() if isinstance(v, str)} if isinstance(marks, dict) else {}


def last(home: Path, mark: str) -> str | None:
    return _read(home / FILE_NAME).get(mark)


def record(home: Path, mark: str, when: str) -> None:
    path = home / FILE_NAME
    private.mkdir(home)
    with _turn(home):
        marks = _read(path)
        marks.pop(mark, None)
        marks[mark] = when  # the newest last: the oldest go first past KEEP
        marks = dict(list(marks.items())[-KEEP:])
        temp = home / f".{FILE_NAME}.{os.getpid()}.tmp"  # one writer at a time: under _turn
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, private.FILE_MODE)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"last_brief": marks}, handle, ensure_ascii=False, indent=1)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise


# flock excludes other processes, and other threads only where each opens the file itself; the
# thread lock makes the turns within one process plain.
_THREADS = threading.Lock()


@contextlib.contextmanager
def _turn(home: Path) -> Iterator[None]:
    """This thread's turn to read and write brief.json."""
    with _THREADS:
        fd = os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT, private.FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # drops the flock
