"""A rebuild sets the secondary indexes of the tables it refills aside while it loads them
(memsync.store.setaside), makes them again before its links are settled, and a rebuild that
fails leaves the old ones."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memsync import config
from memsync.store import setaside
from memsync.store.bulkload import RELOADED_TABLES
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card


def indexes(db: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' "
                            "AND sql IS NOT NULL ORDER BY name").fetchall()
    finally:
        conn.close()


def rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT id, path, name, title FROM cards ORDER BY path").fetchall()
    finally:
        conn.close()


def rebuild(db: Path) -> None:
    index = Index(db)
    try:
        Indexer(index, config.load().sources, workers=1).rebuild()
    finally:
        index.close()


@pytest.fixture
def indexed(vault, tmp_path) -> Path:
    for i in range(40):
        write_card(vault, f"notes/card-{i}.md", f"Card {i}", f"body {i} links [[card-{(i + 1) % 40}]]",
                   tags=[f"t{i % 3}"])
    db = tmp_path / "index.db"
    rebuild(db)
    return db


def test_a_rebuild_loads_without_the_indexes_and_ends_with_each_as_it_was(indexed, monkeypatch):
    before = indexes(indexed)
    # the rule has indexes to act on: tables that have some and that a rebuild empties
    assert {"cards", "links", "exact_keys"} <= {t for _, t, _ in before} & set(RELOADED_TABLES)
    during = []
    replace_file = Index.replace_file

    def watched(self, *args, **kwargs):
        during.append({name for (name,) in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN "
            "('cards', 'links', 'exact_keys') AND sql IS NOT NULL")})
        return replace_file(self, *args, **kwargs)

    monkeypatch.setattr(Index, "replace_file", watched)
    rebuild(indexed)
    # only those whose rows land on a page already in the cache stay (in key order, partial)
    kept = {name for name, table, _ in before if table in ("cards", "links", "exact_keys")} & setaside.LIVE
    assert kept == {"cards_file", "exact_keys_seq", "cards_kind", "cards_priority", "cards_superseded"}
    assert during and all(seen == kept for seen in during)
    assert indexes(indexed) == before
    # and the links, settled after the indexes were made, are all there
    conn = sqlite3.connect(indexed)
    try:
        assert conn.execute("SELECT count(*) FROM cards WHERE inlinks > 0").fetchone()[0] == 40
        plan = " ".join(r[-1] for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT seq FROM cards WHERE source = 'vault' AND name = 'card-3'"))
        assert "cards_name" in plan
    finally:
        conn.close()


def test_a_rebuild_that_fails_midway_keeps_the_old_rows_and_indexes(indexed, monkeypatch):
    before_indexes, before_rows = indexes(indexed), rows(indexed)
    calls = []
    replace_file = Index.replace_file

    def failing(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 20:
            raise OSError("disk went away")
        return replace_file(self, *args, **kwargs)

    monkeypatch.setattr(Index, "replace_file", failing)
    with pytest.raises(OSError):
        rebuild(indexed)
    assert indexes(indexed) == before_indexes
    assert rows(indexed) == before_rows


def test_drop_returns_what_make_restores_and_leaves_other_tables_alone(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.db")
    conn.executescript("""
        CREATE TABLE cards (seq INTEGER PRIMARY KEY, name TEXT UNIQUE, kind TEXT, path TEXT);
        CREATE INDEX cards_kind ON cards(kind);
        CREATE INDEX cards_path ON cards(path) WHERE path IS NOT NULL;
        CREATE INDEX cards_title ON cards(name, path);
        CREATE TABLE other (x TEXT);
        CREATE INDEX other_x ON other(x);
    """)
    schema = conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    statements = setaside.drop(conn, ("cards",))
    left = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    # a UNIQUE constraint's own index stays, and so does a LIVE one (cards_kind)
    assert left == {"sqlite_autoindex_cards_1", "cards_kind", "other_x"}
    assert len(statements) == 2
    setaside.make(conn, statements)
    assert conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall() == schema
