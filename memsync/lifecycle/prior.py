"""A capped prior from use: helpful cards may move up past near-ties, nothing more. Pure.

Seed 003's lesson is that a prior must be capped or it outranks relevance (a much-read card
drowning the one that answers). Here the cap is structural as well as numeric:

- a hit moves only past hits in the same match class (its tier, and whether the title holds
  every query term): a body mention is never lifted above a title match;
- it moves only past hits whose score is within CAP (2 %) of its own: a near-tie;
- the boost is at most CAP, reached by cards often marked helpful; a card marked unhelpful
  more often than helpful gets none, and a card never used gets none (so with no use,
  ranking is exactly the lexical one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

CAP = 0.02
FULL_AT = 5  # helpful marks (net of unhelpful ones) that earn the whole boost
OPEN_WEIGHT = 0.2  # an open counts as a fifth of a helpful mark

T = TypeVar("T")


def boost(use: dict | None) -> float:
    """The prior of one card, in [0, CAP]."""
    if not use:
        return 0.0
    net = use.get("helpful", 0) - use.get("unhelpful", 0)
    if net < 0:
        return 0.0
    earned = net + OPEN_WEIGHT * min(use.get("opened", 0), FULL_AT)
    return CAP * min(1.0, earned / FULL_AT)


def reorder(hits: Sequence[T], score: Callable[[T], float], klass: Callable[[T], object],
            use_of: Callable[[T], dict | None]) -> list[T]:
    """The hits (best first) with near-ties inside one class reordered by use.

    A stable insertion pass: a hit moves up past the one above only when both are in the same
    class, the one above scores less than CAP above it, and its own boosted score is higher."""
    out = list(hits)
    for i in range(1, len(out)):
        j = i
        while j > 0:
            above, here = out[j - 1], out[j]
            s_above, s_here = score(above), score(here)
            if klass(above) != klass(here) or s_above > s_here * (1 + CAP):
                break
            b_here, b_above = boost(use_of(here)), boost(use_of(above))
            # an exact tie (a score of 0 included) goes to the more helpful card
            if (s_here * (1 + b_here), b_here) <= (s_above * (1 + b_above), b_above):
                break
            out[j - 1], out[j] = here, above
            j -= 1
    return out
