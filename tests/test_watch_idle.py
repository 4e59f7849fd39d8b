"""The watcher's idle-work seam: low-priority work runs on the worker thread when no event is
pending, sees what the last batch indexed, rests when it says it is done, and never blocks events.
"""

from __future__ import annotations

import threading
import time

from memsync import config
from memsync.store.index import Index

from .watching import DEADLINE, converge, mark, put


class Recorder:
    """An idle task that notes the cards it can see, and asks for `slices` calls per batch."""

    def __init__(self, slices: int = 1, fail: bool = False):
        self.slices, self.fail = slices, fail
        self.seen: list[set[str]] = []
        self.threads: set[str] = set()
        self.left = slices
        self.called = threading.Event()

    def __call__(self, index: Index) -> bool:
        self.threads.add(threading.current_thread().name)
        self.seen.append({row["path"] for row in index.cards()})
        self.called.set()
        if self.fail:
            raise RuntimeError("an idle task that fails")
        self.left -= 1
        if self.left <= 0:
            self.left = self.slices
            return False
        return True


def wait_until(condition, timeout: float = DEADLINE) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_idle_work_runs_after_each_batch_and_rests_in_between(vault):
    from memsync.watch import Watcher

    task, broken = Recorder(slices=3), Recorder(fail=True)
    w = Watcher(config.load(), idle_work=[task, broken])
    w.start()
    try:
        assert w.wait_idle(DEADLINE)
        assert wait_until(lambda: len(task.seen) >= 3)  # after the start-up reconcile
        calls = len(task.seen)
        time.sleep(0.3)
        assert len(task.seen) == calls  # it said it was done: not called again without a batch
        m = mark()
        put(vault, "i.md", m)
        converge({"i.md": m})
        assert wait_until(lambda: "i.md" in task.seen[-1])  # it sees what the batch indexed
        assert w.wait_idle(DEADLINE)
        # A failing task is logged and rests until the next batch (one call per batch at most);
        # it does not stop the others or the watcher.
        assert 2 <= len(broken.seen) <= 1 + w.batches
        m2 = mark()
        put(vault, "j.md", m2)
        converge({"i.md": m, "j.md": m2})
    finally:
        w.stop()
    assert task.threads == {"memsync-watch"}


def test_events_are_indexed_while_idle_work_never_finishes(vault):
    from memsync.watch import Watcher

    endless = Recorder(slices=10**9)  # always has more to do
    w = Watcher(config.load(), idle_work=[endless])
    w.start()
    try:
        assert w.wait_idle(DEADLINE)
        live = {}
        for i in range(5):
            live[f"e{i}.md"] = mark()
            put(vault, f"e{i}.md", live[f"e{i}.md"])
        converge(live)
        assert w.wait_idle(DEADLINE)  # idle work is background: not "busy"
    finally:
        w.stop()
    assert len(endless.seen) > 5
