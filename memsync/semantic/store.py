"""Vectors in memsync's own database (this Python's sqlite3 cannot load extensions, and numpy
over BLOBs is faster than a vector extension at this size anyway).

A vector belongs to a text (its sha256), not to a card: `card_vectors` says which text each card
was embedded from and at which file hash, so a card is current while its file is unchanged.
The rows and their SQL are memsync.store.vectors; this module turns them into arrays.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from memsync.store import vectors as rows
from memsync.store.index import Index

# The row operations are the store's; these names stay here, where the embedding worker uses them.
pending, counts, has, link, record_rate, prune, any_vectors = (
    rows.pending, rows.counts, rows.has, rows.link, rows.record_rate, rows.prune, rows.any_vectors)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def put(index: Index, model: str, digest: str, vecs) -> None:
    """Store a text's passage vectors (float32 rows) as float16: half the bytes, and cosine
    differences far below anything that reorders a ranking."""
    import numpy as np

    rows.put(index, model, digest, len(vecs), np.asarray(vecs, dtype=np.float16).tobytes())


# Decoded vectors by text hash, per database file: a text's vectors never change, so a
# long-lived process (an MCP server) reads each BLOB once. The assembled matrix is reused while
# the fingerprint holds: every batch of card changes is counted (Index.mark_changed) and every
# vector write bumps `semantic_version`, so a few cheap reads (memsync.store.vectors.fingerprint)
# stand in for the join over every card (27 ms at 10k cards).
_decoded: dict[tuple[str, str], dict] = {}


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


def load(index: Index, model: str) -> Vectors:
    """The vectors of every card with a current vector, reassembled only when the fingerprint
    says something changed."""
    import numpy as np

    cache = _decoded.setdefault((rows.database_file(index), model),
                                {"vecs": {}, "scripts": {}, "fingerprint": None})
    fingerprint = rows.fingerprint(index)
    if fingerprint == cache["fingerprint"]:
        return cache["vectors"]
    key = tuple(rows.current(index, model))
    vecs = cache["vecs"]
    wanted = list({digest for _id, digest in key if digest not in vecs})
    for digest, parts, blob in rows.blobs(index, model, wanted):
        vecs[digest] = np.frombuffer(blob, dtype=np.float16).reshape(parts, -1)
    written = _scripts(index, cache["scripts"], key)
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


def _scripts(index: Index, known: dict, key: tuple) -> dict:
    """The script of each text (by its hash), read from the start of its card the first time
    that text is seen: a text's script never changes."""
    from . import scripts

    first: dict[str, int] = {}  # digest -> a card holding that text
    for card_id, digest in key:
        if digest not in known:
            first.setdefault(digest, card_id)
    todo = {card_id: digest for digest, card_id in first.items()}
    digests, samples = [], []
    for card_id, title, head in rows.openings(index, todo, scripts.SAMPLE):
        digests.append(todo[card_id])
        samples.append(scripts.sample(title or "", head or ""))
    known.update(zip(digests, scripts.of_cards(samples)))
    return known
