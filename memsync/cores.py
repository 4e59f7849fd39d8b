"""How many cores this process may use: what a rebuild or an embedding that someone waits for
spreads over. Pure (standard library only)."""

from __future__ import annotations

import os


def usable() -> int:
    """The cores this process may run on: its affinity mask where the platform has one (a
    container or `taskset` may allow fewer than the machine has), else every core."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def from_environment() -> int | None:
    """The thread count OMP_NUM_THREADS asks for, or None when it is unset or not a count. A
    list ("4,2", nested levels) asks for its first number, as OpenMP reads it."""
    first = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return int(first) if first.isdigit() and int(first) > 0 else None
