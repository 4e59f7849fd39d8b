"""The reader pool never leaves the writer waiting for ever: a chunk whose future a broken pool
will never complete is read by the writer, and a slow reader is still waited for. The worker
pool under it (memsync.workerpool) is tested in test_workerpool.py."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from memsync import readers, reading, workerpool
from memsync.reading import Look

CHUNK = [("a.md", None), ("b.md", None)]


def looks_of(chunk):
    return [Look(rel, "absent") for rel, _ in chunk]


def slow_reader(chunk):
    """A reader that takes longer than several checks. At module level, so that a forked
    reader finds it by name."""
    time.sleep(3 * workerpool.CHECK_S)
    return [reading.packed(look) for look in looks_of(chunk)]


def pool(workers: int = 1) -> workerpool.Pool:
    return workerpool.Pool(workers)


def next_within(flight, seconds: float = 20):
    """flight.next() in a thread, so a writer left waiting for ever fails the test instead of
    hanging the suite."""
    got: list = []
    runner = threading.Thread(target=lambda: got.append(flight.next()), daemon=True)
    runner.start()
    runner.join(seconds)
    assert not runner.is_alive(), "the writer is still waiting on a chunk no reader will give"
    return got[0]


def broken_pool() -> workerpool.Pool:
    """A pool whose one reader was killed, once it refuses work."""
    broken = pool()
    pid = broken.executor.submit(os.getpid).result()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            broken.executor.submit(os.getpid).result()
        except BrokenProcessPool:
            return broken
        time.sleep(0.05)
    pytest.fail("the pool never noticed its reader was killed")


def test_a_chunk_the_pool_never_begins_is_read_by_the_writer():
    # As a chunk submitted while the pool marks itself broken: never run, never failed
    readers_pool = pool()
    read_here = []
    flight = readers._Flight(readers_pool, looks_of, lambda chunk: read_here.append(chunk) or looks_of(chunk))
    try:
        flight.chunks.append((CHUNK, Future(), 0))
        assert next_within(flight) == looks_of(CHUNK)
        assert read_here == [CHUNK]
    finally:
        flight.close()


def test_a_begun_chunk_of_a_pool_that_broke_is_read_by_the_writer():
    # As a chunk a reader had begun when the pool's manager failed: its future never completes
    readers_pool = broken_pool()
    begun: Future = Future()
    assert begun.set_running_or_notify_cancel()
    assert readers._claimed(readers_pool.folder, 0)  # a reader has it: the writer cannot take it
    flight = readers._Flight(readers_pool, looks_of, looks_of)
    try:
        flight.chunks.append((CHUNK, begun, 0))
        assert next_within(flight) == looks_of(CHUNK)
        assert flight.pool is None  # given up on: what is in flight is read here
        flight.submit(CHUNK)  # and nothing more goes to that pool
        assert flight.chunks[-1][:2] == (CHUNK, None)
    finally:
        flight.close()


def test_a_slow_reader_is_waited_for_and_its_looks_kept():
    readers_pool = pool()
    read_here = []
    flight = readers._Flight(readers_pool, slow_reader, lambda chunk: read_here.append(chunk) or looks_of(chunk))
    try:
        flight.submit(CHUNK)
        claim_of(flight, 0)  # a reader has it: not the writer's
        got = next_within(flight)
        assert [(look.path, look.state) for look in got] == [(rel, "absent") for rel, _ in CHUNK]
        assert read_here == [] and flight.pool is not None
    finally:
        flight.close()


def claim_of(flight, key: int) -> None:
    """Wait until a reader has claimed chunk `key` (begun it)."""
    claim = Path(flight.readers.folder, f"claim-{key}")
    deadline = time.monotonic() + 20
    while not claim.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert claim.exists(), "no reader began the chunk"


def test_the_writer_takes_chunks_from_the_readers_without_cancelling_them(monkeypatch):
    # A future cancelled while the pool still holds it makes the pool's manager thread fail, with
    # a traceback on stderr, once a reader dies (Python 3.11): the writer claims chunks instead.
    failed: list = []
    monkeypatch.setattr(threading, "excepthook", failed.append)
    read_here: list = []
    flight = readers._Flight(pool(), slow_reader, lambda chunk: read_here.append(chunk) or looks_of(chunk))
    later = [[(f"{i}.md", None)] for i in range(4)]
    try:
        for chunk in (CHUNK, *later):
            flight.submit(chunk)
        futures = [future for _, future, _ in flight.chunks]
        claim_of(flight, 0)
        got = next_within(flight)  # the one reader is busy with the first: the writer reads others
        assert [(look.path, look.state) for look in got] == [(rel, "absent") for rel, _ in CHUNK]
        # the newest first, of those not yet on their way to the reader
        assert read_here and read_here == later[::-1][:len(read_here)]
        assert not any(future.cancelled() for future in futures)
        assert [next_within(flight) for _ in later] == [looks_of(chunk) for chunk in later]
        os.kill(flight.readers.executor.submit(os.getpid).result(), signal.SIGKILL)
        deadline = time.monotonic() + 20
        while flight.readers.takes_work() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not flight.readers.takes_work()  # the pool saw its reader die
    finally:
        flight.close()  # joins the pool's manager thread
    assert failed == []


def test_a_chunk_is_read_by_whoever_claims_it_first(tmp_path):
    assert readers._read_claimed(str(tmp_path), 7, looks_of, CHUNK) == looks_of(CHUNK)  # the reader's
    assert readers._read_claimed(str(tmp_path), 7, looks_of, CHUNK) is None  # taken: left
    assert not readers._claimed(str(tmp_path), 7)
    # a claim that cannot be made at all does not stop the chunk being read
    assert readers._read_claimed(str(tmp_path / "gone"), 8, looks_of, CHUNK) == looks_of(CHUNK)


def test_the_hand_over_folder_is_private_and_goes_with_the_pool():
    flight = readers._Flight(pool(), looks_of, looks_of)
    folder = Path(flight.readers.folder)
    try:
        assert folder.is_dir() and folder.stat().st_mode & 0o077 == 0
    finally:
        flight.close()
    assert not folder.exists()


def test_a_chunk_its_reader_could_not_hand_over_is_read_by_the_writer(tmp_path):
    # As a memory-backed folder too small for a chunk of large notes: the write fails
    read_here = []
    flight = readers._Flight(pool(), looks_of, lambda chunk: read_here.append(chunk) or looks_of(chunk))
    folder, flight.readers.folder = flight.readers.folder, str(tmp_path / "not-there")
    try:
        flight.submit(CHUNK)
        assert next_within(flight) == looks_of(CHUNK)
        assert read_here == [CHUNK] and flight.pool is not None
    finally:
        flight.readers.folder = folder
        flight.close()
