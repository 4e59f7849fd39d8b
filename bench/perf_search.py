"""The perf bench's search latency in-process (memsync's LexicalSearcher) beside a bare FTS5 OR
query over the raw floor's table, on queries drawn from the generated vault's words."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path
from statistics import median

from . import generate
from .stats import percentile


def search_queries(cards: list[tuple[str, str]], rng: random.Random, n: int) -> dict[str, list[str]]:
    # Query words drawn evenly from the 2,000 most frequent: some match most cards, some few.
    zh, en = generate.ZH_VOCAB[:2000], generate.EN_VOCAB[:2000]
    valid = [c for i, c in enumerate(cards) if not generate.superseded(i)]
    return {
        "marker": [m for _rel, m in rng.sample(valid, min(n, len(valid)))],
        "zh-word": [rng.choice(zh) for _ in range(n)],
        "en-word": [rng.choice(en) for _ in range(n)],
        "two-words": [f"{rng.choice(zh)} {rng.choice(en)}" for _ in range(n)],
        "question": ["".join(rng.choices(zh, k=3)) + " " + " ".join(rng.choices(en, k=2)) for _ in range(n)],
    }


def search_latency(db: Path, floor_db: Path, queries: dict[str, list[str]], rounds: int,
                   expected: dict[str, str]) -> dict:
    from memsync import cjk
    from memsync.search import query
    from memsync.search.lexical import LexicalSearcher, Query
    from memsync.store.index import Index

    index = Index(db)
    searcher = LexicalSearcher(index)
    floor = sqlite3.connect(floor_db)
    flat = [(kind, q) for kind, qs in queries.items() for q in qs]
    per_round, floor_round, by_kind = [], [], {k: [] for k in queries}
    wrong = 0
    for r in range(rounds):
        times, ftimes = [], []
        for kind, text in flat:
            start = time.perf_counter()
            result = searcher.search(Query(text, 10))
            elapsed = time.perf_counter() - start
            times.append(elapsed)
            by_kind[kind].append(elapsed)
            if r == 0 and kind == "marker" and [h.path for h in result.hits] != [expected[text]]:
                wrong += 1
            expr = " OR ".join(query.quote(t) for t in dict.fromkeys(cjk.tokens(text)))
            start = time.perf_counter()
            floor.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 10", (expr,)).fetchall()
            ftimes.append(time.perf_counter() - start)
        per_round.append((percentile(times, 0.5), percentile(times, 0.99)))
        floor_round.append((percentile(ftimes, 0.5), percentile(ftimes, 0.99)))
    index.close()
    floor.close()
    return {
        "queries": len(flat), "rounds": rounds,
        "p50_ms": 1000 * median([p for p, _ in per_round]),
        "p99_ms": 1000 * median([p for _, p in per_round]),
        "floor_p50_ms": 1000 * median([p for p, _ in floor_round]),
        "floor_p99_ms": 1000 * median([p for _, p in floor_round]),
        "by_kind_p50_ms": {k: 1000 * percentile(v, 0.5) for k, v in by_kind.items()},
        "marker_wrong": wrong,
    }
