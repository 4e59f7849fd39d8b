"""The worker pool (memsync.workerpool): its workers hand results over in files, so a kill
never leaves it waiting on half a message; closing it ends the workers a failed pool left; and
work shared out whole (every_result, a big survey's) gives every result or none, and never hangs
either. The readers' flight over it is in test_readers.py."""

from __future__ import annotations

import functools
import multiprocessing
import os
import pickle
import select
import signal
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from memsync import processes, reading, workerpool
from memsync.reading import Look

CHUNK = [("a.md", None), ("b.md", None)]


def held(folder: str) -> None:
    """A job that names its worker in `folder` and then holds it (a minute at most)."""
    Path(folder, str(os.getpid())).touch()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)


def test_closing_a_pool_whose_manager_failed_ends_the_workers_it_left(tmp_path, monkeypatch):
    # A future cancelled while the pool still holds it makes the pool's manager thread fail once
    # a worker dies (Python 3.11), and the other worker is left running: the interpreter would
    # join it at exit for ever. Closing the pool ends it.
    failed: list = []
    monkeypatch.setattr(threading, "excepthook", failed.append)
    holding = tmp_path / "holding"
    holding.mkdir()
    shared = workerpool.Pool(2)
    pids: set[int] = set()
    try:
        futures = [shared.submit(held, str(holding)) for _ in range(8)]
        deadline = time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            pids = {int(entry.name) for entry in holding.iterdir()}
            time.sleep(0.01)
        assert len(pids) == 2, "the two workers never both began a job"
        assert futures[-1].cancel()  # still in the pool's own table: no worker has it
        killed, left = sorted(pids)
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while not failed and time.monotonic() < deadline:
            time.sleep(0.05)
        assert failed and failed[0].exc_type.__name__ == "InvalidStateError"  # the manager failed
        assert processes.running(left)
        shared.close()
        assert not processes.running(left)
        assert not Path(shared.folder).exists()
    finally:  # whatever close left, so that this test process can end
        for child in multiprocessing.active_children():
            if child.pid in pids:
                child.terminate()
                child.join()


@pytest.mark.parametrize("method", multiprocessing.get_all_start_methods())
def test_a_pool_knows_its_workers_however_they_were_started(method):
    shared = workerpool.Pool(1, method=method)
    try:
        pid = workerpool.received(shared.submit(os.getpid).result(timeout=60))
        assert [worker.pid for worker in shared.running_workers()] == [pid]
    finally:
        shared.close()
    assert shared.running_workers() == [] and not processes.running(pid)


def test_a_reader_sends_back_only_a_file_name_and_the_looks_come_from_the_file(tmp_path):
    # A message longer than the pipe takes in one write can be cut in half by a kill, and the
    # pool then waits for its rest for ever; a file name is never that long.
    looks = [Look(f"{i}.md", "absent") for i in range(500)]
    folder = tmp_path / "hand-over"
    folder.mkdir()
    name = workerpool._hand_over(str(folder), lambda chunk: [reading.packed(look) for look in looks], CHUNK)
    assert len(pickle.dumps(name)) < select.PIPE_BUF
    assert [reading.unpacked(row) for row in workerpool.received(name)] == looks
    assert list(folder.iterdir()) == []  # taken, and gone


def square(n: int) -> int:
    return n * n


def fail_on_three(n: int) -> int:
    if n == 3:
        raise ValueError("three")
    return n


def killed_on_three(n: int) -> int:
    """A worker that dies (killed, out of memory) on one job, after the others began."""
    if n == 3:
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    return n


def every_result_within(jobs, seconds: float = 20, gather=workerpool.every_result):
    """gather (workerpool.every_result) over a two-worker pool, in a thread, so a wait for ever
    fails the test; and the pool's folder, which must be gone after it. What gather raised is
    given back in its place."""
    shared = workerpool.Pool(2)
    got: list = []

    def run() -> None:
        try:
            got.append(gather(shared, jobs))
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            got.append(exc)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(seconds)
    assert not runner.is_alive(), "every_result is still waiting on a pool that will give nothing"
    shared.close()
    assert not Path(shared.folder).exists()
    return got[0]


def test_work_shared_out_whole_comes_back_in_the_order_asked():
    jobs = [functools.partial(square, n) for n in range(12)]
    assert every_result_within(jobs) == [n * n for n in range(12)]


@pytest.mark.parametrize("job", [fail_on_three, killed_on_three])
def test_work_shared_out_whole_gives_nothing_when_one_worker_fails_or_dies(job):
    # the caller then does all of it itself, where a real fault is raised as usual
    assert every_result_within([functools.partial(job, n) for n in range(8)]) is None


def test_work_shared_out_raises_what_a_job_raised_or_that_a_worker_died():
    # the embedding engines (memsync.semantic.pool) say which it was
    failed = every_result_within([functools.partial(fail_on_three, n) for n in range(8)], gather=workerpool.results)
    assert isinstance(failed, ValueError) and str(failed) == "three"
    died = every_result_within([functools.partial(killed_on_three, n) for n in range(8)], gather=workerpool.results)
    assert isinstance(died, BrokenProcessPool)
