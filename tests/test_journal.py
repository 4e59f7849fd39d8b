"""A bulk load into an index with no card goes through a rollback journal, every other write
through the WAL, and no WAL is left on disk much larger than LIMIT_BYTES (memsync.store.journal)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from memsync import config, survey, sync
from memsync.store import journal
from memsync.store.index import Index
from memsync.sync import Indexer

from . import rebuilding
from .conftest import MEMSYNC_BIN, write_card
from .rebuilding import CARDS, fill, kill_mid_rebuild, whole_index

small_batches = rebuilding.small_batches  # autouse: loads of a few files each


NORMAL, FULL = 1, 2  # PRAGMA synchronous


def beside(db: Path, suffix: str) -> Path:
    return db.with_name(db.name + suffix)


def files_during(db: Path, how: str = "rebuild", workers: int = 2) -> set[str]:
    """Which of the index's -wal and -journal files are on disk while `how` writes its rows."""
    seen: set[str] = set()
    index = Index(db)

    def progress(done: int, total: int) -> None:
        seen.update(s for s in ("-wal", "-journal") if beside(db, s).exists())
        # a rollback journal is synced before the file is written (a power cut must not corrupt)
        synced = index._conn.execute("PRAGMA synchronous").fetchone()[0]
        assert synced == (FULL if beside(db, "-journal").exists() else NORMAL)

    try:
        getattr(Indexer(index, config.load().sources, workers=workers), how)(progress=progress)
        assert index._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # and after it
        assert index._conn.execute("PRAGMA synchronous").fetchone()[0] == NORMAL
    finally:
        index.close()
    return seen


