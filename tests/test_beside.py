"""A rebuild's bodies' full-text table built beside the index (memsync.store.beside): the same
full text as one written into the index directly, an error in its thread rolls the rebuild back,
and a writer killed meanwhile leaves a scratch file that doctor sweeps."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from memsync import config, readers, sync
from memsync.doctor import leftovers
from memsync.model import Source
from memsync.store import fts
from memsync.store.beside import Beside
from memsync.store.index import Index
from memsync.sync import Indexer

from .helpers import indexing
from .test_fts_waiting import full_text
from .test_parallel import CARDS, SMALL, fill, first_index, kill_mid_rebuild, rebuilt, whole_index


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    for name, value in SMALL.items():
        monkeypatch.setattr(sync, name, value)


def built_beside(db: Path, workers: int, monkeypatch) -> list[str]:
    """Rebuild `db`: how each rebuild load built its bodies' table (None: in the index)."""
    hows = []
    beside = Indexer._beside

    def watched(self, files):
        hows.append(beside(self, files))
        return hows[-1]

    monkeypatch.setattr(Indexer, "_beside", watched)
    rebuilt(db, workers)
    return hows


@pytest.mark.parametrize("workers", [1, 2])
def test_a_bodies_table_built_beside_holds_what_one_built_in_the_index_does(
        vault, tmp_path, monkeypatch, workers):
    db = first_index(vault, tmp_path)
    direct, beside = tmp_path / "direct.db", tmp_path / "beside.db"
    shutil.copy(db, direct)
    shutil.copy(db, beside)
    assert built_beside(beside, workers, monkeypatch) == ["thread" if workers > 1 else "here"]
    monkeypatch.setattr(sync, "PARALLEL_FROM", 10 * CARDS)  # too small a load to build beside
    assert built_beside(direct, 1, monkeypatch) == [None]
    assert full_text(beside) == full_text(direct)  # integrity-checked, too
    want, got = whole_index(direct), whole_index(beside)
    # every other table row for row; the bodies' segments as FTS5 wrote them may differ
    assert [t for t in want if want[t] != got[t] and not t.startswith(fts.BODIES)] == []
    assert not list(tmp_path.glob(".*.bodies.*"))  # the scratch file is gone
    index = Index(beside)  # and the index takes saves after it
    try:
        with index.transaction() as conn:
            fts.insert(conn, 10**6, dict.fromkeys(fts.SHORT, ""), "after the rebuild")
        found = conn.execute("SELECT rowid FROM cards_fts WHERE cards_fts MATCH 'rebuild'")
        assert [tuple(row) for row in found] == [(10**6,)]
    finally:
        index.close()


def test_the_bodies_thread_starts_once_the_readers_are_forked(vault, tmp_path, monkeypatch):
    """Readers fork only while the writer runs one thread (memsync.readers.start_method)."""
    fill(vault)
    methods = []
    start_method = readers.start_method
    monkeypatch.setattr(readers, "start_method", lambda: methods.append(start_method()) or methods[-1])
    assert built_beside(tmp_path / "i.db", 2, monkeypatch) == ["thread"]
    assert methods and set(methods) == {"fork"}


def _no_such_table(*_args):
    raise sqlite3.OperationalError("no such table: no_such_table")


@pytest.mark.parametrize("failing", ["bodies_insert", "optimize_bodies"])  # amid the rows, at the end
def test_a_failure_in_the_bodies_thread_rolls_the_rebuild_back(vault, tmp_path, monkeypatch, failing):
    db = first_index(vault, tmp_path)
    before = whole_index(db)
    for i in range(0, CARDS, 4):
        (vault / f"bulk/{i % 9}/card-{i}.md").write_text(f"# changed {i}\nnew words")
    monkeypatch.setattr(fts, failing, _no_such_table)
    index = Index(db)
    try:
        with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
            Indexer(index, config.load().sources, workers=2).rebuild()
    finally:
        index.close()
    assert whole_index(db) == before
    assert not list(tmp_path.glob(".*.bodies.*"))
    assert not [t for t in threading.enumerate() if t.name == "memsync-bodies"]


def test_a_writer_killed_mid_rebuild_leaves_a_scratch_file_doctor_sweeps(vault, tmp_path):
    db = first_index(vault, tmp_path)
    proc = kill_mid_rebuild(db, "writer")
    assert proc.returncode == -9, proc.stderr
    writer = int(proc.stdout.split()[1])
    left = tmp_path / f".{db.name}.bodies.{writer}.tmp"
    assert left.exists()
    assert leftovers.sweep([str(left)]) == [str(left)]
    assert not left.exists()


@pytest.fixture
def started(monkeypatch) -> list[bool]:
    """Whether each bodies' table built beside a load was built by a thread."""
    seen: list[bool] = []
    start = Beside.start
    monkeypatch.setattr(Beside, "start", lambda self: seen.append(self.threaded) or start(self))
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_a_first_index_into_an_empty_index_builds_its_bodies_beside(vault, tmp_path, monkeypatch,
                                                                     started, workers):
    fill(vault)
    sources = config.load().sources
    with indexing(tmp_path / "one.db", workers) as work:
        work.reconcile()
    assert started == [workers > 1]
    monkeypatch.setattr(sync, "ONE_LOAD_FILES", CARDS // 3)  # too big for one load: in batches
    with indexing(tmp_path / "batches.db", workers) as work:
        work.reconcile()
    assert started == [workers > 1]
    assert full_text(tmp_path / "one.db") == full_text(tmp_path / "batches.db")
    # a second source's first load goes into an index that holds cards: into its cards_fts
    other = tmp_path / "other"
    fill(other, CARDS // 2, word="other")
    monkeypatch.setattr(sync, "ONE_LOAD_FILES", 10 * CARDS)
    index = Index(tmp_path / "one.db")
    try:
        report = Indexer(index, [*sources, Source("other", "markdown", str(other))],
                         workers=workers).reconcile()
    finally:
        index.close()
    assert report.added == CARDS // 2 + 1 and started == [workers > 1]
    assert full_text(tmp_path / "one.db")["cards_fts"]  # integrity-checked
