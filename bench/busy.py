"""A rebuild on a machine busy with other programs: one busy loop per usable core, at normal
priority, runs beside the rebuild. Readers run at a lower priority than the writer
(memsync.reading.worker_start), so they get less of the cores than on a quiet machine, and a
parallel rebuild that waited for them could end up slower than one that reads every file in its
writer (memsync.readers). Both are timed, alternating, under the same load."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from statistics import median

from memsync import cores

SPIN = "while True: pass"


@contextmanager
def busy_loops(count: int) -> Iterator[list[subprocess.Popen]]:
    """`count` processes that keep a core each busy until the block ends (and are reaped then)."""
    loops = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]
    try:
        yield loops
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


def measure(rebuild: Callable[[str], dict], rounds: int) -> dict:
    """Medians of `rounds` alternating rebuilds with one reader and with every usable core's,
    each run by `rebuild(workers)` (bench.perf_rebuild.rebuild_once), under one busy loop a core."""
    loops = cores.usable()
    one, parallel = [], []
    with busy_loops(loops):
        for _ in range(rounds):
            one.append(rebuild("1")["seconds"])
            parallel.append(rebuild("auto")["seconds"])
    return {"loops": loops, "rounds": rounds, "seconds": median(parallel),
            "one_reader_seconds": median(one), "speedup": median(one) / median(parallel)}
