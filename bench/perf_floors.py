"""The floors the perf bench measures a rebuild and a reconcile against, in the same run: the raw
floor (files read and inserted as they are into a bare FTS5 table), the pre-tokenized floor
(memsync's own token streams into one), where the time before SQLite goes, and the walk of the
tree a reconcile cannot do without."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from .perf_rebuild import fresh_db


def pretokenized(vault: Path) -> list[tuple[str, str, str]]:
    """The FTS text memsync stores for each card, computed outside any timing."""
    from memsync import cjk
    from memsync.notes import parse

    rows = []
    for path in sorted(vault.rglob("*.md")):
        card = parse(path.read_bytes(), path.relative_to(vault).as_posix())
        rows.append(cjk.index_fields(card.title, card.aliases, card.tags, card.body))
    return rows


def bare_fts(db: Path, columns: str, tokenize: str) -> sqlite3.Connection:
    """A new index at `db` holding one FTS5 table `f`, with memsync's durability (WAL,
    synchronous NORMAL)."""
    fresh_db(db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"CREATE VIRTUAL TABLE f USING fts5({columns}, tokenize = '{tokenize}')")
    return conn


def floor_insert(db: Path, rows: list[tuple[str, str, str]]) -> float:
    """The floor: the same text into a bare FTS5 table, one transaction, same durability."""
    conn = bare_fts(db, "title, tags, body", "unicode61 remove_diacritics 0")
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO f (title, tags, body) VALUES (?, ?, ?)", rows)
    conn.execute("COMMIT")
    seconds = time.perf_counter() - start
    conn.close()
    return seconds


def raw_floor(db: Path, vault: Path) -> float:
    """The raw floor: walk the vault, read every note and insert its file name and its text as
    they are into an FTS5 `unicode61` table, in one transaction. No parsing, no tokenizing in
    Python: what the least an FTS5 index of these files costs."""
    conn = bare_fts(db, "name, text", "unicode61")
    start = time.perf_counter()
    paths = []
    stack = [str(vault)]
    while stack:
        for entry in os.scandir(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.name.endswith(".md"):
                paths.append(entry.path)

    def rows():
        for path in paths:
            with open(path, "rb") as handle:
                yield os.path.basename(path)[:-3], handle.read().decode("utf-8", "replace")

    conn.execute("BEGIN")
    conn.executemany("INSERT INTO f (name, text) VALUES (?, ?)", rows())
    conn.execute("COMMIT")
    seconds = time.perf_counter() - start
    conn.close()
    return seconds


def prep_costs(vault: Path) -> dict:
    """Where a rebuild's time can go before SQLite: reading, parsing, tokenizing (one pass each)."""
    from memsync import cjk
    from memsync.notes import parse

    paths = sorted(vault.rglob("*.md"))
    start = time.perf_counter()
    blobs = [(p.relative_to(vault).as_posix(), p.read_bytes()) for p in paths]
    read = time.perf_counter() - start
    start = time.perf_counter()
    cards = [parse(data, rel) for rel, data in blobs]
    parsed = time.perf_counter() - start
    start = time.perf_counter()
    for card in cards:
        cjk.index_fields(card.title, card.aliases, card.tags, card.body)
    tokenized = time.perf_counter() - start
    return {"read_s": read, "parse_s": parsed, "tokenize_s": tokenized}


def walk_floor(vault: Path) -> float:
    """List every folder and lstat every file: what a reconcile does where folder stamps
    cannot stand in for the listings (memsync.folders), and the first one after an index."""
    start = time.perf_counter()
    stack = [str(vault)]
    while stack:
        for entry in os.scandir(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                entry.stat(follow_symlinks=False)
    return time.perf_counter() - start
