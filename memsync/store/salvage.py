"""A damaged index file: tell it from a sound one, save what has no second source, set it aside.

Everything in the index is derived from the files except the rows of KEPT (ids, read counts, and
whatever later tables hold history of their own): a rebuild recomputes the rest. So a malformed
or truncated file is not a dead end: read what of KEPT can still be read, build a fresh index
beside it holding those rows, rename the damaged file to `<name>.damaged-<time>` (kept for a
person to look at, never deleted), move the fresh one into its place, and say what was lost.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memsync.store import migrations
from memsync.store.connection import DB_ERRORS, failure_kind, open_existing, open_read_only
from memsync.store.index import Index

# Tables a rebuild keeps, oldest first: ids and read counts (no second source), the retrieval
# log and feedback (memsync.lifecycle), and the vectors of semantic search (derived, but hours
# of embedding). A table missing from a file is skipped.
KEPT = ("card_ids", "card_stats", "vectors", "card_vectors", "retrieval_log", "feedback")
SIDECARS = ("-wal", "-shm")
# `.<index name>.<pid>.salvaged` (and its sidecars): a replacement being built; the pid is its
# writer's, so `memsync doctor --fix` can sweep one whose process was killed (doctor.leftovers).
STAGED_NAME = re.compile(r"^\..+\.(\d+)\.salvaged(?:-wal|-shm)?$")
# How often the saved rows are read again when they changed while their new file was built.
REREADS = 3


@dataclass
class Saved:
    rows: dict[str, tuple[list[str], list[tuple]]] = field(default_factory=dict)  # table -> (columns, rows)
    lost: list[str] = field(default_factory=list)  # what could not be read, in words

    def counts(self) -> dict[str, int]:
        return {table: len(rows) for table, (_cols, rows) in self.rows.items()}


def damage(path: Path) -> str | None:
    """What is wrong with the file at `path` (SQLite's own words), None when it reads as sound.
    A memsync index whose schema version was reset to 0 counts as damaged: nothing can migrate it.
    Busy or unreadable for other reasons is not damage: those errors are raised."""
    try:
        with contextlib.closing(open_checking(path)) as conn:
            found = [row[0] for row in conn.execute("PRAGMA quick_check") if row[0] != "ok"]
            lost_version = migrations.unversioned(conn)
    except DB_ERRORS as exc:
        if failure_kind(exc) == "damaged":
            return str(exc)
        raise
    if not found and lost_version and lost_version.ours:  # another program's file is not ours to set aside
        return "its schema version is lost (user_version 0)"
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
    """Every row of KEPT that can still be read, table by table: the damaged pages of a table are
    stepped over (readable_rows), so rows past them are kept too."""
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
            try:
                columns, rows, skipped = readable_rows(conn, table)
            except DB_ERRORS as exc:  # not even its columns: the schema entry itself is bad
                saved.lost.append(f"{table}: cannot be read ({exc}); its rows are lost")
                continue
            if skipped:
                saved.lost.append(f"{table}: {skipped} damaged {'range' if skipped == 1 else 'ranges'} "
                                  f"of rows could not be read; the {len(rows)} rows around them are kept")
            if rows:
                saved.rows[table] = (columns, rows)
    return saved


# Rowids are signed 64-bit integers.
LOWEST, HIGHEST = -(2**63), 2**63 - 1


def readable_rows(conn: sqlite3.Connection, table: str) -> tuple[list[str], list[tuple], int]:
    """(columns, rows, damaged ranges stepped over). Read in rowid order; where a read fails, the
    rows up to the damage are taken one at a time, and the read goes on from the first rowid past
    it (next_readable). A damaged page then costs only its own rows: stopping at the first error
    kept 1,470 of 5,002 ids when three pages of card_ids were overwritten."""
    columns = [d[0] for d in conn.execute(f"SELECT * FROM {table} LIMIT 0").description]
    rows: list[tuple] = []
    start: int | None = LOWEST
    skipped = 0
    while start is not None:
        at = start  # the rowid the next row is read from
        try:
            for row in conn.execute(_ROWS.format(table=table), (at,)):
                start = _keep(rows, row)
                if start is None:
                    break
                at = start
            break
        except DB_ERRORS:
            # The sqlite3 module reads a row ahead before it hands one over, so the failed read
            # dropped the last readable row: take it alone.
            one = _first_row(conn, table, at)
            if one is not None:
                start = _keep(rows, one[0]) if one else None
                continue
            skipped += 1
            start = next_readable(conn, table, at)
    return columns, rows, skipped


_ROWS = "SELECT rowid, * FROM {table} WHERE rowid >= ? ORDER BY rowid"


def _keep(rows: list[tuple], row: tuple) -> int | None:
    """Keep the row (its rowid first); returns the rowid to read from next."""
    rows.append(tuple(row[1:]))
    return row[0] + 1 if row[0] < HIGHEST else None


def _first_row(conn: sqlite3.Connection, table: str, start: int) -> list[tuple] | None:
    """[the first row from rowid `start`] ([] past the last row), None when it cannot be read."""
    try:
        return [tuple(r) for r in conn.execute(_ROWS.format(table=table) + " LIMIT 1", (start,))]
    except DB_ERRORS:
        return None


def next_readable(conn: sqlite3.Connection, table: str, failed: int) -> int | None:
    """The lowest rowid above `failed` from which a row can be read again (None: from none).
    Whether a read from a rowid fails changes once, at the end of the damaged pages, so it is
    found by probing further and further, then halving the gap back."""
    bad, step = failed, 1
    while True:
        probe = min(bad + step, HIGHEST)
        if _first_row(conn, table, probe) is not None:
            break
        if probe == HIGHEST:
            return None
        bad, step = probe, step * 2
    good = probe
    while good - bad > 1:
        middle = (bad + good) // 2
        bad, good = (bad, middle) if _first_row(conn, table, middle) is not None else (middle, good)
    return good


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
    fresh, unrestored = built_beside(path, saved)
    for _again in range(REREADS):  # a writer still at the damaged file (an id given meanwhile)
        now = read(path)
        if now == saved:
            break
        _remove(fresh)
        saved = now
        fresh, unrestored = built_beside(path, saved)
    aside = set_aside(path)
    # Closed by its only connection, the new file has no -wal or -shm: SQLite folds and removes
    # them when the last connection to a file closes.
    os.replace(fresh, path)
    return {"damaged": problem, "kept_as": str(aside), "saved": saved.counts(),
            "lost": saved.lost + unrestored}


def built_beside(path: Path, saved: Saved) -> tuple[Path, list[str]]:
    """A fresh index holding the saved rows, made under a name of its own beside `path`, and
    what could not be put back. It takes `path` only once complete: a process that opens `path`
    meanwhile (a watcher that saw the file replaced, another memsync) finds the damaged file and
    says so, never an empty index where it would give the saved cards ids of its own. A failure
    here leaves the damaged file where it was, for the next repair to save from again."""
    fresh = path.with_name(f".{path.name}.{os.getpid()}.salvaged")
    _remove(fresh)  # one this pid left before (a pid is reused)
    try:
        index = Index(fresh)
        try:
            return fresh, restore(index, saved)
        finally:
            index.close()
    except BaseException:
        _remove(fresh)
        raise


def _remove(db: Path) -> None:
    for tail in ("", *SIDECARS):
        with contextlib.suppress(FileNotFoundError):
            db.with_name(db.name + tail).unlink()
