"""The whole-card score of a tier that matches much of the index, over a bounded set of cards.

FTS5 computes bm25 for every card a MATCH finds, about 1.3 µs a card at 100,000 cards and more
with more phrases: a word 70,000 cards hold costs 75 ms to rank. Up to RANK_BUDGET matches a
tier is ranked whole, as before. Above it, the whole-card score is computed for
- every card holding one of the tier's rarer alternatives (an `any` tier's OR, rarest first,
  together at most half the budget): a question's rare words find their card, however old;
- the newest of the other matches (the highest seq: the cards indexed or edited last), up to
  the budget.
The short fields (names, headings, tags) and exact matches are still looked up over every card,
so a card naming the word stays a candidate. A scored card's score is its unbounded score (FTS5's
idf is over the whole table; up to the order of a floating-point sum), so only which cards get one
changes, and only above the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memsync.store import searchsql as sql

RANK_BUDGET = 5_000

Run = Callable[[sql.Statement], list[Any]]


def whole_scores(run: Run, weights: tuple[float, ...], expr: str, alternatives: Sequence[str],
                 window: int, budget: int = RANK_BUDGET) -> tuple[dict[int, float], bool]:
    """seq -> whole-card score of the best `window` cards of the tier `expr`, and whether the
    budget left matching cards unscored. `alternatives`: the parts of the tier's OR (none for an
    AND: a card matching it holds every part)."""
    count, oldest = run(sql.newest(expr, budget))[0]
    if not count:
        return {}, False
    if count < budget:
        return dict(run(sql.bm25("cards_fts", weights, expr, window))), False
    rare, held = rarest(run, alternatives, budget // 2)
    if held:
        oldest = run(sql.newest(expr, budget - held))[0][1]
    scores = dict(run(sql.bm25("cards_fts", weights, expr, window, since=oldest)))
    if rare:
        common = [a for a in alternatives if a not in rare]
        scores.update(_older(run, weights, rare, common, oldest, window))
        scores = dict(sorted(scores.items(), key=lambda item: -item[1])[:window])
    return scores, True


def _older(run: Run, weights: tuple[float, ...], rare: list[str], common: list[str],
           before: int, window: int) -> dict[int, float]:
    """seq -> whole-card score under the tier's OR of the best `window` cards below seq
    `before` holding a rare alternative. FTS5's bm25 adds one term per phrase of the expression,
    each with its idf over the whole table, so a card holding a common alternative too scores
    under (rare) AND (common) what it scores under the OR (up to the order of the sum), and one
    holding none scores under the rare ones alone. Either way only those cards are visited,
    not every card the common words match.

    Each statement keeps its best `window` only, and that loses none of the best `window`
    overall: a card that scores under both has its lower rare-alone score in `alone` and is
    replaced by its `both` score; if it is not among the best of `both`, `window` cards there
    beat its true score, so neither score of it could reach the best `window`."""
    either = " OR ".join(rare)
    alone = dict(run(sql.bm25("cards_fts", weights, either, window, before=before)))
    both = f"({either}) AND ({' OR '.join(common)})"
    return {**alone, **dict(run(sql.bm25("cards_fts", weights, both, window, before=before)))}


def rarest(run: Run, alternatives: Sequence[str], room: int) -> tuple[list[str], int]:
    """The rarest alternatives whose cards together number at most `room`, and that number.
    Each is counted no further than `room`: a common one costs a bounded count."""
    if len(alternatives) < 2:
        return [], 0
    counted = sorted((run(sql.matches_upto(a, room + 1))[0][0], a) for a in alternatives)
    rare, held = [], 0
    for count, alternative in counted:
        if held + count > room:
            break
        rare.append(alternative)
        held += count
    return rare, held
