"""Blending a lexical and a dense ranking into one. Pure: scores in, scores out.

Each ranking is min-max normalised over its own candidates, so a BM25 score (unbounded, its
scale set by the query's words) and a cosine (crowded near the top of its range by e5) become
comparable; the blend is then a weighted sum. The constants were chosen on the retrieval bench
(bench/retrieval.py --semantic, bench/RESULTS.md).
"""

from __future__ import annotations

WEIGHT = 0.5  # share of the dense part in the blend
DEPTH = 100  # candidates taken from each ranking
# A floor on cards found by meaning alone, in standard deviations above the mean cosine of all
# cards (None: none). 3.0 keeps the golden set's "absent" queries empty (their best card peaks at
# 1.6-2.6 sd) for +0.08 nDCG points on CMRC, but this model ranks a Chinese query's English card
# at 1.7 sd (it favours cards in the query's own language): any floor that stops the absent
# queries stops the cross-language matches, which are what semantic search is for. Hits found by
# meaning alone say so (matched: semantic, and a note when no word matched).
FLOOR: float | None = None
# "weak": when every query word matched (an all* tier), the lexical order stands; the blend
# serves the questions and the any* tiers. It kept the golden keyword group exactly as it was.
DENSE_WHEN = "weak"


def minmax(scores: dict[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {key: (value - low) / (high - low) for key, value in scores.items()}


def blend(lexical: dict[int, float], dense: dict[int, float], weight: float = WEIGHT,
          unembedded: frozenset[int] = frozenset()) -> dict[int, float]:
    """Weighted sum of the normalised parts; a card missing from one ranking gets 0 there,
    except a card that has no vector yet, which is ranked by its lexical part alone."""
    lex, den = minmax(lexical), minmax(dense)
    out = {}
    for key in lex.keys() | den.keys():
        if key in unembedded:
            out[key] = lex.get(key, 0.0)
        else:
            out[key] = weight * den.get(key, 0.0) + (1 - weight) * lex.get(key, 0.0)
    return out


def rrf(lexical: dict[int, float], dense: dict[int, float], k: int = 60,
        weight: float = WEIGHT) -> dict[int, float]:
    """Reciprocal-rank fusion: only the order of each ranking counts."""
    out: dict[int, float] = {}
    for part, scores in ((1 - weight, lexical), (weight, dense)):
        for rank, key in enumerate(sorted(scores, key=scores.__getitem__, reverse=True)):
            out[key] = out.get(key, 0.0) + part / (k + rank + 1)
    return out
