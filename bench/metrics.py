"""Ranking metrics for the real data sets, as pure functions (trec_eval conventions).

`ranked` is a list of document ids, best first; `relevant` maps a relevant id to its grade
(a set means every grade is 1). The memory-style metrics (first hit, capped P@5, noise) live in
memsync.benchmark, because `memsync bench` needs them without this package.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from memsync.benchmark import capped_precision, first_hit_ok, noise_rate, pair_held  # noqa: F401


def _grades(relevant: Mapping[str, float] | Iterable[str]) -> dict[str, float]:
    if isinstance(relevant, Mapping):
        return {doc: float(g) for doc, g in relevant.items() if g > 0}
    return dict.fromkeys(relevant, 1.0)


def dcg(gains: Iterable[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at(ranked: list[str], relevant, k: int = 10) -> float:
    """DCG of the top k (linear gain, log2 discount) over the DCG of the ideal ordering."""
    grades = _grades(relevant)
    if not grades:
        return 0.0
    ideal = dcg(sorted(grades.values(), reverse=True)[:k])
    return dcg(grades.get(doc, 0.0) for doc in ranked[:k]) / ideal


def recall_at(ranked: list[str], relevant, k: int) -> float:
    grades = _grades(relevant)
    if not grades:
        return 0.0
    return len(set(ranked[:k]) & grades.keys()) / len(grades)


def mrr_at(ranked: list[str], relevant, k: int = 10) -> float:
    """1 / rank of the first relevant document within the top k, else 0."""
    grades = _grades(relevant)
    for rank, doc in enumerate(ranked[:k], 1):
        if doc in grades:
            return 1.0 / rank
    return 0.0


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def summarize(runs: list[tuple[list[str], object]]) -> dict[str, float]:
    """The standard figures over (ranked, relevant) pairs, one per query."""
    return {
        "ndcg@10": mean(ndcg_at(r, rel, 10) for r, rel in runs),
        "recall@10": mean(recall_at(r, rel, 10) for r, rel in runs),
        "recall@100": mean(recall_at(r, rel, 100) for r, rel in runs),
        "mrr@10": mean(mrr_at(r, rel, 10) for r, rel in runs),
        "queries": len(runs),
    }
