"""The full-text index of a bulk load (a rebuild, a first index): FTS5's hash sized to the load,
its segments left to one merge at the end, and FTS5's merge settings given back after."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memsync import config, sync
from memsync.store import fts, setaside
from memsync.store.index import Index
from memsync.sync import Indexer

from . import rebuilding
from .conftest import write_card
from .rebuilding import first_index, one_segment, rebuilt
from .test_fts_waiting import full_text

small_batches = rebuilding.small_batches  # autouse: the small thresholds for every test here


def test_a_rebuild_merges_the_full_text_once_and_leaves_merging_on(vault, tmp_path):
    db = first_index(vault, tmp_path)
    rebuilt(db, workers=2)
    conn = sqlite3.connect(db)
    try:
        for table in fts.FTS_COLUMNS:  # merges were off during the load; back to FTS5's default
            assert conn.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchone() == (fts.AUTOMERGE,)
            assert conn.execute(f"SELECT v FROM {table}_config WHERE k = 'crisismerge'").fetchone() == (fts.CRISISMERGE,)
            # and so is the hash a watcher's later small writes go through
            assert conn.execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'").fetchone() == (fts.HASH_BYTES,)
    finally:
        conn.close()
    assert one_segment(db)


def test_the_bulk_hash_holds_a_small_load_whole_and_a_large_one_in_parts():
    assert fts.bulk_hash_bytes(0) == fts.BULK_HASH_BYTES
    small = 20 * 1024 * 1024
    assert fts.bulk_hash_bytes(small) >= small  # with room to spare: one segment
    largest = fts.WHOLE_LOAD_HASH_BYTES * 4 // 5
    assert fts.bulk_hash_bytes(largest) <= fts.WHOLE_LOAD_HASH_BYTES
    assert fts.bulk_hash_bytes(largest + 1024) == fts.PARTED_HASH_BYTES  # memory stays bounded
    assert fts.PARTED_HASH_BYTES < fts.WHOLE_LOAD_HASH_BYTES
    # a lean index's cap holds for a load of any size
    lean = fts.BULK_HASH_BYTES
    assert fts.bulk_hash_bytes(largest + 1024, lean) == fts.bulk_hash_bytes(10**10, lean) == lean


def at_end_of_load(db: Path, monkeypatch, ask) -> tuple:
    """Rebuild `db`: what `ask(conn)` found at the end of the load, before its one merge (when
    the indexes set aside are made again, which has FTS5 write its hash out), and the index."""
    seen = []
    make = setaside.make

    def watched(conn, statements):
        seen.append(ask(conn))
        make(conn, statements)

    monkeypatch.setattr(setaside, "make", watched)
    index = rebuilt(db, workers=1)
    return seen[0], index


def _loaded_whole(db: Path, monkeypatch) -> tuple[int, bool]:
    """The hash a rebuild loaded with, and whether the whole load was still in it at its end
    (FTS5 had written no segment: cards_fts_data held only its averages and structure records,
    rowids 1 and 10)."""
    return at_end_of_load(db, monkeypatch, lambda conn: (
        conn.execute("SELECT v FROM cards_fts_config WHERE k = 'hashsize'").fetchone()[0],
        conn.execute("SELECT max(id) FROM cards_fts_data").fetchone()[0] == 10))[0]


def test_a_rebuild_sizes_its_hash_to_the_load_and_writes_a_small_one_as_one_segment(vault, tmp_path, monkeypatch):
    # no links: the cards links point at wait for the end of the load (fts.Waiting), and the
    # first of them, a rowid below the last one written, has FTS5 write its hash out
    db = first_index(vault, tmp_path, linked=False)
    load = sum(p.stat().st_size for p in vault.rglob("*.md") if ".trash" not in p.parts)
    hashsize, whole = _loaded_whole(db, monkeypatch)
    assert hashsize == fts.bulk_hash_bytes(load) and whole
    # the same load through a small hash is written out in segments as it goes
    monkeypatch.setattr(fts, "bulk_hash_bytes", lambda load, whole_up_to: 16 * 1024)
    assert _loaded_whole(db, monkeypatch) == (16 * 1024, False)


def _segments_at_end_of_load(db: Path, monkeypatch) -> tuple[int, dict]:
    """Rebuild `db` through a 2 KiB hash: how many cards_fts segments the load left for its
    merge (FTS5 numbers a segment's pages from its id shifted left 37 bits), and the index."""
    monkeypatch.setattr(fts, "bulk_hash_bytes", lambda load, whole_up_to: 2048)
    return at_end_of_load(db, monkeypatch, lambda conn: conn.execute(
        "SELECT count(DISTINCT id >> 37) FROM cards_fts_data WHERE id > 10").fetchone()[0])


def test_a_rebuild_leaves_its_segments_to_the_one_merge_at_its_end(vault, tmp_path, monkeypatch):
    db = first_index(vault, tmp_path)
    deferred, index = _segments_at_end_of_load(db, monkeypatch)
    postings = full_text(db)
    # FTS5's own crisis limit merges each 16 segments of a level as the load goes
    monkeypatch.setattr(fts, "BULK_CRISISMERGE", fts.CRISISMERGE)
    merging, merged_on_the_way = _segments_at_end_of_load(db, monkeypatch)
    assert deferred > fts.CRISISMERGE * 2 and merging < deferred
    # the same index either way, but for the ids FTS5 gave its segments
    layout = ("cards_fts_data", "cards_fts_idx")
    assert {k: v for k, v in index.items() if k not in layout} == {
        k: v for k, v in merged_on_the_way.items() if k not in layout}
    assert full_text(db) == postings and one_segment(db)


def test_a_first_index_written_in_many_batches_ends_as_one_segment(vault, tmp_path, monkeypatch):
    for i in range(40):  # no links: nothing else has the first index compacted
        write_card(vault, f"bulk/{i % 4}/card-{i}.md", f"卡片 {i}", f"数据库 body {i} of the vault")
    monkeypatch.setattr(sync, "BATCH", 5)  # a transaction, and an FTS5 segment, per 5 files
    index = Index(tmp_path / "first.db")
    report = Indexer(index, config.load().sources, workers=1).reconcile()
    assert report.added > 5 * 4
    write_card(vault, "bulk/0/card-0.md", "卡片 0 again", "a small change")
    assert Indexer(index, config.load().sources, workers=1).reconcile().updated == 1
    index.close()
    assert not one_segment(tmp_path / "first.db")  # one small change is not merged at once
    index = Index(tmp_path / "again.db")
    Indexer(index, config.load().sources, workers=1).reconcile()
    index.close()
    assert one_segment(tmp_path / "again.db")