def mode_on_disk(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("how", ["rebuild", "reconcile"])
def test_a_load_into_an_empty_index_goes_through_a_rollback_journal(vault, tmp_path, how):
    fill(vault)
    db = tmp_path / "new.db"
    assert files_during(db, how) == {"-journal"}
    assert mode_on_disk(db) == "wal"
    assert not beside(db, "-journal").exists()
    serial = tmp_path / "serial.db"
    other = Index(serial)  # kept open: this one's load goes through the WAL
    try:
        assert files_during(serial, how, workers=1) == {"-wal"}
    finally:
        other.close()
    assert whole_index(db) == whole_index(serial)


def test_a_rebuild_over_an_index_with_cards_goes_through_the_wal(vault, tmp_path):
    fill(vault)
    db = tmp_path / "index.db"
    files_during(db)
    assert files_during(db) == {"-wal"}


def test_a_load_beside_another_connection_neither_waits_nor_keeps_it_waiting(vault, tmp_path):
    fill(vault)
    db = tmp_path / "shared.db"
    Index(db).close()
    watcher = sqlite3.connect(db, timeout=0)  # as a watcher's or a server's connection would be
    counts: list[int] = []
    try:
        index = Index(db)
        try:
            Indexer(index, config.load().sources, workers=2).rebuild(
                progress=lambda done, total: counts.append(
                    watcher.execute("SELECT count(*) FROM cards").fetchone()[0]))
        finally:
            index.close()
        assert counts and set(counts) == {0}  # the old, empty index, read without a wait
        assert watcher.execute("SELECT count(*) FROM cards").fetchone()[0] == CARDS + 1
    finally:
        watcher.close()


def test_a_large_write_leaves_no_wal_larger_than_the_limit(vault, tmp_path):
    rng = random.Random(3)
    words = [f"w{n:05d}" for n in range(20_000)]
    for i in range(4):  # about 3 MB of words each: an index of twice the limit
        write_card(vault, f"big/{i}.md", f"big {i}", " ".join(rng.choices(words, k=430_000)))
    db = tmp_path / "index.db"
    index = Index(db)
    try:
        work = Indexer(index, config.load().sources, workers=1)
        work.rebuild()  # into an empty index: no WAL at all
        work.rebuild()  # over it: through the WAL, which held every page once
        assert db.stat().st_size > 1.5 * journal.LIMIT_BYTES  # so the WAL held more than that
        assert beside(db, "-wal").stat().st_size <= journal.LIMIT_BYTES
    finally:
        index.close()


def test_a_load_into_an_empty_index_killed_mid_way_is_rolled_back_to_it(vault, tmp_path):
    fill(vault)
    db = tmp_path / "new.db"
    Index(db).close()
    proc = kill_mid_rebuild(db, "writer")
    assert proc.returncode == -9, proc.stderr
    assert beside(db, "-journal").exists()  # hot: the next connection rolls the load back
    index = Index(db)
    try:
        assert index._conn.execute("SELECT count(*) FROM cards").fetchone()[0] == 0
        assert index._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert Indexer(index, config.load().sources, workers=2).rebuild().added == CARDS + 1
    finally:
        index.close()
    assert not beside(db, "-journal").exists()
    clean = tmp_path / "clean.db"
    files_during(clean)
    assert whole_index(db) == whole_index(clean)


def test_a_rebuild_into_an_empty_index_larger_than_the_journaled_limit_goes_through_the_wal(
        vault, tmp_path, monkeypatch):
    # a search arriving meanwhile would wait for the whole load: only smaller ones may keep it out
    fill(vault)
    monkeypatch.setattr(sync, "JOURNALED_REBUILD_FILES", CARDS // 2)
    assert files_during(tmp_path / "large.db") == {"-wal"}


def test_a_rebuild_larger_than_one_load_still_goes_through_a_rollback_journal(vault, tmp_path, monkeypatch):
    # one transaction either way: unlike a first index, it shows nothing before its commit
    fill(vault)
    monkeypatch.setattr(sync, "ONE_LOAD_FILES", CARDS // 2)
    assert files_during(tmp_path / "large.db") == {"-journal"}
    assert files_during(tmp_path / "first.db", "reconcile") == {"-wal"}  # many transactions


@pytest.mark.parametrize("another_writer", [False, True])
def test_an_empty_index_is_surveyed_before_the_lock_and_again_only_if_a_writer_came_first(
        vault, tmp_path, monkeypatch, another_writer):
    fill(vault)
    db = tmp_path / "new.db"
    index = Index(db)
    calls: list[bool] = []
    real = survey.survey

    def watched(at, *args, **kwargs):
        calls.append(at.in_transaction)
        if another_writer and len(calls) == 1:  # between this survey and the rebuild's lock
            other = Index(db)
            try:
                Indexer(other, config.load().sources, workers=1).sync_paths("vault", ["bulk/0/card-0.md"])
            finally:
                other.close()
        return real(at, *args, **kwargs)

    monkeypatch.setattr(survey, "survey", watched)
    try:
        report = Indexer(index, config.load().sources, workers=2).rebuild()
    finally:
        index.close()
    assert calls == ([False, True] if another_writer else [False])
    assert report.added + report.updated == CARDS + 1


def search_finds_card_7() -> bool:
    """Whether `memsync search` finds card 7; it must answer, never fail busy."""
    done = subprocess.run([MEMSYNC_BIN, "search", "marker7x", "--json"], capture_output=True,
                          text=True, timeout=120, env=os.environ.copy())
    answer = json.loads(done.stdout)
    assert "error" not in answer, answer  # the old, empty index, or the new one
    assert done.returncode == (0 if answer["hits"] else 1), done.stderr  # 1: nothing found
    return any(h["path"] == "bulk/7/card-7.md" for h in answer["hits"])


def test_searches_during_a_first_index_through_the_journal_answer_and_leave_it_in_wal(vault, home):
    fill(vault, 2_000, linked=False)  # PARALLEL_FROM to ONE_LOAD_FILES files: one load
    db = home / "memsync.db"
    loader = subprocess.Popen([MEMSYNC_BIN, "index"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=os.environ.copy())
    while loader.poll() is None and not beside(db, "-journal").exists():
        time.sleep(0.001)
    assert loader.returncode is None, "the load ended before its journal was seen"
    during = []
    while loader.poll() is None:
        during.append(search_finds_card_7())
    _, err = loader.communicate(timeout=120)
    assert loader.returncode == 0, err
    assert during and search_finds_card_7()  # once the load is over, all of it is there
    assert mode_on_disk(db) == "wal"  # switched back, however many searches came meanwhile


def test_a_search_kept_waiting_by_a_load_says_so_then_answers(vault, home):
    fill(vault, 200, linked=False)
    subprocess.run([MEMSYNC_BIN, "index"], check=True, capture_output=True, env=os.environ.copy())
    db = home / "memsync.db"
    loader = sqlite3.connect(db, isolation_level=None)  # as a load through a rollback journal holds it
    try:
        assert loader.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        loader.execute("BEGIN EXCLUSIVE")
        search = subprocess.Popen([MEMSYNC_BIN, "search", "marker7x", "--json"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        said = search.stderr.readline()  # before it waits
        assert "is being loaded (a rebuild?); waiting for it to finish" in said and "waiting" in said
        assert search.poll() is None  # still waiting
        loader.execute("COMMIT")
    finally:
        loader.close()
    out, err = search.communicate(timeout=60)
    assert search.returncode == 0, err
    assert any(h["path"] == "bulk/7/card-7.md" for h in json.loads(out)["hits"])


def test_a_search_that_need_not_wait_says_nothing(vault, home):
    fill(vault, 200, linked=False)
    subprocess.run([MEMSYNC_BIN, "index"], check=True, capture_output=True, env=os.environ.copy())
    done = subprocess.run([MEMSYNC_BIN, "search", "marker7x"], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=60)
    assert done.returncode == 0 and done.stderr == ""


def file_sizes_during_first_index(vault: Path, db: Path) -> tuple[list[int], list[int], int, int]:
    """A first index of `vault` into `db` in many transactions: the index file's size and the
    WAL's at the end of each and once it is over (last), and the connection's checkpoint
    settings then."""
    sizes: list[int] = []
    wals: list[int] = []
    index = Index(db)

    def progress(done: int, total: int) -> None:
        sizes.append(db.stat().st_size)
        wals.append(beside(db, "-wal").stat().st_size)

    try:
        Indexer(index, config.load().sources, workers=2).reconcile(progress=progress)
        progress(0, 0)
        every, limit = (index._conn.execute(f"PRAGMA {p}").fetchone()[0]
                        for p in ("wal_autocheckpoint", "journal_size_limit"))
    finally:
        index.close()
    return sizes, wals, every, limit


def test_a_load_of_many_transactions_checkpoints_the_wal_only_every_so_often(vault, tmp_path, monkeypatch):
    monkeypatch.setattr(sync, "ONE_LOAD_FILES", 0)  # in BATCH-file transactions (carrying_links)
    rng = random.Random(5)
    words = [f"w{n:05d}" for n in range(20_000)]
    for i in range(240):  # about 10 MB in all, 40 KB a transaction: 1,000 WAL pages or more each
        write_card(vault, f"big/{i // 60}/{i}.md", f"big {i}", " ".join(rng.choices(words, k=6_000)))
    db = tmp_path / "sparse.db"
    sizes, wals, every, limit = file_sizes_during_first_index(vault, db)
    during = sizes[:-2]  # the last two: after the load's merge and once the reconcile is over
    assert len(during) >= 3 and len(set(during)) == 1  # nothing checkpointed while the WAL took it
    assert max(wals) > 3 * 1000 * 2048
    assert (every, limit) == (1000, journal.LIMIT_BYTES)  # the connection's own settings again
    assert sizes[-1] > 3 * 1000 * 2048  # and at the end, all of it is in the file
    assert wals[-1] <= journal.LIMIT_BYTES
    # SQLite's own setting: each commit past 1,000 pages checkpoints, so the file grows as it goes
    monkeypatch.setattr(journal, "BULK_CHECKPOINT_BYTES", 0)
    sizes, _, every, _ = file_sizes_during_first_index(vault, tmp_path / "each.db")
    assert len(set(sizes)) >= 3 and every == 1000
    assert whole_index(db) == whole_index(tmp_path / "each.db")


def test_memsync_index_rebuild_after_a_load_killed_in_its_journal(vault, home):
    """A load into an empty index killed mid-way leaves a hot journal: `memsync index --rebuild`
    rolls it back, takes it for no damage (nothing set aside) and indexes every file."""
    fill(vault)
    db = home / "memsync.db"
    Index(db).close()
    assert kill_mid_rebuild(db, "writer").returncode == -9
    assert beside(db, "-journal").exists()
    done = subprocess.run([MEMSYNC_BIN, "index", "--rebuild", "--json"], capture_output=True,
                          text=True, timeout=300, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["added"] == CARDS + 1 and "recovered" not in report  # not damage: nothing set aside
    assert not beside(db, "-journal").exists()
