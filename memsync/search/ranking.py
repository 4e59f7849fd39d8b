"""How a card's field scores become one score. Pure: numbers in, a number out.

Each FTS5 table gives a bm25() over its own fields (memsync.store.migrations): the whole card, the
names (title, aliases, file name, H1), the other short fields (headings, tags, link text). A
title match is scored against the document frequencies and lengths of titles, so a word in most
bodies still counts there and a long body does not dilute it. A query equal to a whole title,
alias or heading (memsync.store.fields) adds a bonus larger than any bm25 sum, so it ranks first.
Scores are positive; larger is better.
"""

from __future__ import annotations

from dataclasses import dataclass

# Larger than any sum of bm25 scores seen on the bench sets (they stay below ~60).
EXACT_BONUS = 100.0


@dataclass(frozen=True)
class Weights:
    whole: tuple[float, ...] = (3.0, 2.5, 2.0, 2.0, 1.5, 1.0)  # cards_fts columns
    names: tuple[float, ...] = (1.0, 0.7)  # names_fts: title, h1
    fields: tuple[float, ...] = (1.0, 0.8, 0.6)  # fields_fts: headings, tags, links
    # How much the short-field bm25s add to the whole-card one. Measured with bench.retrieval
    # (score_all, all dev sets, nDCG@10): SciFact train 0.6606 with names at 1.0, 0.6989 at
    # 0.2, 0.7002 at 0.1, 0.7025 at 0.05, 0.7009 at 0 (best floor 0.7009); the Obsidian vaults
    # moved by at most 0.3 points between 0 and 1.0 (the exact bonus carries their titles);
    # fields at 0.5 were best or tied on every Obsidian vault and cannot move SciFact or CMRC
    # (no headings, tags or links). bench/RESULTS.md has the full run.
    w_names: float = 0.05
    w_fields: float = 0.5


WEIGHTS = Weights()
# The parts of a score that are evidence of a field (the rest are priors): --explain names them.
FIELD_PARTS = ("exact", "whole", "names", "fields")


def score_parts(w: Weights, whole: float, names: float, fields: float, exact: int) -> dict[str, float]:
    """The named parts of a card's score; the score is their sum (`--explain` shows them)."""
    return {"exact": EXACT_BONUS * exact, "whole": whole, "names": w.w_names * names,
            "fields": w.w_fields * fields}


def combine(w: Weights, whole: float, names: float, fields: float, exact: int) -> float:
    return sum(score_parts(w, whole, names, fields, exact).values())
