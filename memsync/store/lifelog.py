"""The retrieval log and the use of each card: what was searched, what came back, what was opened,
what helped. SQL only; memsync.lifecycle.log and .feedback decide what goes in.

Like card_stats (whose columns the per-card counts join), none of it can be derived from the files:
`index --rebuild` keeps it, only `delete --purge` clears a card's counts and feedback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memsync.store.connection import BUSY_TIMEOUT_MS, DB_ERRORS

if TYPE_CHECKING:
    from memsync.store.index import Index

# How long a search may wait for another writer before its log entry is dropped: a search never
# waits on the log (a watcher's batch can hold the write lock for seconds).
LOG_WAIT_MS = 50
# An open is tied to the latest search that returned the card among this many last ones.
OPEN_LOOKBACK = 50
# meta key: when the first search was logged. The cap drops the oldest entries, so the log's
# own first entry does not say how long searches have been watched.
STARTED = "log_started"


@contextmanager
def _short_wait(index: Index) -> Iterator[None]:
    index._conn.execute(f"PRAGMA busy_timeout = {LOG_WAIT_MS}")
    try:
        yield
    finally:
        index._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def record_search(index: Index, at: str, query: str, filters: dict, matched: str | None,
                  hits: list[tuple[int, float]], client: str | None, cap: int) -> bool:
    """Log one search and count its hits as returned, in one short transaction. A database that
    is read-only or busy is skipped (False, with a debug line): the search itself has succeeded."""
    conn = index._conn
    try:
        with _short_wait(index):
            conn.execute("BEGIN IMMEDIATE")
            try:
                seq = conn.execute(
                    "INSERT INTO retrieval_log (at, query, filters, matched, hits, client) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (at, query, json.dumps(filters, ensure_ascii=False), matched,
                     json.dumps([[i, round(s, 4)] for i, s in hits]), client),
                ).lastrowid
                if hits:
                    conn.execute(
                        "INSERT INTO card_stats (id, returned_count, last_returned_at) "
                        "SELECT value, 1, ? FROM json_each(?) WHERE true ON CONFLICT(id) DO UPDATE "
                        "SET returned_count = returned_count + 1, last_returned_at = excluded.last_returned_at",
                        (at, json.dumps([i for i, _ in hits])),
                    )
                conn.execute("DELETE FROM retrieval_log WHERE seq <= ?", ((seq or 0) - cap,))
                conn.execute(f"INSERT OR IGNORE INTO meta VALUES ('{STARTED}', ?)", (at,))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
    except DB_ERRORS as exc:  # read-only, locked past LOG_WAIT_MS, disk full
        import logging  # only here: logging costs a search's start-up milliseconds

        logging.getLogger("memsync.lifelog").debug("search not logged: %s", exc)
        return False
    return True


def mark_opened(index: Index, card_id: int) -> None:
    """Note in the latest search that returned the card that it was opened (inside the caller's
    transaction: show's read count)."""
    index._conn.execute(
        "UPDATE retrieval_log SET opened = json_insert(opened, '$[#]', ?) WHERE seq = ("
        "  SELECT l.seq FROM (SELECT seq, hits, opened FROM retrieval_log ORDER BY seq DESC LIMIT ?) l"
        "  WHERE EXISTS (SELECT 1 FROM json_each(l.hits) h WHERE json_extract(h.value, '$[0]') = ?)"
        "  ORDER BY l.seq DESC LIMIT 1)"
        " AND NOT EXISTS (SELECT 1 FROM json_each(opened) o WHERE o.value = ?)",
        (card_id, OPEN_LOOKBACK, card_id, card_id),
    )


def last_query_for(index: Index, card_id: int) -> str | None:
    """The query of the latest logged search that returned the card (what feedback answers)."""
    row = index._conn.execute(
        "SELECT query FROM retrieval_log l WHERE EXISTS "
        "(SELECT 1 FROM json_each(l.hits) h WHERE json_extract(h.value, '$[0]') = ?) ORDER BY seq DESC LIMIT 1",
        (card_id,),
    ).fetchone()
    return row[0] if row else None


def record_feedback(index: Index, card_id: int, helpful: bool, query: str | None, at: str,
                    cap: int) -> None:
    """One verdict: its row (the newest `cap` are kept, as the log's entries are) and the card's
    count, which keeps every verdict."""
    with index.transaction() as conn:
        seq = conn.execute("INSERT INTO feedback (id, at, helpful, query) VALUES (?, ?, ?, ?)",
                           (card_id, at, int(helpful), query)).lastrowid
        conn.execute("DELETE FROM feedback WHERE seq <= ?", ((seq or 0) - cap,))
        column = "helpful_count" if helpful else "unhelpful_count"
        conn.execute(
            f"INSERT INTO card_stats (id, {column}) VALUES (?, 1) "
            f"ON CONFLICT(id) DO UPDATE SET {column} = {column} + 1", (card_id,))


USE_SQL = ("SELECT id, returned_count, read_count, helpful_count, unhelpful_count, "
           "last_returned_at, last_read_at FROM card_stats")


def _use(row) -> dict:
    return {"returned": row[1], "opened": row[2], "helpful": row[3], "unhelpful": row[4],
            "last_returned": row[5], "last_opened": row[6]}


EMPTY_USE = {"returned": 0, "opened": 0, "helpful": 0, "unhelpful": 0, "last_returned": None,
             "last_opened": None}


def use(index: Index, card_id: int) -> dict:
    row = index._conn.execute(USE_SQL + " WHERE id = ?", (card_id,)).fetchone()
    return _use(row) if row else dict(EMPTY_USE)


def uses(index: Index, card_ids: list[int]) -> dict[int, dict]:
    """The use of the given cards that have any (one query, for a page of hits)."""
    return {row[0]: _use(row) for row in index._conn.execute(
        USE_SQL + " WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(card_ids),))}


def use_all(index: Index) -> dict[int, dict]:
    return {row[0]: _use(row) for row in index._conn.execute(USE_SQL)}


def entries(index: Index, limit: int, query: str | None = None,
            card_id: int | None = None) -> list[dict]:
    """The newest entries first; `query`: those whose query holds the text (any case);
    `card_id`: those that returned the card."""
    sql = "SELECT seq, at, query, filters, matched, hits, client, opened FROM retrieval_log l"
    args: list[str | int] = []
    where = []
    if query:
        where.append("instr(lower(l.query), lower(?)) > 0")
        args.append(query)
    if card_id is not None:
        where.append("EXISTS (SELECT 1 FROM json_each(l.hits) h WHERE json_extract(h.value, '$[0]') = ?)")
        args.append(card_id)
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY seq DESC LIMIT ?"
    args.append(limit)
    return [
        {"seq": r[0], "at": r[1], "query": r[2], "filters": json.loads(r[3]), "matched": r[4],
         "hits": [{"id": i, "score": s} for i, s in json.loads(r[5])], "client": r[6],
         "opened": json.loads(r[7])}
        for r in index._conn.execute(sql, args)
    ]


def started(index: Index) -> str | None:
    """When searches began to be logged (its own time and zone); for an index logged before the
    mark was kept, the oldest entry left, which is no earlier than that."""
    return index.meta(STARTED) or index._conn.execute("SELECT min(at) FROM retrieval_log").fetchone()[0]


def count(index: Index) -> int:
    return index._conn.execute("SELECT count(*) FROM retrieval_log").fetchone()[0]


def feedback_of(index: Index, card_id: int) -> list[dict]:
    return [{"at": r[0], "helpful": bool(r[1]), "query": r[2]} for r in index._conn.execute(
        "SELECT at, helpful, query FROM feedback WHERE id = ? ORDER BY seq", (card_id,))]

