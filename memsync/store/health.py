"""What `memsync doctor` asks of the index file itself: its schema, its integrity, the rows that
must agree with each other. Read-only."""

from __future__ import annotations

import sqlite3

from memsync.store import fts as fulltext
from memsync.store import migrations
from memsync.store.connection import failure_kind
from memsync.store.index import Index


def schema_version(index: Index) -> int:
    return index._conn.execute("PRAGMA user_version").fetchone()[0]


def lost_version(index: Index) -> migrations.Unversioned | None:
    """Tables without a schema version: a reset memsync index, or another program's database."""
    return migrations.unversioned(index._conn)


def integrity(index: Index, fts: bool = True) -> list[str]:
    """What SQLite's and FTS5's own checks find (integrity_problems); only
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


def integrity_problems(conn: sqlite3.Connection, fts: bool = True) -> list[str]:
    """What SQLite's integrity_check and FTS5's integrity-check find; [] when both pass.
    FTS5 runs its check as an INSERT, so it goes in a transaction that is rolled back; that
    transaction takes the write lock first (BEGIN IMMEDIATE waits for a writer, within the
    connection's busy timeout), so a writer committing meanwhile cannot make the check fail.
    A busy or read-only database raises (DB_ERRORS): that is no damage."""
    found = [f"SQLite: {r[0]}" for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
    if found or not fts:
        return found
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in fulltext.FTS_COLUMNS:  # names_fts, fields_fts: also against their text (card_terms)
            try:
                conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                if failure_kind(exc) in ("busy", "read_only", "full", "cannot_open"):
                    raise
                found.append(f"full-text index {table}: {exc}")
    finally:
        conn.execute("ROLLBACK")
    return found
