"""The systems under test, built from the same documents in the same run.

- memsync: a vault of Markdown files (real ones, or documents written out as files) indexed by
  memsync's own Indexer and searched through any `Searcher` built on that index.
- the floor: plain FTS5 variants over the same documents (bench/floor.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import memsync.search.lexical as search_mod
from memsync.model import Source
from memsync.search.lexical import Query, Searcher
from memsync.store.index import Index

from .floor import Floor


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


def build_memsync(vault: Path, db: Path) -> Index:
    """Index `vault` with memsync's own code, exactly as `memsync index --rebuild` would."""
    from memsync.sync import Indexer

    index = Index(db)
    Indexer(index, [Source("vault", "markdown", str(vault), True)]).rebuild()
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


def ranked(searcher: Searcher, text: str, k: int, doc_id: Callable[[str], str],
           tag: str | None = None) -> list[str]:
    """The top `k` of any Searcher, as document ids (`tag`: only cards carrying it)."""
    return [doc_id(h.path) for h in searcher.search(Query(text, k, tag=tag or None)).hits]


class FloorSearcher:
    """A floor variant behind the `Searcher` seam, so the golden set can score it too. It knows
    no validity, dates or filters: it ranks every card."""

    def __init__(self, docs: list[tuple[str, str, str]], tokenizer: str = "bigram", mode: str = "or"):
        self.floor, self.mode = Floor(docs, tokenizer), mode

    def search(self, q: Query):
        hits = [SimpleNamespace(path=p) for p in self.floor.ranked(q.text, q.limit, self.mode)]
        return SimpleNamespace(hits=hits, matched="bm25-or" if hits else None)
