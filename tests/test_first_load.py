"""A source's first index is one transaction and one bulk load, as a rebuild is, up to
sync.ONE_LOAD_FILES files (Indexer._first_load); a larger one, and a source another process
has begun to index since the survey, are written in batches. Every way gives the same index."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memsync import config, survey, sync
from memsync.model.indexing import SyncReport
from memsync.store import fts
from memsync.store.index import Index
from memsync.sync import Indexer

from . import rebuilding
from .rebuilding import (
    CARDS,
    KILLER,
    SMALL,
    fill,
    kill_mid_rebuild,
    one_segment,
    rebuilt,
    whole_index,
)
from .test_fts_waiting import full_text

small_batches = rebuilding.small_batches  # autouse: loads of a few files each


def at_each_batch(monkeypatch, ask) -> list:
    """What `ask(index path)` finds each time a batch is about to be written."""
    seen: list = []
    apply = Indexer._apply

    def watched(self, *args, **kwargs):
        seen.append(ask(self.index.path))
        apply(self, *args, **kwargs)

    monkeypatch.setattr(Indexer, "_apply", watched)
    return seen


def cards_committed(db: Path) -> int:
    """The cards another connection sees in the index."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM cards").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def committed(monkeypatch) -> list[int]:
    """The cards another connection sees in the index each time a batch is written into it."""
    return at_each_batch(monkeypatch, cards_committed)


