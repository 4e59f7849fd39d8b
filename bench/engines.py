"""The systems under test, built from the same documents in the same run.

- memsync: documents written as Markdown files into a scratch vault, indexed by memsync's own
  Indexer, searched through memsync.search.LexicalSearcher (weights and tier policy variable).
- reference: the plain FTS5 floor: the same pre-tokenized text (memsync.cjk.to_index_text of
  title + body) in one bare FTS5 column, every query token quoted and OR-ed, ranked by bm25().
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import memsync.search as search_mod
from memsync import cjk, query
from memsync.index import Index
from memsync.model import Source
from memsync.search import LexicalSearcher, Query

PORTER = "porter unicode61 remove_diacritics 0"


def card_text(title: str, body: str, meta: dict | None = None) -> str:
    """A card file: frontmatter (title as a JSON string, which YAML reads the same) + body."""
    if not title and not meta:
        return body + "\n"
    lines = ["---"]
    if title:
        lines.append(f"title: {json.dumps(title, ensure_ascii=False)}")
    for key, value in (meta or {}).items():
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join([*lines, "---", body, ""])


_NO_TOKENS = "_~+="  # characters memsync's tokenizer drops: file names made of them add no words


def untitled_name(n: int) -> str:
    """A unique file stem with no searchable token. A card without a title is titled by its
    file stem; a stem like `TRIAL_800` would add words the floor's text does not have."""
    digits = []
    while True:
        n, r = divmod(n, len(_NO_TOKENS))
        digits.append(_NO_TOKENS[r])
        if not n:
            return "=" + "".join(reversed(digits))


def write_vault(root: Path, docs: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """One Markdown file per document; returns file stem -> doc id. Titled documents are named
    by their id; untitled ones get a stem that tokenizes to nothing."""
    root.mkdir(parents=True, exist_ok=True)
    stems = {}
    for n, (doc_id, title, body) in enumerate(docs):
        name = doc_id if title else untitled_name(n)
        (root / f"{name}.md").write_text(card_text(title, body), encoding="utf-8")
        stems[name] = doc_id
    return stems


def build_memsync(vault: Path, db: Path, tokenize: str | None = None) -> Index:
    """Index `vault` with memsync's own code. `tokenize` swaps the FTS5 tokenizer of this
    scratch index only (used to measure stemming without touching memsync.cjk)."""
    from memsync.sync import Indexer

    index = Index(db)
    indexer = Indexer(index, [Source("vault", "markdown", str(vault), True)])
    if not tokenize:
        indexer.rebuild()
        return index
    with index.transaction() as conn:
        conn.execute("DROP TABLE cards_fts")
        conn.execute(
            f"CREATE VIRTUAL TABLE cards_fts USING fts5(title, tags, body, tokenize = '{tokenize}')"
        )
    indexer.reconcile()  # a rebuild would recreate the stock table; on an empty index this is the same work
    return index


@contextmanager
def deep_pages(limit: int):
    """The CLI caps a page at 20 hits; recall@100 needs deeper pages, so the bench lifts the
    cap for its own process while it measures."""
    saved = search_mod.MAX_LIMIT
    search_mod.MAX_LIMIT = max(saved, limit)
    try:
        yield
    finally:
        search_mod.MAX_LIMIT = saved


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def memsync_ranked(searcher: LexicalSearcher, text: str, k: int, ids: dict[str, str]) -> list[str]:
    return [ids[stem(h.path)] for h in searcher.search(Query(text, k)).hits]


class Reference:
    """The plain FTS5 floor over the same pre-tokenized text."""

    def __init__(self, docs: Iterable[tuple[str, str, str]], tokenize: str = "unicode61 remove_diacritics 0"):
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE ref USING fts5(text, tokenize = '{tokenize}')")
        self.ids: list[str] = []
        rows = []
        for doc_id, title, body in docs:
            self.ids.append(doc_id)
            rows.append((len(self.ids), cjk.to_index_text(f"{title} {body}")))
        with self.conn:
            self.conn.executemany("INSERT INTO ref (rowid, text) VALUES (?, ?)", rows)

    def ranked(self, text: str, k: int) -> list[str]:
        terms = list(dict.fromkeys(t for phrase in cjk.phrases(text) for t in phrase))
        if not terms:
            return []
        expr = " OR ".join(query.quote(t) for t in terms)
        rows = self.conn.execute(
            "SELECT rowid FROM ref WHERE ref MATCH ? ORDER BY bm25(ref) LIMIT ?", (expr, k)
        ).fetchall()
        return [self.ids[r[0] - 1] for r in rows]


class ReferenceSearcher:
    """The floor behind the `Searcher` seam, so the golden set can score it too. It knows no
    validity, dates or filters: it ranks every card."""

    def __init__(self, docs: list[tuple[str, str, str]]):
        self.reference = Reference(docs)

    def search(self, q: Query):
        hits = [SimpleNamespace(path=p) for p in self.reference.ranked(q.text, q.limit)]
        return SimpleNamespace(hits=hits, matched="bm25-or" if hits else None)
