"""The rows behind semantic search: vectors per text, which text each card was embedded from.

A vector belongs to a text (its sha256), not to a card: `card_vectors` says which text each card
was embedded from and at which file hash, so a card is current while its file is unchanged.
The vectors themselves are BLOBs here; memsync.semantic.store turns them into arrays.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from memsync.store.index import Index

PENDING_SQL = """
    SELECT c.id, c.seq, c.title, c.body, f.hash AS file_hash FROM cards c
    JOIN files f ON f.source = c.source AND f.path = c.file
    LEFT JOIN card_vectors e ON e.id = c.id
    LEFT JOIN vectors v ON v.model = ? AND v.text_hash = e.text_hash
    WHERE f.hash != '' AND (e.id IS NULL OR e.file_hash != f.hash OR v.text_hash IS NULL)
"""
CURRENT_SQL = """
    FROM card_vectors e
    JOIN cards c ON c.id = e.id
    JOIN files f ON f.source = c.source AND f.path = c.file AND f.hash = e.file_hash
    JOIN vectors v ON v.model = ? AND v.text_hash = e.text_hash
"""
# Every card change inserts or deletes a cards row (a new seq, or a new count) and every vector
# write bumps `semantic_version`: three cheap reads that change whenever the vectors a search
# reads would (memsync.semantic.store caches on them).
# An edit of the newest card deletes and inserts its row under the same seq (count and max
# unchanged): the count of changes (Index.mark_changed) tells it apart.
FINGERPRINT_SQL = """
    SELECT (SELECT count(*) FROM cards), (SELECT max(seq) FROM cards),
           (SELECT value FROM meta WHERE key = 'semantic_version'),
           (SELECT value FROM meta WHERE key = 'changes')
"""
CHUNK = 500  # ids per IN (...) list: well under SQLite's parameter limit


def pending(index: Index, model: str, limit: int, below: int | None = None) -> list[sqlite3.Row]:
    """Cards without a vector for their current content, most recently indexed first; with
    `below`, only those indexed before seq `below` (the cards of a batch still being embedded
    are not handed out twice)."""
    if below is None:
        return index._conn.execute(PENDING_SQL + " ORDER BY c.seq DESC LIMIT ?", (model, limit)).fetchall()
    return index._conn.execute(PENDING_SQL + " AND c.seq < ? ORDER BY c.seq DESC LIMIT ?",
                               (model, below, limit)).fetchall()


def counts(index: Index, model: str) -> dict[str, int]:
    cards = index._conn.execute("SELECT count(*) FROM cards").fetchone()[0]
    current = index._conn.execute(f"SELECT count(*) {CURRENT_SQL}", (model,)).fetchone()[0]
    return {"cards": cards, "with_vectors": current, "pending": cards - current}


def any_vectors(index: Index) -> bool:
    return index._conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None


def has(index: Index, model: str, digest: str) -> bool:
    return index._conn.execute(
        "SELECT 1 FROM vectors WHERE model = ? AND text_hash = ?", (model, digest)
    ).fetchone() is not None


def put(index: Index, model: str, digest: str, parts: int, blob: bytes) -> None:
    index._conn.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", (model, digest, parts, blob))
    bump(index)


def link(index: Index, card_id: int, file_hash: str, digest: str) -> None:
    index._conn.execute("INSERT OR REPLACE INTO card_vectors VALUES (?, ?, ?)", (card_id, file_hash, digest))
    bump(index)


def record_rate(index: Index, cards_per_second: float) -> None:
    """How fast this machine embeds cards, for the ETA in stats."""
    index._conn.execute("INSERT OR REPLACE INTO meta VALUES ('semantic_rate', ?)", (f"{cards_per_second:.3f}",))


def rate(index: Index) -> float | None:
    value = index.meta("semantic_rate")
    return float(value) if value else None


def prune(index: Index) -> int:
    """Forget what no card can come back to. A deleted card's id stays bound to its path (a
    restore brings it back), so its vectors stay too; a retired id's go."""
    gone = index._conn.execute(
        "DELETE FROM card_vectors WHERE id NOT IN (SELECT id FROM card_ids WHERE path IS NOT NULL)"
    ).rowcount
    if gone:
        bump(index)
    return index._conn.execute(
        "DELETE FROM vectors WHERE text_hash NOT IN (SELECT text_hash FROM card_vectors)"
    ).rowcount


def bump(index: Index) -> None:
    """Record that vectors or links changed (inside the writing transaction)."""
    index._conn.execute("INSERT INTO meta VALUES ('semantic_version', '1') ON CONFLICT(key) "
                        "DO UPDATE SET value = CAST(value AS INTEGER) + 1")


def database_file(index: Index) -> str:
    return index._conn.execute("PRAGMA database_list").fetchone()[2]


def fingerprint(index: Index) -> tuple[object, ...]:
    return tuple(index._conn.execute(FINGERPRINT_SQL).fetchone())


def current(index: Index, model: str) -> list[tuple[int, str]]:
    """(card id, text hash) of every card with a current vector, by id."""
    return [tuple(r) for r in index._conn.execute(
        f"SELECT c.id, e.text_hash {CURRENT_SQL} ORDER BY c.id", (model,))]


def blobs(index: Index, model: str, digests: list[str]) -> Iterator[tuple[str, int, bytes]]:
    """(text hash, passages, BLOB) of each of these texts that has vectors."""
    for at in range(0, len(digests), CHUNK):
        part = digests[at : at + CHUNK]
        yield from index._conn.execute(
            "SELECT text_hash, parts, vecs FROM vectors WHERE model = ? AND text_hash IN "
            f"({','.join('?' * len(part))})", (model, *part))


def openings(index: Index, ids: Iterable[int], chars: int) -> Iterator[tuple[int, str | None, str | None]]:
    """(id, title, the first `chars` characters of the body) of these cards."""
    ids = list(ids)
    for at in range(0, len(ids), CHUNK):
        part = ids[at : at + CHUNK]
        yield from index._conn.execute(
            f"SELECT id, title, substr(body, 1, {int(chars)}) FROM cards WHERE id IN "
            f"({','.join('?' * len(part))})", part)
