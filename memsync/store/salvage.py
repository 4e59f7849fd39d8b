"""A damaged index file: tell it from a sound one, save what has no second source, set it aside.

Everything in the index is derived from the files except the rows of KEPT (ids, read counts, and
whatever later tables hold history of their own): a rebuild recomputes the rest. So a malformed
or truncated file is not a dead end: read what of KEPT can still be read, rename the file to
`<name>.damaged-<time>` beside the new one (kept for a person to look at, never deleted), build
a fresh index, put the saved rows back, and say what was lost.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memsync.store.connection import DB_ERRORS, failure_kind, open_existing, open_read_only
from memsync.store.index import Index

# Tables a rebuild keeps, oldest first: ids and read counts (no second source), the retrieval
# log and feedback (memsync.lifecycle), and the vectors of semantic search (derived, but hours
# of embedding). A table missing from a file is skipped.
KEPT = ("card_ids", "card_stats", "vectors", "card_vectors", "retrieval_log", "feedback")
SIDECARS = ("-wal", "-shm")


@dataclass
class Saved:
    rows: dict[str, tuple[list[str], list[tuple]]] = field(default_factory=dict)  # table -> (columns, rows)
    lost: list[str] = field(default_factory=list)  # what could not be read, in words

    def counts(self) -> dict[str, int]:
        return {table: len(rows) for table, (_cols, rows) in self.rows.items()}


def damage(path: Path) -> str | None:
    """What is wrong with the file at `path` (SQLite's own words), None when it reads as sound.
    Busy or unreadable for other reasons is not damage: those errors are raised."""
    try:
        with contextlib.closing(open_checking(path)) as conn:
            found = [row[0] for row in conn.execute("PRAGMA quick_check") if row[0] != "ok"]
    except DB_ERRORS as exc:
        if failure_kind(exc) == "damaged":
            return str(exc)
        raise
    return "; ".join(found[:3]) if found else None


def open_checking(path: Path) -> sqlite3.Connection:
    """An ordinary connection (connection.open_existing, as memsync doctor's) that refuses changes
    (query_only); closing it may still fold committed WAL frames into the file, as closing any
    connection does. Not a `mode=ro` one: opened while another connection to the file was
    closing, that failed with SQLITE_IOERR_SHORT_READ, and the rebuild that asked stopped with
    "disk I/O error" (an MCP server's, about 1 rebuild in 80 in a test)."""
    conn = open_existing(path)
    conn.execute("PRAGMA query_only = ON")
    return conn


def read(path: Path) -> Saved:
    """Every row of KEPT that can still be read, table by table; a table cut short by the damage
    keeps the rows read before it."""
    saved = Saved()
    conn = open_read_only(path, lenient=True)
    try:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except DB_ERRORS as exc:
        conn.close()
        return Saved(lost=[f"ids and read counts: the file's table list cannot be read ({exc})"])
    with contextlib.closing(conn):
        for table in KEPT:
            if table not in tables:
                continue
            rows: list[tuple] = []
            try:
                cursor = conn.execute(f"SELECT * FROM {table}")
                columns = [d[0] for d in cursor.description]
                for row in cursor:
                    rows.append(tuple(row))
            except DB_ERRORS as exc:
                saved.lost.append(f"{table}: the damage stopped the read after {len(rows)} rows "
                                  f"({exc}); the rest is lost")
                if not rows:
                    continue
            saved.rows[table] = (columns, rows)
    return saved


def set_aside(path: Path) -> Path:
    """Rename the file (and its -wal/-shm) to `<name>.damaged-<time>`; returns the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside, n = path.with_name(f"{path.name}.damaged-{stamp}"), 2
    while aside.exists():
        aside, n = path.with_name(f"{path.name}.damaged-{stamp}-{n}"), n + 1
    os.replace(path, aside)
    for tail in SIDECARS:
        with contextlib.suppress(FileNotFoundError):
            os.replace(path.with_name(path.name + tail), aside.with_name(aside.name + tail))
    return aside


def restore(index: Index, saved: Saved) -> list[str]:
    """Put the saved rows into a fresh index (the columns both schemas have); returns what could
    not be put back."""
    problems = []
    with index.transaction() as conn:
        for table, (columns, rows) in saved.rows.items():
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            shared = [c for c in columns if c in have]
            if not shared:
                problems.append(f"{table}: this memsync has no such table; its rows were not put back")
                continue
            picks = [columns.index(c) for c in shared]
            conn.executemany(
                f"INSERT OR REPLACE INTO {table} ({', '.join(shared)}) "
                f"VALUES ({', '.join('?' * len(shared))})",
                ([row[i] for i in picks] for row in rows))
    return problems


def recover(path: Path, before_set_aside: Callable[[], None] | None = None) -> dict | None:
    """A damaged index replaced by a fresh one holding what could be saved (None when the file
    is missing or sound); the caller then rebuilds the derived rows from the files.
    `before_set_aside` runs once the damage is known, and may refuse (raise) before anything
    is touched."""
    if not path.is_file():
        return None
    problem = damage(path)
    if problem is None:
        return None
    if before_set_aside is not None:
        before_set_aside()
    saved = read(path)
    aside = set_aside(path)
    index = Index(path)
    try:
        lost = saved.lost + restore(index, saved)
    finally:
        index.close()
    return {"damaged": problem, "kept_as": str(aside), "saved": saved.counts(), "lost": lost}
