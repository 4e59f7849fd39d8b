"""A real `memsync watch` runs its catch-up of an unwatched vault in a child process of its own
(memsync.watch.apart; that it does: tests/test_watch_process.py): a child that dies leaves the start-up
reconcile to index the vault."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from .watching import converge, mark, put

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks where Linux does")


def children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out |= {int(c) for c in (task / "children").read_text().split()}
    return out


def big_vault(vault: Path) -> dict[str, str]:
    """Notes enough for a catch-up that lasts a second or more: time to find its process."""
    live = {f"big/{i}.md": mark() for i in range(3000)}
    for rel, m in live.items():
        put(vault, rel, m, "filler words " * 400)
    return live


def loading_child(proc) -> int:
    """The pid of the watcher's catch-up process, once it has run for a moment (whether it
    reads in readers of its own or, on one core, itself) and before it has ended."""
    deadline = time.monotonic() + 30
    while not (found := children(proc.proc.pid)):
        assert time.monotonic() < deadline and proc.proc.poll() is None, proc.stderr()
        time.sleep(0.005)
    time.sleep(0.2)
    assert "catch-up reconcile" not in proc.stderr(), "ended before it could be caught"
    return found.pop()


def test_a_catch_up_killed_midway_leaves_the_start_up_reconcile_to_index_the_vault(vault, watcher):
    live = big_vault(vault)
    proc = watcher(ready=False)
    os.kill(loading_child(proc), signal.SIGKILL)
    proc.wait_for("start-up reconcile: ")
    log = proc.stderr()
    assert "the catch-up's process ended with code -9" in log
    assert f"start-up reconcile: {len(live)} files, +{len(live)} ~0 -0" in log
    converge(live)
    assert proc.stop() == 0


def gone(pid: int) -> bool:
    try:  # ended: reaped, or a zombie its new parent has yet to reap
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_catch_up_ends_with_its_watcher(vault, watcher):
    big_vault(vault)
    proc = watcher(ready=False)
    child = loading_child(proc)
    proc.proc.kill()  # SIGKILL: nothing of the watcher's own runs
    proc.proc.wait()
    deadline = time.monotonic() + 60
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gone(child)
    # Killed with the watcher, not left to finish its load (its stderr is the watcher's log,
    # where a load that ran to its end would say so) with no watcher to follow it.
    assert "catch-up reconcile" not in proc.stderr()
