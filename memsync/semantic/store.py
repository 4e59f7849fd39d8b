"""Vectors in memsync's own database (this Python's sqlite3 cannot load extensions, and numpy
over BLOBs is faster than a vector extension at this size anyway).

A vector belongs to a text (its sha256), not to a card: `card_vectors` says which text each card
was embedded from and at which file hash, so a card is current while its file is unchanged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

PENDING_SQL = """
    SELECT c.id, c.title, c.body, f.hash AS file_hash FROM cards c
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


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pending(conn, model: str, limit: int) -> list:
    """Cards without a vector for their current content, most recently indexed first."""
    return conn.execute(PENDING_SQL + " ORDER BY c.seq DESC LIMIT ?", (model, limit)).fetchall()


def counts(conn, model: str) -> dict:
    cards = conn.execute("SELECT count(*) FROM cards").fetchone()[0]
    current = conn.execute(f"SELECT count(*) {CURRENT_SQL}", (model,)).fetchone()[0]
    return {"cards": cards, "with_vectors": current, "pending": cards - current}


def has(conn, model: str, digest: str) -> bool:
    return conn.execute(
        "SELECT 1 FROM vectors WHERE model = ? AND text_hash = ?", (model, digest)
    ).fetchone() is not None


def put(conn, model: str, digest: str, vecs) -> None:
    """Store a text's passage vectors (float32 rows) as float16: half the bytes, and cosine
    differences far below anything that reorders a ranking."""
    import numpy as np

    blob = np.asarray(vecs, dtype=np.float16).tobytes()
    conn.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", (model, digest, len(vecs), blob))
    bump(conn)


def link(conn, card_id: int, file_hash: str, digest: str) -> None:
    conn.execute("INSERT OR REPLACE INTO card_vectors VALUES (?, ?, ?)", (card_id, file_hash, digest))
    bump(conn)


def record_rate(conn, cards_per_second: float) -> None:
    """How fast this machine embeds cards, for the ETA in stats."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('semantic_rate', ?)", (f"{cards_per_second:.3f}",))


def prune(conn) -> int:
    """Forget what no card can come back to. A deleted card's id stays bound to its path (a
    restore brings it back), so its vectors stay too; a retired id's go."""
    gone = conn.execute(
        "DELETE FROM card_vectors WHERE id NOT IN (SELECT id FROM card_ids WHERE path IS NOT NULL)"
    ).rowcount
    if gone:
        bump(conn)
    return conn.execute(
        "DELETE FROM vectors WHERE text_hash NOT IN (SELECT text_hash FROM card_vectors)"
    ).rowcount


# Decoded vectors by text hash, per database file: a text's vectors never change, so a
# long-lived process (an MCP server) reads each BLOB once. The assembled matrix is reused while
# the fingerprint holds: every card change inserts or deletes a cards row (a new seq, or a new
# count) and every vector write bumps `semantic_version`, so three cheap reads stand in for the
# join over every card (27 ms at 10k cards).
_decoded: dict[tuple[str, str], dict] = {}
FINGERPRINT_SQL = """
    SELECT (SELECT count(*) FROM cards), (SELECT max(seq) FROM cards),
           (SELECT value FROM meta WHERE key = 'semantic_version')
"""


def bump(conn) -> None:
    """Record that vectors or links changed (inside the writing transaction)."""
    conn.execute("INSERT INTO meta VALUES ('semantic_version', '1') ON CONFLICT(key) "
                 "DO UPDATE SET value = CAST(value AS INTEGER) + 1")


@dataclass(frozen=True)
class Vectors:
    """Every current passage vector of one model, as the searcher reads them. Rows of one card
    are adjacent: card k's rows start at `starts[k]`, its id is `cards[k]`, and `scripts[k]` is
    the writing system it is mostly written in (an index into `script_names`)."""

    ids: Any  # card id per passage row
    matrix: Any  # float32 (rows, 384)
    starts: Any
    cards: Any
    scripts: Any
    script_names: tuple[str, ...] = ()


def load(conn, model: str) -> Vectors:
    """The vectors of every card with a current vector, reassembled only when the fingerprint
    says something changed."""
    import numpy as np

    file = conn.execute("PRAGMA database_list").fetchone()[2]
    cache = _decoded.setdefault((file, model), {"vecs": {}, "scripts": {}, "fingerprint": None})
    fingerprint = tuple(conn.execute(FINGERPRINT_SQL).fetchone())
    if fingerprint == cache["fingerprint"]:
        return cache["vectors"]
    current = conn.execute(f"SELECT c.id, e.text_hash {CURRENT_SQL} ORDER BY c.id", (model,)).fetchall()
    key = tuple(tuple(r) for r in current)
    vecs = cache["vecs"]
    wanted = list({digest for _id, digest in key if digest not in vecs})
    for at in range(0, len(wanted), 500):
        part = wanted[at : at + 500]
        for digest, parts, blob in conn.execute(
            "SELECT text_hash, parts, vecs FROM vectors WHERE model = ? AND text_hash IN "
            f"({','.join('?' * len(part))})", (model, *part),
        ):
            vecs[digest] = np.frombuffer(blob, dtype=np.float16).reshape(parts, -1)
    written = _scripts(conn, cache["scripts"], key)
    if len(vecs) > 2 * len(key) + 1000:  # forget texts no card holds any more
        live = {digest for _id, digest in key}
        cache["vecs"] = vecs = {d: v for d, v in vecs.items() if d in live}
        cache["scripts"] = written = {d: s for d, s in written.items() if d in live}
    key = tuple(r for r in key if len(vecs[r[1]]))  # a card with no passage row has no standing
    names = tuple(sorted({written.get(digest, "") for _id, digest in key}))
    code = {name: n for n, name in enumerate(names)}
    if not key:
        ids, matrix = np.zeros(0, dtype=np.int64), np.zeros((0, 384), dtype=np.float32)
    else:
        blocks = [vecs[digest] for _id, digest in key]
        ids = np.repeat(np.fromiter((i for i, _d in key), np.int64, len(key)),
                        [len(b) for b in blocks])
        matrix = np.concatenate(blocks).astype(np.float32)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(ids) else np.zeros(0, dtype=np.int64)
    scripts_of = np.fromiter((code[written.get(digest, "")] for _id, digest in key), np.int64, len(key))
    vectors = Vectors(ids, matrix, starts, ids[starts], scripts_of, names)
    cache.update(fingerprint=fingerprint, vectors=vectors)
    return vectors


def _scripts(conn, known: dict, key: tuple) -> dict:
    """The script of each text (by its hash), read from the start of its card the first time
    that text is seen: a text's script never changes."""
    from . import scripts

    first: dict[str, int] = {}  # digest -> a card holding that text
    for card_id, digest in key:
        if digest not in known:
            first.setdefault(digest, card_id)
    todo = {card_id: digest for digest, card_id in first.items()}
    ids, digests, samples = list(todo), [], []
    for at in range(0, len(ids), 500):
        part = ids[at : at + 500]
        for card_id, title, head in conn.execute(
            f"SELECT id, title, substr(body, 1, {scripts.SAMPLE}) FROM cards WHERE id IN "
            f"({','.join('?' * len(part))})", part,
        ):
            digests.append(todo[card_id])
            samples.append(scripts.sample(title or "", head or ""))
    known.update(zip(digests, scripts.of_cards(samples)))
    return known
