"""Near-duplicate groups among the valid cards, each with the card to keep and why.

The keeper is the card people lean on: more read, then more often helpful, then newer, then
longer. A card read or marked helpful often is never merged away: in a group it can only be the
keeper, and a second such card in the same group stays out of the merge (it is listed, marked
protected). A card of a read-only source can be neither merged nor a keeper that gains text:
its group is reported only.

A vault's bodies need not all be in memory at once: `audit` reads the cards as a stream and keeps
of each only its length (`chars`) and its packed shingles (`grams`), handed to `find`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from memsync import dates
from memsync.lifecycle import shingles

# "Often": enough use that merging the card away would surprise whoever relies on it.
PROTECT_OPENED = 5
PROTECT_HELPFUL = 2


@dataclass(frozen=True, slots=True)  # slots: 100,000 of them are held at once
class Candidate:
    id: int
    source: str
    path: str
    title: str
    body: str
    updated: str | None
    writable: bool
    opened: int = 0
    helpful: int = 0
    chars: int = -1  # the body's length; taken from `body` unless given (a streamed card has none)

    def __post_init__(self) -> None:
        if self.chars < 0:
            object.__setattr__(self, "chars", len(self.body))

    @property
    def protected(self) -> bool:
        return self.opened >= PROTECT_OPENED or self.helpful >= PROTECT_HELPFUL


def keeper_key(card: Candidate) -> tuple:
    return (card.writable, card.opened, card.helpful, _newness(card), card.chars, -card.id)


def _newness(card: Candidate) -> float:
    """When the card was last updated, as a moment: as text, 10:00 at +14:00 on a day sorted
    after 05:00 in UTC that day, nine hours later."""
    return dates.seconds(card.updated) if card.updated else -math.inf


def why_kept(keeper: Candidate, others: list[Candidate]) -> str:
    """The rule of keeper_key that decided: the first on which the keeper beats every card still
    level with it on the rules before."""
    reasons = [
        (lambda c: c.writable, "the others are in read-only sources"),
        (lambda c: c.opened, f"read most ({keeper.opened} times)"),
        (lambda c: c.helpful, f"marked helpful most ({keeper.helpful} times)"),
        (_newness, f"newest (updated {str(keeper.updated)[:10]})"),
        (lambda c: c.chars, f"longest ({keeper.chars} characters)"),
    ]
    level = others
    for value, reason in reasons:
        if all(value(keeper) > value(other) for other in level):
            return reason
        level = [other for other in level if value(other) == value(keeper)]
    return "lowest id of cards alike in use, date and length"


def shingle_text(card: Candidate) -> str:
    return text_of(card.title, card.body)


def text_of(title: str, body: str) -> str:
    """What a card's shingles are made of."""
    return f"{title}\n{body}"


def grams(title: str, body: str) -> array:
    """A card's packed shingles (memsync.lifecycle.shingles.packed)."""
    return shingles.packed(text_of(title, body))


def find(cards: list[Candidate], threshold: float, packed: Sequence[array] | None = None) -> list[dict]:
    """The groups, largest similarity first: ids, paths, similarity, keeper and why. `packed`:
    each card's `grams`, when the caller made them while reading and kept no body."""
    sets = packed if packed is not None else [grams(c.title, c.body) for c in cards]
    found = []
    for group in shingles.groups(sets, threshold):
        members = [cards[i] for i in group.members]
        at = max(group.members, key=lambda i: keeper_key(cards[i]))
        keeper = cards[at]
        others = [c for c in members if c is not keeper]
        to_keeper = {cards[i].id: round(shingles.jaccard(sets[i], sets[at]), 3)
                     for i in group.members if i != at}
        found.append({
            "similarity": round(group.similarity, 3),
            "keeper": keeper.id,
            "why": why_kept(keeper, others),
            "mergeable": keeper.writable,
            "cards": [
                {"id": c.id, "source": c.source, "path": c.path, "title": c.title,
                 "chars": c.chars, "opened": c.opened, "helpful": c.helpful,
                 "similarity": None if c is keeper else to_keeper[c.id],
                 "keeper": c is keeper,
                 "merge": c is not keeper and keeper.writable and c.writable and not c.protected,
                 **({"protected": True} if c.protected and c is not keeper else {}),
                 **({"read_only": True} if not c.writable else {})}
                for c in sorted(members, key=lambda c: (c is not keeper, c.path))
            ],
        })
    return sorted(found, key=lambda g: (-g["similarity"], g["keeper"]))
