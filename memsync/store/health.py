"""What `memsync doctor` asks of the index file itself: its schema, its integrity, the rows that
must agree with each other. Read-only."""

from __future__ import annotations

import sqlite3

from memsync.store.index import Index, integrity_problems


def schema_version(index: Index) -> int:
    return index._conn.execute("PRAGMA user_version").fetchone()[0]


def integrity(index: Index, fts: bool = True) -> list[str]:
    """What SQLite's and FTS5's own checks find (memsync.store.index.integrity_problems); only
    SQLite's without `fts` (FTS5's needs the write lock)."""
    return integrity_problems(index._conn, fts=fts)


def unpaired(index: Index) -> tuple[int, int]:
    """(cards without full-text rows, full-text rows without a card)."""
    row = index._conn.execute(
        "SELECT (SELECT count(*) FROM cards WHERE seq NOT IN (SELECT rowid FROM cards_fts)), "
        "(SELECT count(*) FROM cards_fts WHERE rowid NOT IN (SELECT seq FROM cards))"
    ).fetchone()
    return row[0], row[1]


def supersede_links(index: Index) -> list[sqlite3.Row]:
    """(source, path, superseded_by, supersedes) of every card naming another."""
    return index._conn.execute(
        "SELECT source, path, superseded_by, supersedes FROM cards "
        "WHERE superseded_by IS NOT NULL OR supersedes IS NOT NULL").fetchall()


def ids_under(index: Index, source: str, folder: str) -> list[str]:
    """The paths below `folder` (the trash) that ids of `source` are bound to."""
    return [path for (path,) in index._conn.execute(
        "SELECT path FROM card_ids WHERE source = ? AND substr(path, 1, ?) = ?",
        (source, len(folder) + 1, folder + "/"))]
