"""Blending a lexical and a dense ranking into one. Pure: scores in, scores out.

Each ranking is min-max normalised over its own candidates, so a BM25 score (unbounded, its
scale set by the query's words) and a cosine (crowded near the top of its range by e5) become
comparable; the blend is then a weighted sum. The constants were chosen on the dev sets by
bench/semantic.py (its grid and floor calibration are in bench/RESULTS.md).
"""

from __future__ import annotations

# Share of the dense part in the blend. Over all eight dev sets (bench/RESULTS.md) the best mean
# that holds everywhere is w=0.4 with "rerank" and a 2.75 sd floor (+1.61 points vs +1.47 for
# these settings); not switched yet: "rerank" reorders every all-word query too, which needs the
# deep lexical pass on each query (cost not re-measured) and changes the keyword tests' order, and
# 2.75 sd is 0.17 sd above the golden absent peak. Among "weak" variants 0.55 leads (+1.57).
WEIGHT = 0.5
DEPTH = 100  # candidates taken from each ranking
# A floor on cards found by meaning alone (that match no query word), in standard deviations
# above the mean cosine of all the vault's cards. e5 cosines crowd into 0.78-0.93 whatever the
# query, so no absolute floor works; a card that answers stands out of the vault's bulk. On the
# dev sets the wrongly admitted meaning-only cards sit at a median 1.4-3.4 sd, the golden set's
# "absent" queries (answer not in the vault) peak at 1.6-2.6 sd, and the dev queries with no
# lexical hit whose answer dense search finds sit at 3.1-3.6 sd (Obsidian zh-TW, ko, fr, es).
# Floors of 2.75 / 3.0 / 3.25 average +1.50 / +1.47 / +1.39 points over the dev sets; 3.0 keeps
# a margin over the absent peak and holds lexical on every set. The cost: this model puts a
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