def merging(db: Path) -> tuple:
    """cards_fts's merge settings as committed (None: FTS5's default), and the load's mark."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        settings = tuple(conn.execute(f"SELECT max(v) FROM cards_fts_config WHERE k = '{k}'").fetchone()[0]
                         for k in ("automerge", "crisismerge"))
        return (*settings, conn.execute("SELECT value FROM meta WHERE key = ?", (fts.DEFERRED,)).fetchone())
    finally:
        conn.close()


def first_index(db: Path, workers: int = 1) -> SyncReport:
    index = Index(db)
    try:
        return Indexer(index, config.load().sources, workers=workers).reconcile()
    finally:
        index.close()


def test_a_first_index_is_one_transaction_and_the_index_a_rebuild_makes(vault, tmp_path, committed):
    fill(vault)
    db = tmp_path / "first.db"
    report = first_index(db, workers=2)
    assert report.added == CARDS + 1 and report.readers == 2  # and big.md is a problem
    assert len(committed) >= CARDS // SMALL["BATCH"] and set(committed) == {0}  # nothing until the end
    rebuild = tmp_path / "rebuilt.db"
    shutil.copy(db, rebuild)
    layout = {f"{table}_{part}" for table in fts.FTS_COLUMNS for part in ("data", "idx")}
    rows, again = whole_index(db), rebuilt(rebuild, workers=1)
    for index in (rows, again):  # whether the load's segment awaits a merge up is layout too
        index["meta"] = [row for row in index["meta"] if row[0] != fts.UNSETTLED]
    assert [t for t in rows if t not in layout and rows[t] != again[t]] == []
    assert full_text(db) == full_text(rebuild)  # the same tokens, in segments FTS5 numbered anew


def test_a_first_index_larger_than_one_load_is_written_in_batches(vault, tmp_path, committed, monkeypatch):
    fill(vault)
    first_index(tmp_path / "one.db")
    monkeypatch.setattr(sync, "ONE_LOAD_FILES", CARDS - 1)
    committed.clear()
    first_index(tmp_path / "first.db")
    assert committed[0] == 0 and committed[-1] >= CARDS - SMALL["BATCH"]  # each batch commits
    assert full_text(tmp_path / "first.db") == full_text(tmp_path / "one.db")


def test_a_source_begun_by_another_process_since_the_survey_is_written_in_batches(
        vault, tmp_path, committed, monkeypatch):
    fill(vault)
    first_index(tmp_path / "one.db")
    db = tmp_path / "first.db"
    looked = survey.survey

    def then_a_watcher_saves(*args, **kwargs):
        found = looked(*args, **kwargs)
        other = Index(db)  # between the survey and the write lock, one note gets indexed
        try:
            Indexer(other, config.load().sources, workers=1).sync_paths("vault", ["bulk/0/card-0.md"])
        finally:
            other.close()
        committed.clear()
        return found

    monkeypatch.setattr(survey, "survey", then_a_watcher_saves)
    report = first_index(db)
    assert report.added == CARDS  # card-0 was there already
    assert committed[0] == 1 and committed[-1] > 1  # not one load: it asked under the lock
    assert full_text(db) == full_text(tmp_path / "one.db")


def test_a_first_index_killed_mid_way_leaves_nothing_half_done(vault, tmp_path):
    fill(vault)
    db = tmp_path / "first.db"
    Index(db).close()
    proc = kill_mid_rebuild(db, "writer", "reconcile")
    assert proc.returncode == -9, proc.stderr
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT count(*) FROM cards").fetchone() == (0,)
    finally:
        conn.close()
    assert first_index(db).added == CARDS + 1  # the next start does it all
    first_index(tmp_path / "clean.db")
    assert full_text(db) == full_text(tmp_path / "clean.db")


def test_a_first_index_in_batches_merges_once_at_its_end(vault, tmp_path, monkeypatch):
    fill(vault)
    monkeypatch.setattr(sync, "ONE_LOAD_FILES", CARDS - 1)
    db = tmp_path / "first.db"
    seen = at_each_batch(monkeypatch, merging)
    first_index(db)
    assert len(seen) >= CARDS // SMALL["BATCH"] and set(seen) == {(0, fts.BULK_CRISISMERGE, ("1",))}
    assert merging(db) == (fts.AUTOMERGE, fts.CRISISMERGE, None) and one_segment(db)


def test_a_first_index_in_batches_that_ended_early_is_merged_by_the_next_reconcile(
        vault, tmp_path, monkeypatch):
    fill(vault)
    monkeypatch.setattr(sync, "ONE_LOAD_FILES", CARDS - 1)
    db = tmp_path / "first.db"
    apply = Indexer._apply
    batches = []

    def fails_in_the_third(self, *args, **kwargs):
        batches.append(1)
        if len(batches) == 3:
            raise OSError("disk full")
        apply(self, *args, **kwargs)

    monkeypatch.setattr(Indexer, "_apply", fails_in_the_third)
    with pytest.raises(OSError):
        first_index(db)
    assert merging(db) == (0, fts.BULK_CRISISMERGE, ("1",)) and not one_segment(db)
    monkeypatch.setattr(Indexer, "_apply", apply)
    monkeypatch.setattr(sync, "PARALLEL_FROM", 10_000)  # the next is no bulk load of its own
    assert first_index(db).added == CARDS + 1 - 2 * SMALL["BATCH"]  # the rest
    assert merging(db) == (fts.AUTOMERGE, fts.CRISISMERGE, None) and one_segment(db)
    first_index(tmp_path / "clean.db")
    assert full_text(db) == full_text(tmp_path / "clean.db")


def test_a_first_index_in_batches_killed_mid_way_is_said_until_it_is_finished(vault, cli):
    """Killed after some of its batches, it left an index of some of the files that stats,
    search and doctor showed as if it were whole."""
    fill(vault)
    db = config.load().db.path
    in_batches = KILLER.replace("setattr(sync, name, value)\n",
                                f"setattr(sync, name, value)\nsync.ONE_LOAD_FILES = {CARDS - 1}\n", 1)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(in_batches), str(db), "writer",
                           "reconcile"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    code, stats = cli("stats", "--json")
    assert code == 0 and 0 < stats["cards"] < CARDS
    assert "the first index" in stats["unfinished"] and "run `memsync index`" in stats["unfinished"]
    code, found = cli("search", "marker7x", "--json")
    assert code in (0, 1) and any("stopped before its end" in w for w in found["warnings"])
    code, checked = cli("doctor", "--json")
    assert code == 1
    assert [f["fixable"] for f in checked["findings"] if "the first index" in f["message"]] == [True]
    code, fixed = cli("doctor", "--fix", "--json")
    assert "finished the first index" in fixed["fixed"], fixed
    assert {f["check"] for f in fixed["findings"]} == {"problem"}  # bad.md, said as ever
    code, stats = cli("stats", "--json")
    assert stats["cards"] == CARDS + 1 and "unfinished" not in stats
