"""How a card's field scores become one score. Pure: numbers in, a number out.

Obsidian's order of a note's parts: the title and aliases name the note, a heading names a part
of it (an H1 nearly as much as the title, deeper levels less), the body mentions. The score is
the sum of named parts (`memsync search --explain` shows each):

- `whole`: FTS5's bm25 over the whole card with column weights (memsync.store.fts cards_fts):
  BM25's saturation over the weighted term counts of every field, normalised by the card's
  length. It carries the body and orders long-text matches (questions, claims) as plain BM25.
- one part per short field (title, h1, headings, tags, links): that field's own bm25 (names_fts,
  fields_fts: document frequencies and lengths of that field alone, so a word common in bodies
  still weighs in a title and a long body does not dilute it), saturated to s / (s + k) and
  weighted by the field's place. Each field is worth at most its weight: the strongest field
  wins, several weak ones add up only moderately, and no field jumps a tier.
- `held`: the names (title, aliases, file name) hold every word of the query; with the title's
  own length normalisation this is what lets a short title that holds the query beat an exact
  heading of another note.
- `exact`: a title, alias, H1 or heading equal to the whole query (memsync.store.fields), by
  field: bounded like the others, so an exact heading finds its note first when no title or
  alias holds the query, and loses to a note named for it.
Scores are positive; larger is better.
"""

from typing import NamedTuple

from memsync.store.fields import EXACT_H1, EXACT_HEADING, EXACT_NAME

NAMES = ("title", "h1")  # names_fts columns
FIELDS = ("headings", "tags", "links")  # fields_fts columns


class Weights(NamedTuple):
    whole: tuple[float, ...] = (3.0, 2.5, 2.0, 2.0, 1.5, 1.0)  # cards_fts columns
    # What each short field's saturated bm25 is worth at most, in the units of `whole`.
    title: float = 3.0
    h1: float = 2.0
    headings: float = 1.0
    tags: float = 1.0
    links: float = 0.5
    held: float = 2.0
    exact_name: float = 2.0
    exact_h1: float = 1.5
    exact_heading: float = 2.0
    k: float = 3.0  # a short field's bm25 at which it earns half its weight


WEIGHTS = Weights()
# The parts of a score that are evidence of a field (the rest are priors): --explain names them.
FIELD_PARTS = ("whole", *NAMES, *FIELDS, "held", "exact")


def _sat(score: float, k: float) -> float:
    return score / (score + k) if score > 0 else 0.0


def score_parts(w: Weights, whole: float, names: tuple[float, ...], fields: tuple[float, ...],
                exact: int, held: bool, terms: int = 1) -> dict[str, float]:
    """The named parts of a card's score; the score is their sum. `names` and `fields` are the
    bm25s of the NAMES and FIELDS columns, `exact` the strength of an exact key (0: none),
    `terms` the number of query tokens matched on: a field's bm25 sums over them, so it is
    saturated against k per token (a title holding 3 words of a 15-word claim earns a little,
    one holding the whole of a 1-word query most of its weight)."""
    parts = {"whole": whole}
    k = w.k * max(1, terms)
    for column, score in zip(NAMES + FIELDS, (*names, *fields)):
        parts[column] = getattr(w, column) * _sat(score, k)
    parts["held"] = w.held if held else 0.0
    parts["exact"] = {EXACT_NAME: w.exact_name, EXACT_H1: w.exact_h1, EXACT_HEADING: w.exact_heading}.get(exact, 0.0)
    return parts


def combine(w: Weights, whole: float, names: tuple[float, ...], fields: tuple[float, ...],
            exact: int, held: bool, terms: int = 1) -> float:
    return sum(score_parts(w, whole, names, fields, exact, held, terms).values())
