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

from . import cjk, fts


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
        "UNION SELECT source, name FROM links")}


def refresh(conn, touched: set[tuple[str, str]]) -> int:
    """Recompute the links field and in-link count of every card a touched name may resolve
    to; returns how many cards changed."""
    by_source: dict[str, list[str]] = defaultdict(list)
    for source, name in touched:
        by_source[source].append(name)
    changed = 0
    for source, names in by_source.items():
        wanted = json.dumps(sorted(set(names)), ensure_ascii=False)
        cards = conn.execute(
            "SELECT seq, path, name, link_text, inlinks FROM cards WHERE source = ? AND name IN "
            "(SELECT value FROM json_each(?))", (source, wanted)).fetchall()
        candidates = defaultdict(list)
        for seq, path, name, _, _ in cards:
            candidates[name].append((cjk.normalize(path[:-3]), path, seq))
        texts: dict[int, list[str]] = defaultdict(list)
        linking: dict[int, set[str]] = defaultdict(set)
        own_file = {seq: path for seq, path, *_ in cards}
        for file, target, name, text in conn.execute(
            "SELECT file, target, name, text FROM links WHERE source = ? AND name IN "
            "(SELECT value FROM json_each(?)) ORDER BY file, pos", (source, wanted)):
            seq = resolve(target, candidates.get(name, []))
            if seq is None or own_file[seq] == file:
                continue
            texts[seq].append(text)
            linking[seq].add(file)
        for seq, _, _, old_text, old_count in cards:
            text, count = "\n".join(texts.get(seq, ())), len(linking.get(seq, ()))
            if (text, count) == (old_text, old_count):
                continue
            conn.execute("UPDATE cards SET link_text = ?, inlinks = ? WHERE seq = ?",
                         (text, count, seq))
            body = conn.execute("SELECT body FROM cards WHERE seq = ?", (seq,)).fetchone()[0]
            fts.set_links(conn, seq, cjk.to_index_text(text), body)
            changed += 1
    return changed
