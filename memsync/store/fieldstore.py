"""The rows a card's fields become beside its `cards` row: its FTS rows, its exact keys,
and its outgoing links. Written and deleted together, keyed by cards.seq.

The links field of a card is filled in afterwards by memsync.store.backlinks, from the links rows of
the cards pointing at it; every change here names the link names it touched, so that step
revisits only the cards those could resolve to.
"""

from __future__ import annotations

import json

from memsync.store import fts
from memsync.store.fields import CardFields

# A list of strings as the JSON columns of `cards` hold it (tags, aliases, tag_set). One encoder
# for all: json.dumps with ensure_ascii=False builds a new one on every call (2.0 against 1.2 µs,
# three calls a card in the single writer of a rebuild).
json_list = json.JSONEncoder(ensure_ascii=False).encode


def card_columns(f: CardFields) -> tuple[str, str | None]:
    """The values of the card's own row that come from its fields: (tag_set, name)."""
    return json_list(list(f.tag_set)), f.name


def insert(conn, seq: int, source: str, f: CardFields) -> set[tuple[str, str]]:
    """Store the derived rows of the card at `seq`, its card_columns included; returns the
    (source, name)s to refresh."""
    conn.execute("UPDATE cards SET tag_set = ?, name = ? WHERE seq = ?", (*card_columns(f), seq))
    return insert_rows(conn, seq, source, f)


def insert_rows(conn, seq: int, source: str, f: CardFields, waiting: fts.Waiting | None = None,
                links: str = "") -> set[tuple[str, str]]:
    """insert() for a card whose row was written with its card_columns already; its full-text
    rows wait in `waiting` when given (memsync.store.fts.Waiting). `links`: the links field's
    token stream, as its row says (empty until memsync.store.backlinks fills it in)."""
    fts.insert(conn, seq, {"title": f.title, "h1": f.h1, "headings": f.headings, "tags": f.tags,
                           "links": links}, f.body, waiting)
    if f.exact:
        conn.executemany("INSERT INTO exact_keys (key, seq, strength) VALUES (?, ?, ?)",
                         [(key, seq, strength) for key, strength in f.exact])
    insert_links(conn, seq, f.links)
    touched = {(source, name) for _, name, _ in f.links}
    return touched | {(source, f.name)} if f.name else touched


def insert_links(conn, seq: int, links) -> None:
    """The outgoing links of the card at `seq`, (folded target, name, anchor text) each. The
    target is stored only when it is more than its name (has a folder): most links are a name."""
    if not links:  # most cards: no statement at all
        return
    conn.executemany(
        "INSERT INTO links (seq, pos, name, target, text) VALUES (?, ?, ?, ?, ?)",
        [(seq, pos, name, None if target == name else target, text)
         for pos, (target, name, text) in enumerate(links)],
    )


def delete(conn, source: str, cards: list[tuple[int, str | None, str]],
           waiting: fts.Waiting | None = None) -> set[tuple[str, str]]:
    """Drop the derived rows of cards still in `cards`, given as (seq, name, body): the body
    gives back the FTS text to delete (unless the rows are still `waiting`). Returns the
    (source, name)s to refresh."""
    touched = {(source, name) for seq, name, _ in cards if name}
    for seq, _, body in cards:
        touched |= {(source, name) for (name,) in conn.execute(
            "SELECT name FROM links WHERE seq = ?", (seq,))}
        conn.execute("DELETE FROM links WHERE seq = ?", (seq,))
        fts.delete(conn, seq, body, waiting)
        conn.execute("DELETE FROM exact_keys WHERE seq = ?", (seq,))
    return touched


def move(conn, source: str, src: str, name: str | None) -> set[tuple[str, str]]:
    """The names a file's move touches: its own, old and new (`name`), and those it links to
    (the order of a links field follows the linking paths). Its rows are keyed by seq, which
    a move keeps, so only its name changes."""
    rows = conn.execute("SELECT seq, name FROM cards WHERE source = ? AND file = ?",
                        (source, src)).fetchall()
    touched = {(source, n) for _, n in rows if n} | ({(source, name)} if name else set())
    for seq, old in rows:
        if old:
            conn.execute("UPDATE cards SET name = ? WHERE seq = ?", (name, seq))
        touched |= {(source, n) for (n,) in conn.execute(
            "SELECT name FROM links WHERE seq = ?", (seq,))}
    return touched
