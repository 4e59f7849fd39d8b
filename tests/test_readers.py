"""The reader pool never leaves the writer waiting for ever: a chunk whose future a broken pool
will never complete is read by the writer, and a slow reader is still waited for."""

from __future__ import annotations

import os
import pickle
import select
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

import pytest

from memsync import readers, reading
from memsync.reading import Look

CHUNK = [("a.md", None), ("b.md", None)]


def looks_of(chunk):
    return [Look(rel, "absent") for rel, _ in chunk]


def slow_reader(chunk):
    """A reader that takes longer than several checks. At module level, so that a forked
    reader finds it by name."""
    time.sleep(3 * readers.CHECK_S)
    return [reading.packed(look) for look in looks_of(chunk)]


def pool() -> ProcessPoolExecutor:
    return ProcessPoolExecutor(1, mp_context=get_context(readers.start_method()))


def next_within(flight, seconds: float = 20):
    """flight.next() in a thread, so a writer left waiting for ever fails the test instead of
    hanging the suite."""
    got: list = []
    runner = threading.Thread(target=lambda: got.append(flight.next()), daemon=True)
    runner.start()
    runner.join(seconds)
    assert not runner.is_alive(), "the writer is still waiting on a chunk no reader will give"
    return got[0]


def broken_pool() -> ProcessPoolExecutor:
    """A pool whose one reader was killed, once it refuses work."""
    executor = pool()
    pid = executor.submit(os.getpid).result()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            executor.submit(os.getpid).result()
        except BrokenProcessPool:
            return executor
        time.sleep(0.05)
    pytest.fail("the pool never noticed its reader was killed")


def test_a_chunk_the_pool_never_begins_is_read_by_the_writer():
    # As a chunk submitted while the pool marks itself broken: never run, never failed
    executor = pool()
    read_here = []
    flight = readers._Flight(executor, looks_of, lambda chunk: read_here.append(chunk) or looks_of(chunk))
    try:
        flight.chunks.append((CHUNK, Future()))
        assert next_within(flight) == looks_of(CHUNK)
        assert read_here == [CHUNK]
    finally:
        flight.close()


def test_a_begun_chunk_of_a_pool_that_broke_is_read_by_the_writer():
    # As a chunk a reader had begun when the pool's manager failed: its future never completes
    executor = broken_pool()
    begun: Future = Future()
    assert begun.set_running_or_notify_cancel()  # a reader has it: it cannot be cancelled
    flight = readers._Flight(executor, looks_of, looks_of)
    try:
        flight.chunks.append((CHUNK, begun))
        assert next_within(flight) == looks_of(CHUNK)
        assert flight.broken
        flight.submit(CHUNK)  # and nothing more goes to that pool
        assert flight.chunks[-1] == (CHUNK, None)
    finally:
        flight.close()


def test_a_slow_reader_is_waited_for_and_its_looks_kept():
    executor = pool()
    read_here = []
    flight = readers._Flight(executor, slow_reader, lambda chunk: read_here.append(chunk) or looks_of(chunk))
    try:
        flight.submit(CHUNK)
        begun = flight.chunks[-1][1]
        deadline = time.monotonic() + 20
        while not begun.running() and time.monotonic() < deadline:  # a reader has it: not the writer's
            time.sleep(0.01)
        assert begun.running()
        got = next_within(flight)
        assert [(look.path, look.state) for look in got] == [(rel, "absent") for rel, _ in CHUNK]
        assert read_here == [] and not flight.broken
    finally:
        flight.close()


def test_a_reader_sends_back_only_a_file_name_and_the_looks_come_from_the_file(tmp_path):
    # A message longer than the pipe takes in one write can be cut in half by a kill, and the
    # pool then waits for its rest for ever; a file name is never that long.
    looks = [Look(f"{i}.md", "absent") for i in range(500)]
    folder = tmp_path / "hand-over"
    folder.mkdir()
    name = readers._hand_over(str(folder), lambda chunk: [reading.packed(look) for look in looks], CHUNK)
    assert len(pickle.dumps(name)) < select.PIPE_BUF
    assert [reading.unpacked(row) for row in readers._taken(name)] == looks
    assert list(folder.iterdir()) == []  # taken, and gone


def test_the_hand_over_folder_is_private_and_goes_with_the_pool():
    flight = readers._Flight(pool(), looks_of, looks_of)
    folder = Path(flight.folder)
    try:
        assert folder.is_dir() and folder.stat().st_mode & 0o077 == 0
    finally:
        flight.close()
    assert not folder.exists()


def test_a_chunk_its_reader_could_not_hand_over_is_read_by_the_writer(tmp_path):
    # As a memory-backed folder too small for a chunk of large notes: the write fails
    read_here = []
    flight = readers._Flight(pool(), looks_of, lambda chunk: read_here.append(chunk) or looks_of(chunk))
    folder, flight.folder = flight.folder, str(tmp_path / "not-there")
    try:
        flight.submit(CHUNK)
        assert next_within(flight) == looks_of(CHUNK)
        assert read_here == [CHUNK] and not flight.broken
    finally:
        flight.folder = folder
        flight.close()
