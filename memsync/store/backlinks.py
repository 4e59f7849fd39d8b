"""Anchor text: the words of the links pointing at a card (wikilinks, and Markdown links to a
note: `[label](Note.md)`) become a field of that card.

Obsidian resolves `[[Target]]` by file name, case-insensitively, and `[[folder/Target]]` by the
end of the path; when several notes share the name, memsync picks the one nearest the vault
root (then the first path in order), so the answer depends only on the notes of that name and
never on the order files were indexed. A note's links to itself do not count.

Which card a link resolves to depends only on the links and cards sharing its last segment (its
`name`), so after any change, refreshing the names it touched gives the same rows a rebuild
does (tests/test_properties.py).
"""

from __future__ import annotations

import json
from collections import defaultdict

from memsync import cjk
from memsync.store import fts
from memsync.store.fields import card_name

# The links with one of the names of a JSON list, from the cards of a source, in the linking
# cards' path order. CROSS JOIN keeps those links the outer loop: left to itself, SQLite walked
# every card of the source in path order to spare the sort (a save at 100,000 cards: 18 ms
# here, against 0.02 ms).
LINKS_OF_NAMES = (
    "SELECT l.seq, coalesce(l.target, l.name), l.name, l.text FROM links l "
    "CROSS JOIN cards c ON c.seq = l.seq WHERE l.name IN (SELECT value FROM json_each(?)) "
    "AND c.source = ? ORDER BY c.path, l.pos")


def resolve(target: str, candidates: list[tuple[str, str, int]]) -> int | None:
    """The seq a folded target resolves to among (folded path without .md, path, seq)."""
    if "/" in target:
        candidates = [c for c in candidates if c[0] == target or c[0].endswith("/" + target)]
    if not candidates:
        return None
    return min(candidates, key=lambda c: (c[0].count("/"), c[0], c[1]))[2]


def all_names(conn) -> set[tuple[str, str]]:
    return {tuple(r) for r in conn.execute(
        "SELECT source, name FROM cards WHERE name IS NOT NULL "
        "UNION SELECT c.source, l.name FROM links l JOIN cards c USING (seq)")}


def refresh(conn, touched: set[tuple[str, str]], waiting: fts.Waiting | None = None) -> int:
    """Recompute the links field and in-link count of every card a touched name may resolve
    to; returns how many cards had their full-text rows written again (not those `waiting`
    to be written)."""
    by_source: dict[str, list[str]] = defaultdict(list)
    for source, name in touched:
        by_source[source].append(name)
    changed: dict[int, str] = {}
    for source, names in by_source.items():
        wanted = json.dumps(sorted(set(names)), ensure_ascii=False)
        cards = conn.execute(
            "SELECT seq, path, name, link_text, inlinks FROM cards WHERE source = ? AND name IN "
            "(SELECT value FROM json_each(?))", (source, wanted)).fetchall()
        candidates: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
        for seq, path, name, _, _ in cards:
            candidates[name].append((card_name(path), path, seq))  # type: ignore[arg-type]  # named: a .md file
        texts: dict[int, list[str]] = defaultdict(list)
        linking: dict[int, set[int]] = defaultdict(set)
        # in the linking notes' path order, as a rebuild would meet them
        for linker, target, name, text in conn.execute(LINKS_OF_NAMES, (wanted, source)):
            seq = resolve(target, candidates.get(name, []))
            if seq is None or seq == linker:
                continue
            texts[seq].append(text)
            linking[seq].add(linker)
        for seq, _, _, old_text, old_count in cards:
            text, count = "\n".join(texts.get(seq, ())), len(linking.get(seq, ()))
            if (text, count) != (old_text, old_count):
                conn.execute("UPDATE cards SET link_text = ?, inlinks = ? WHERE seq = ?",
                             (text, count, seq))
                changed[seq] = text
    rewritten = 0
    if changed:  # the FTS rows are rewritten from the body: read once for all of them
        bodies = conn.execute("SELECT seq, body FROM cards WHERE seq IN "
                              "(SELECT value FROM json_each(?))", (json.dumps(list(changed)),))
        for seq, body in bodies:
            rewritten += fts.set_links(conn, seq, cjk.to_index_text(changed[seq]), body, waiting)
    return rewritten


# meta key, set while a bulk load has carried link names it has not yet refreshed (Carried)
UNSETTLED = "links_unsettled"


class Carried:
    """The link names a bulk load (a first index, a big change: many transactions in a row)
    refreshes once, at its end. Each transaction refreshes at its end only the names of the
    cards it wrote (their full-text rows wait for it: memsync.store.fts.Waiting); a card written
    by an earlier one, which later files' links can change again, would have had its rows
    written anew in every transaction that linked it. Its links field lags until the load ends.
    A process killed before then leaves the index marked (UNSETTLED) for the next load to
    settle (settle_unsettled)."""

    def __init__(self) -> None:
        self.names: set[tuple[str, str]] = set()

    def keep(self, conn, touched: set[tuple[str, str]], now: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """Of the `touched` names, those in `now` to refresh in this transaction; the others
        are carried, and the mark is written with the transaction that leaves them."""
        later = touched - now
        if later:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (UNSETTLED,))
            self.names |= later
        return touched & now

    def settle(self, conn, waiting: fts.Waiting | None = None) -> int:
        """Refresh every carried name, inside a transaction; returns refresh()'s count."""
        rewritten = refresh(conn, self.names, waiting) if self.names else 0
        conn.execute("DELETE FROM meta WHERE key = ?", (UNSETTLED,))
        self.names = set()
        return rewritten


def settle_unsettled(conn) -> int | None:
    """Inside a transaction: when a bulk load ended before settling its links, refresh every
    name (what it carried is lost with it); returns refresh()'s count, or None when none did."""
    if conn.execute("SELECT 1 FROM meta WHERE key = ?", (UNSETTLED,)).fetchone() is None:
        return None
    rewritten = refresh(conn, all_names(conn))
    conn.execute("DELETE FROM meta WHERE key = ?", (UNSETTLED,))
    return rewritten
