"""Blending a lexical and a dense ranking into one. Pure: scores in, scores out.

Each ranking is min-max normalised over its own candidates, so a BM25 score (unbounded, its
scale set by the query's words) and a card's dense standing (its cosine in standard deviations
above the cards of its script; see `standing`) become comparable; the blend is then a weighted
sum (so with w = 0.5 a card found by meaning alone can at best tie the best lexical hit). The
constants were chosen on the dev sets by bench/semantic.py (its grid and floor calibration are in
bench/RESULTS.md).
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
# above the mean cosine of the vault's cards written in the same script as the card (see
# `standing`). e5 cosines crowd into 0.78-0.93 whatever the query, so no absolute floor works; a
# card that answers stands out of the bulk. On the dev sets the wrongly admitted meaning-only
# cards sit at a median 1.4-3.4 sd, the golden set's "absent" queries (answer not in the vault)
# peak at 1.6-2.6 sd, and the dev queries with no lexical hit whose answer dense search finds sit
# at 3.1-3.6 sd (Obsidian zh-TW, ko, fr, es). Floors of 2.75 / 3.0 / 3.25 average +1.50 / +1.47 /
# +1.39 points over the dev sets; 3.0 keeps a margin over the absent peak and holds lexical on
# every set.
FLOOR: float | None = 3.0
# Whose cosines a card's standing is measured against: "script", the cards written mostly in the
# same script (Han, Latin, Hangul, Kana, ...: memsync.semantic.scripts); "vault", every card.
# A multilingual model puts every card in the query's own language close to the query: against
# the whole vault, a Chinese query's English answer stands only 1.3-1.9 sd up, under unrelated
# Chinese cards. Against the other English cards it stands 2.8-4.7 sd up (median 3.8 over the 19
# Chinese probes of tests/semantic_cards.py), while no absent query's best card passes 2.8 sd.
# Probes finding their card first, both directions: 16 of 37 with "script", 1 of 37 with "vault".
# Each dev set is written in one script, where the two are the same measure (no figure changes);
# on the golden set (Han with nine Latin cards) neither does any figure of the shipped variant. MIN_GROUP: a script with fewer cards than this is no yardstick (the mean of a handful
# of cosines is mostly noise); its cards are measured against the whole vault.
SPREAD = "script"
MIN_GROUP = 8
# "weak": when every query word matched (an all* tier), the lexical order stands; the blend
# serves the questions and the any* tiers. It kept the golden keyword group exactly as it was.
DENSE_WHEN = "weak"
# Tried, not shipped: scaling a partial lexical match's part by its coverage (share of the query's
# words it holds) with w=0.4. A card sharing one bigram or "the" with a question then no longer
# outranks the card found by meaning (cross-language probes 16 -> 25 of 37) and the eight dev sets
# gain (+1.62 points mean against +1.47; CMRC sentence 0.7858, SciFact-500 0.8727), but the whole
# of SciFact train falls from +3.30 to +2.31 points, under lexical's +3 target.


def page_scores(page: list[tuple[int, float]]) -> dict[int, float]:
    """(card, lexical score) in the lexical page's order -> scores that never rise down the page.
    A page filled from a looser tier lists those hits below the strict ones whatever their
    scores (a card holding some words of a long query can outscore one holding all of a short
    one): each tier is ranked on its own. Capping every score at the one above keeps that order
    in the blend; ties keep page order (dicts and sorted() are both stable)."""
    out: dict[int, float] = {}
    ceiling = float("inf")
    for card, score in page:
        ceiling = min(ceiling, score)
        out[card] = ceiling
    return out


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



def standing(best, groups=None, min_group: int = MIN_GROUP):
    """How far each card's cosine stands above the cards written in its script, in standard
    deviations: centred on its script group's mean, scaled by the spread within the groups
    (pooled). A group smaller than `min_group` is measured against the whole vault; with one
    script (or `groups` None) this is the plain z-score over the vault."""
    import numpy as np

    best = np.asarray(best, dtype=np.float64)
    centre = np.full(len(best), best.mean() if len(best) else 0.0)
    if groups is not None and len(best):
        counts = np.bincount(groups)
        size = counts[groups]
        own = size >= min_group
        centre[own] = (np.bincount(groups, weights=best) / counts)[groups][own]
    resid = best - centre
    sd = float(np.sqrt((resid**2).mean())) if len(best) else 0.0
    return resid / sd if sd > 0 else np.zeros_like(resid)
