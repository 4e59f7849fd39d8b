"""A full disk under the index: the watcher says so in one line, not a traceback for each batch
it retries (one a second), keeps watching, and catches up once there is room again. A real
small file system (tmpfs) holds the index; mounting one needs root, so elsewhere this skips."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path

import pytest

from .conftest import WATCH_DEADLINE, write_card

FULL = "database or disk is full — free space on the disk of"
RETRY = "reconciling vault: retry after a failed batch"


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {mounted.stderr!r}")
    monkeypatch.setenv("MEMSYNC_DB", str(disk / "memsync.db"))
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=True)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:  # ENOSPC: the disk is full
        pass
    finally:
        os.close(fd)
    return filler


def watching_a_full_disk(disk: Path, vault: Path, cli, watcher, cards: int):
    """A card indexed while there was room, then a watcher, the disk filled and `cards` large
    cards written: returns the watcher once it said the disk is full, and the filler file."""
    write_card(vault, "a.md", "a card", "a card indexed while there was room on the disk")
    assert cli("index")[0] == 0
    with closing(sqlite3.connect(disk / "memsync.db")) as conn:  # no WAL room to reuse
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    running = watcher()
    filler = fill(disk)
    for n in range(cards):
        write_card(vault, f"big/b{n}.md", f"big {n}", f"bigword{n} " + "filler text " * 2000)
    running.wait_for(FULL)
    return running, filler


def until(condition, timeout: float = WATCH_DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_full_disk_is_said_once_and_the_watcher_catches_up(small_disk, vault, cli, watcher):
    running, filler = watching_a_full_disk(small_disk, vault, cli, watcher, 40)
    retried = running.stderr().count(RETRY)
    until(lambda: running.stderr().count(RETRY) >= retried + 3)  # three more failed retries
    assert running.stderr().count(FULL) == 1
    assert "Traceback" not in running.stderr(), running.stderr()
    filler.unlink()
    running.wait_for("the index takes writes again")
    assert running.stop() == 0
    code, found = cli("search", "bigword39", "--json")
    assert code == 0 and found["hits"][0]["path"] == "big/b39.md"


class BigWrite:
    """Idle work whose writes never fit the small disk (as merging the search index or storing
    embeddings may not, where a batch's few pages still do): into a database of its own there."""

    def __init__(self, disk: Path):
        self.path, self.failed = disk / "scratch.db", 0

    def __call__(self, index) -> bool:
        try:
            with closing(sqlite3.connect(self.path)) as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
                with conn:
                    conn.execute("INSERT INTO t VALUES (randomblob(4000000))")
        except sqlite3.Error:
            self.failed += 1
            raise
        finally:  # what the failed write took, given back for the next batch
            for leftover in (self.path, self.path.with_name(self.path.name + "-journal")):
                leftover.unlink(missing_ok=True)
        return False

    def __repr__(self) -> str:
        return "big write"


def test_idle_work_on_a_full_disk_is_said_once_not_a_traceback_a_batch(small_disk, vault, cli, caplog):
    from memsync import config
    from memsync.watch import Watcher

    from .watching import converge, mark, put

    assert cli("index")[0] == 0
    task = BigWrite(small_disk)
    caplog.set_level(logging.INFO, logger="memsync")
    w = Watcher(config.load(), idle_work=[task])
    w.start()
    try:
        live = {}
        for i in range(3):  # each batch fits; the idle work after it does not
            live[f"n{i}.md"] = mark()
            put(vault, f"n{i}.md", live[f"n{i}.md"])
            converge(live)
            until(lambda i=i: task.failed > i)
    finally:
        w.stop()
    said = [r for r in caplog.records if "big write" in r.getMessage()]
    assert [r for r in said if r.exc_info] == []
    assert len(said) == 1 and "free space on the disk of" in said[0].getMessage()


def test_background_embedding_on_a_full_disk_is_said_once(small_disk, vault, cli, caplog):
    """The embedder runs on a thread of its own, started again by every batch while cards are
    pending: on a full disk, one line, not a traceback each time."""
    import threading

    numpy = pytest.importorskip("numpy")
    from memsync import config
    from memsync.semantic import background
    from memsync.store.index import Index

    class Wide:  # vectors too big for the disk (float16 rows of 4 MB)
        model = "wide-test-model"
        eager = True  # as Encoder: start() embeds before it returns

        def token_count(self, text: str) -> int:
            return len(text.split())

        def passages(self, texts):
            return numpy.ones((len(texts), 2_000_000), dtype=numpy.float32)

        def start(self, texts):  # as Encoder.start: embedded before it returns
            vectors = self.passages(texts)
            return lambda: vectors

    write_card(vault, "a.md", "a card", "a card indexed while there was room on the disk")
    assert cli("index")[0] == 0
    caplog.set_level(logging.INFO, logger="memsync")
    embedder = background.BackgroundEmbedder(config.load().db.path, True, encoder_factory=Wide)
    index = Index(config.load().db.path)
    try:
        for _ in range(3):  # as the watcher calls it after each of three batches
            while embedder(index):
                pass
            until(lambda: not [t for t in threading.enumerate() if t.name == "memsync-embed"])
    finally:
        embedder.close()
        index.close()
    said = [r for r in caplog.records if r.name == background.__name__]
    assert [r for r in said if r.exc_info] == []
    assert len(said) == 1 and "free space on the disk of" in said[0].getMessage()


def test_a_watcher_stops_on_a_full_disk_and_index_catches_up(small_disk, vault, cli, watcher):
    """SIGTERM while every batch fails for want of room: the watcher stops (it retried the failed
    batch for as long as the disk stayed full), and `memsync index` catches up once there is room."""
    running, filler = watching_a_full_disk(small_disk, vault, cli, watcher, 5)
    running.stop()  # fails the test if the watcher does not stop
    assert "Traceback" not in running.stderr(), running.stderr()
    filler.unlink()
    assert cli("index")[0] == 0
    code, found = cli("search", "bigword4", "--json")
    assert code == 0 and found["hits"][0]["path"] == "big/b4.md"
