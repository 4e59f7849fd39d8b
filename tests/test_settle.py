"""A bulk load whose full-text rows are one segment is merged up a level in the watcher's idle
time, so that no later save merges the whole index inline (fts.UNSETTLED, Index.settle_segments)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from memsync import config
from memsync.store import fts
from memsync.store.index import Index
from memsync.sync import Indexer

from . import rebuilding
from .conftest import write_card
from .rebuilding import fill
from .watching import wait_until

NOTES = 1_500


small_batches = rebuilding.small_batches  # autouse: loads of a few files each


def fill_long(vault: Path) -> None:
    """NOTES notes of 200 words each: a full-text index of many pages beside a save's few."""
    rng = random.Random(5)
    words = [f"w{n}" for n in range(5_000)]
    for i in range(NOTES):
        write_card(vault, f"bulk/{i % 9}/card-{i}.md", f"卡片 {i}", " ".join(rng.choices(words, k=200)))


def mark(db: Path) -> str | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (fts.UNSETTLED,)).fetchone()
        return row[0] if row else None
    finally:
        conn.close()


def full_text_pages(index: Index) -> int:
    return index._conn.execute("SELECT count(*) FROM cards_fts_data").fetchone()[0]


def save(vault: Path, index: Index, work: Indexer, i: int) -> int:
    """Edit one note and index it; returns the rows that wrote (FTS5 writes a page as a row)."""
    write_card(vault, f"bulk/{i % 9}/card-{i}.md", f"卡片 {i} again", f"edited {i} 数据库 save{i}")
    start = index._conn.total_changes
    work.sync_paths("vault", [f"bulk/{i % 9}/card-{i}.md"])
    return index._conn.total_changes - start


def largest_save(settle: bool, vault: Path, db: Path) -> tuple[int, int]:
    """The most rows one of 20 saves after a first index wrote, and the full-text index's pages;
    with `settle`, the idle work runs after the first save, as a watcher's would."""
    fill_long(vault)
    index = Index(db)
    try:
        work = Indexer(index, config.load().sources, workers=2)
        work.reconcile()
        assert mark(db) == "waiting"
        assert not index.settle_segments()  # one segment: nothing to merge it with yet
        writes = [save(vault, index, work, 0)]
        slices = 0
        while settle and index.settle_segments():
            slices += 1
        if settle:
            assert slices >= 1 and mark(db) is None  # merged, and done
        writes += [save(vault, index, work, i) for i in range(1, 20)]
        return max(writes), full_text_pages(index)
    finally:
        index.close()


def test_after_a_one_segment_load_settled_when_idle_no_save_rewrites_the_index(vault, tmp_path):
    most, size = largest_save(True, vault, tmp_path / "settled.db")
    assert most < size / 2, (most, size)  # small merges of small segments only


def test_unsettled_one_save_rewrites_the_whole_full_text_index(vault, tmp_path):
    # what the idle work prevents: the 16th small segment beside the load's merges them all inline
    most, size = largest_save(False, vault, tmp_path / "unsettled.db")
    assert most > size, (most, size)


def test_a_load_of_many_segments_is_merged_up_at_once_and_not_marked(vault, tmp_path, monkeypatch):
    monkeypatch.setattr(fts, "WHOLE_LOAD_HASH_BYTES", 0)
    monkeypatch.setattr(fts, "BULK_HASH_BYTES", 64 * 1024)  # the load is written in many parts
    fill(vault, NOTES, linked=False)
    db = tmp_path / "index.db"
    index = Index(db)
    try:
        Indexer(index, config.load().sources, workers=2).rebuild()
        assert mark(db) is None
        assert not index.settle_segments()
    finally:
        index.close()


def test_the_watcher_settles_a_first_index_when_idle(vault, watcher, home):
    fill(vault, 600, linked=False)  # PARALLEL_FROM or more: the start-up reconcile is a bulk load
    running = watcher()
    db = home / "memsync.db"
    assert mark(db) in ("waiting", "merging", None)
    write_card(vault, "bulk/0/card-0.md", "卡片 0 again", "edited once")
    wait_until(lambda: mark(db) is None, "the load's segment merged up", timeout=60)
    assert running.proc.poll() is None
