"""Blending a lexical and a dense ranking into one. Pure: scores in, scores out.

Each ranking is min-max normalised over its own candidates, so a BM25 score (unbounded, its
scale set by the query's words) and a cosine (crowded near the top of its range by e5) become
comparable; the blend is then a weighted sum. The constants were chosen on the dev sets by
bench/semantic.py (its grid and floor calibration are in bench/RESULTS.md).
"""

from __future__ import annotations

# Share of the dense part in the blend. 0.5 is best on CMRC (2,000 queries); 0.55 leads the
# mean over the dev sets only through SciFact's 75-query sample (+0.9 points there, -0.1 on CMRC).
WEIGHT = 0.5
DEPTH = 100  # candidates taken from each ranking
# A floor on cards found by meaning alone (that match no query word), in standard deviations
# above the mean cosine of all the vault's cards. e5 cosines crowd into 0.78-0.93 whatever the
# query, so no absolute floor works; a card that answers stands out of the vault's bulk. On the
# dev sets the wrongly admitted meaning-only cards sit at a median 1.4-3.4 sd, the golden set's
# "absent" queries (answer not in the vault) peak at 1.6-2.6 sd, and the one dev query with no
# lexical hit whose answer dense search finds (Obsidian zh-TW "removeattr") at 3.3 sd. Any floor
# in 2.75-3.25 scores the same on the dev sets; 3.0 is the middle. The cost: this model puts a
# Chinese query's English card at only 1.3-1.9 sd (and puts the wrong card first in most such
# probes), so a cross-language match with no word in common now has to stand out like any other.
FLOOR: float | None = 3.0
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
