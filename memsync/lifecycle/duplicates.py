"""Near-duplicate groups among the valid cards, each with the card to keep and why.

The keeper is the card people lean on: more read, then more often helpful, then newer, then
longer. A card read or marked helpful often is never merged away: in a group it can only be the
keeper, and a second such card in the same group stays out of the merge (it is listed, marked
protected). A card of a read-only source can be neither merged nor a keeper that gains text:
its group is reported only.
"""

from __future__ import annotations

from dataclasses import dataclass

from memsync.lifecycle import shingles

# "Often": enough use that merging the card away would surprise whoever relies on it.
PROTECT_OPENED = 5
PROTECT_HELPFUL = 2


@dataclass(frozen=True)
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

    @property
    def protected(self) -> bool:
        return self.opened >= PROTECT_OPENED or self.helpful >= PROTECT_HELPFUL


def keeper_key(card: Candidate) -> tuple:
    return (card.writable, card.opened, card.helpful, card.updated or "", len(card.body), -card.id)


def why_kept(keeper: Candidate, others: list[Candidate]) -> str:
    """The rule of keeper_key that decided: the first on which the keeper beats every card still
    level with it on the rules before."""
    reasons = [
        (lambda c: c.writable, "the others are in read-only sources"),
        (lambda c: c.opened, f"read most ({keeper.opened} times)"),
        (lambda c: c.helpful, f"marked helpful most ({keeper.helpful} times)"),
        (lambda c: c.updated or "", f"newest (updated {str(keeper.updated)[:10]})"),
        (lambda c: len(c.body), f"longest ({len(keeper.body)} characters)"),
    ]
    level = others
    for value, reason in reasons:
        if all(value(keeper) > value(other) for other in level):
            return reason
        level = [other for other in level if value(other) == value(keeper)]
    return "lowest id of cards alike in use, date and length"


def shingle_text(card: Candidate) -> str:
    return f"{card.title}\n{card.body}"


def find(cards: list[Candidate], threshold: float) -> list[dict]:
    """The groups, largest similarity first: ids, paths, similarity, keeper and why."""
    sets = [shingles.shingles(shingle_text(c)) for c in cards]
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
                 "chars": len(c.body), "opened": c.opened, "helpful": c.helpful,
                 "similarity": None if c is keeper else to_keeper[c.id],
                 "keeper": c is keeper,
                 "merge": c is not keeper and keeper.writable and c.writable and not c.protected,
                 **({"protected": True} if c.protected and c is not keeper else {}),
                 **({"read_only": True} if not c.writable else {})}
                for c in sorted(members, key=lambda c: (c is not keeper, c.path))
            ],
        })
    return sorted(found, key=lambda g: (-g["similarity"], g["keeper"]))
