"""A real `memsync watch` runs its catch-up of an unwatched vault in a child process of its own
(memsync.watch.apart): the load's memory goes with the child, and a child that dies leaves the
start-up reconcile to index the vault."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from bench.watch_latency import CATCH_UP_PEAK
from memsync import sync

from .test_watch import converge, mark, put

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks where Linux does")


def children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out |= {int(c) for c in (task / "children").read_text().split()}
    return out


def test_the_catch_up_runs_in_a_child_whose_memory_goes_with_it(vault, watcher):
    live = {f"big/{i}.md": mark() for i in range(sync.PARALLEL_FROM + 20)}
    for rel, m in live.items():
        put(vault, rel, m)
    proc = watcher()
    log = proc.stderr()
    assert f"catch-up reconcile: {len(live)} files, +{len(live)} ~0 -0" in log
    found = re.search(r"the catch-up ran in a process of its own \((\d+)\), which peaked at (\d+) MB", log)
    assert found and int(found[1]) != proc.proc.pid and int(found[2]) > 0
    assert int(found[1]) not in children(proc.proc.pid)  # ended, and waited for
    assert CATCH_UP_PEAK.search(log)[1] == found[2]  # what bench/watch_latency.py reads
    assert f"start-up reconcile: {len(live)} files, +0 ~0 -0" in log
    converge(live)
    assert proc.stop() == 0


def test_a_catch_up_killed_midway_leaves_the_start_up_reconcile_to_index_the_vault(vault, watcher):
    live = {f"big/{i}.md": mark() for i in range(3000)}
    for rel, m in live.items():
        put(vault, rel, m, "filler words " * 400)  # a load that lasts a while
    proc = watcher(ready=False)
    deadline = time.monotonic() + 30
    killed = None
    while killed is None and time.monotonic() < deadline:  # the child, once it is reading
        if "catch-up reconcile" in proc.stderr():
            break  # ended before it could be killed
        for pid in children(proc.proc.pid):
            if children(pid):  # it has forked its readers: the load is under way
                os.kill(pid, signal.SIGKILL)
                killed = pid
                break
        time.sleep(0.005)
    assert killed is not None, proc.stderr()
    proc.wait_for("start-up reconcile: ")
    log = proc.stderr()
    assert "the catch-up's process ended with code -9" in log
    assert f"start-up reconcile: {len(live)} files, +{len(live)} ~0 -0" in log
    converge(live)
    assert proc.stop() == 0
