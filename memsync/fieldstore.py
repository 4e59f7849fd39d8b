"""The rows a card's fields become beside its `cards` row: its FTS rows, its exact keys,
and the outgoing links of its file. Written and deleted together, keyed by cards.seq.

The links field of a card is filled in afterwards by memsync.backlinks, from the links rows of
the files pointing at it; every change here names the link names it touched, so that step
revisits only the cards those could resolve to.
"""

from __future__ import annotations

import json

from . import fts
from .fields import CardFields


def insert(conn, seq: int, source: str, file: str, f: CardFields) -> set[tuple[str, str]]:
    """Store the derived rows of the card at `seq`; returns the (source, name)s to refresh."""
    conn.execute(
        "UPDATE cards SET tag_set = ?, name = ? WHERE seq = ?",
        (json.dumps(list(f.tag_set), ensure_ascii=False), f.name, seq),
    )
    fts.insert(conn, seq, {"title": f.title, "h1": f.h1, "headings": f.headings, "tags": f.tags,
                           "links": ""}, f.body)
    conn.executemany(
        "INSERT INTO exact_keys (key, seq, strength) VALUES (?, ?, ?)",
        [(key, seq, strength) for key, strength in f.exact],
    )
    conn.executemany(
        "INSERT INTO links (source, file, pos, target, name, text) VALUES (?, ?, ?, ?, ?, ?)",
        [(source, file, pos, target, name, text)
         for pos, (target, name, text) in enumerate(f.links)],
    )
    touched = {(source, name) for _, name, _ in f.links}
    return touched | {(source, f.name)} if f.name else touched


def delete(conn, source: str, file: str, seqs: list[int]) -> set[tuple[str, str]]:
    """Drop the derived rows of a file's cards; returns the (source, name)s to refresh."""
    touched = {(source, name) for (name,) in conn.execute(
        "SELECT name FROM links WHERE source = ? AND file = ?", (source, file))}
    conn.execute("DELETE FROM links WHERE source = ? AND file = ?", (source, file))
    for seq in seqs:
        # the seqs are cards rows still there: their body gives back the FTS text to delete
        name, body = conn.execute("SELECT name, body FROM cards WHERE seq = ?", (seq,)).fetchone()
        if name:
            touched.add((source, name))
        fts.delete(conn, seq, body)
        conn.execute("DELETE FROM exact_keys WHERE seq = ?", (seq,))
    return touched


def move(conn, source: str, src: str, dst: str, name: str | None) -> set[tuple[str, str]]:
    """A file's rows under its new path: its outgoing links, and its own name."""
    touched = {(source, n) for (n,) in conn.execute(
        "SELECT name FROM cards WHERE source = ? AND file = ? AND name IS NOT NULL", (source, src))}
    conn.execute("UPDATE links SET file = ? WHERE source = ? AND file = ?", (dst, source, src))
    conn.execute("UPDATE cards SET name = ? WHERE source = ? AND file = ? AND name IS NOT NULL",
                 (name, source, src))
    return touched | ({(source, name)} if name else set()) | {(source, n) for (n,) in conn.execute(
        "SELECT name FROM links WHERE source = ? AND file = ?", (source, dst))}
