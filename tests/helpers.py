"""Test helpers that read the index back through the library."""

from __future__ import annotations

from memsync import api, config
from memsync.index import Index
from memsync.search import Query
from memsync.sync import Indexer


def indexer(db_path=None):
    cfg = config.load()
    index = Index(db_path or cfg.db.path)
    return Indexer(index, cfg.sources), index


def sync():
    work, index = indexer()
    try:
        return work.reconcile()
    finally:
        index.close()


def found(text: str, **filters) -> list[str]:
    """Paths of the cards a search returns."""
    return [h["path"] for h in api.search(config.load(), Query(text, **filters))["hits"]]


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
    tokens = indexed_tokens(index.conn)
    for row in index.conn.execute(
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
