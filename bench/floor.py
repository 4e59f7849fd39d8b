"""The plain FTS5 floor: what a bare SQLite index gives on the same documents, in eight variants.

Each variant puts a document's title and body into one FTS5 row and ranks by `bm25()`:

- tokenizers: `unicode61`, `porter unicode61`, `trigram`, and `bigram` (memsync.cjk's CJK
  bigrams, NFKC and lowercase pre-tokenized into `unicode61`: the text memsync itself stores);
- query modes: `or` (every query token quoted and OR-ed) and `andor` (the tokens AND-ed; OR
  only when AND finds nothing).

A query is cut into tokens the way its tokenizer cuts a document: runs of letters and digits for
the three stock tokenizers (unicode61 keeps a whole CJK run as one token), memsync.cjk's bigrams
for `bigram`. The best variant of a set is the one with the highest nDCG@10 in the same run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path

from memsync import cjk
from memsync.search import query

from . import metrics

TOKENIZERS = {
    "unicode61": "unicode61",
    "porter": "porter unicode61",
    "trigram": "trigram",
    "bigram": "unicode61 remove_diacritics 0",  # the text is already folded by memsync.cjk
}
MODES = ("or", "andor")
VARIANTS = tuple(f"{t} {m}" for t in TOKENIZERS for m in MODES)
_WORD = re.compile(r"[^\W_]+")  # unicode61's token characters: letters and digits, not `_`


def query_tokens(tokenizer: str, text: str) -> list[str]:
    if tokenizer == "bigram":
        terms = (t for phrase in cjk.phrases(text) for t in phrase)
    else:
        terms = _WORD.findall(text.lower())
    return list(dict.fromkeys(terms))


def doc_text(tokenizer: str, title: str, body: str) -> str:
    text = f"{title}\n{body}"
    return cjk.to_index_text(text) if tokenizer == "bigram" else text


class Floor:
    """One tokenizer's FTS5 table over `docs` ((id, title, body)), searched in either mode."""

    def __init__(self, docs: Iterable[tuple[str, str, str]], tokenizer: str = "unicode61"):
        self.tokenizer = tokenizer
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE doc USING fts5(text, tokenize = '{TOKENIZERS[tokenizer]}')")
        self.ids: list[str] = []
        rows = []
        for doc_id, title, body in docs:
            self.ids.append(doc_id)
            rows.append((len(self.ids), doc_text(tokenizer, title, body)))
        with self.conn:
            self.conn.executemany("INSERT INTO doc (rowid, text) VALUES (?, ?)", rows)

    def _match(self, expr: str, k: int) -> list[str]:
        rows = self.conn.execute(
            "SELECT rowid FROM doc WHERE doc MATCH ? ORDER BY bm25(doc) LIMIT ?", (expr, k)
        ).fetchall()
        return [self.ids[r[0] - 1] for r in rows]

    def ranked(self, text: str, k: int, mode: str = "or") -> list[str]:
        quoted = [query.quote(t) for t in query_tokens(self.tokenizer, text)]
        if not quoted:
            return []
        if mode == "andor":
            hits = self._match(" AND ".join(quoted), k)
            if hits or len(quoted) == 1:
                return hits
        return self._match(" OR ".join(quoted), k)

    def close(self) -> None:
        self.conn.close()


def all_variants(docs: list[tuple[str, str, str]]) -> dict[str, Floor]:
    """One Floor per tokenizer (each serves both query modes)."""
    return {t: Floor(docs, t) for t in TOKENIZERS}


def best(figures: dict[str, dict], key: str = "ndcg@10") -> str:
    """The variant with the highest `key`; a tie goes to the first in VARIANTS order."""
    return max(figures, key=lambda name: (figures[name][key], -VARIANTS.index(name)))


def score(docs: list[tuple[str, str, str]], queries: list[tuple[str, dict]], depth: int) -> dict[str, dict]:
    """Every variant's figures over `queries` (each judged by doc id), from `depth`-deep lists."""
    tables = all_variants(docs)
    try:
        out = {}
        for variant in VARIANTS:
            tokenizer, mode = variant.split()
            out[variant] = metrics.summarize([(tables[tokenizer].ranked(q, depth, mode), rel) for q, rel in queries])
        return out
    finally:
        for table in tables.values():
            table.close()


def cache_dir() -> Path:
    return Path(os.environ.get("MEMSYNC_BENCH_CACHE") or Path(tempfile.gettempdir()) / "memsync-bench-cache")


def _key(docs, queries, depth: int) -> str:
    """Everything the floor's figures depend on: the inputs, the code that tokenizes, queries and
    scores, and SQLite's version. Same key, same figures."""
    code = [Path(__file__), Path(cjk.__file__), Path(query.__file__), Path(metrics.__file__)]
    h = hashlib.sha256()
    for part in [sqlite3.sqlite_version, str(depth), *(p.read_text(encoding="utf-8") for p in code)]:
        h.update(part.encode() + b"\0")
    h.update(json.dumps([docs, queries], ensure_ascii=False, sort_keys=True).encode())
    return h.hexdigest()[:32]


def score_cached(docs, queries, depth: int, fresh: bool = False) -> tuple[dict[str, dict], bool]:
    """`score`, kept on disk (bench cache folder) between runs: the floor moves only when its
    inputs or code do. Returns (figures, whether they came from the cache). `fresh` measures
    again and refreshes the cache."""
    path = cache_dir() / f"floor-{_key(docs, queries, depth)}.json"
    if not fresh and path.exists():
        return json.loads(path.read_text(encoding="utf-8")), True
    figures = score(docs, queries, depth)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(figures), encoding="utf-8")
    tmp.replace(path)
    return figures, False
