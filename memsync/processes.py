"""Whether a process still runs, by its pid: how what a killed process left behind (a temp file,
a journal entry, a hand-over folder) is told from what a live one is still using. Pure (standard
library only)."""

from __future__ import annotations

import os


def running(pid: int) -> bool:
    """Whether a process with this pid exists (this one always does). Another user's counts as
    running: it cannot be signalled, and its files are not ours to remove."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # no signal is sent: only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
