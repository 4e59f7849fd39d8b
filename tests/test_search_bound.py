"""A tier that matches more cards than the searcher's rank budget is ranked over a bounded set
of them (memsync.search.bound). A real vault, index and searcher, with a budget of ten."""

from __future__ import annotations

import pytest

from memsync import config
from memsync.search import bound
from memsync.search.lexical import LexicalSearcher, Query
from memsync.search.ranking import WEIGHTS
from memsync.store import searchsql as sql
from memsync.store.index import Index

from .conftest import write_card
from .helpers import sync

BUDGET = 10


def _harbor_index(vault, write_old) -> Index:
    """Forty old cards that do not mention the harbor (so its idf is no mere floor) and the old
    cards `write_old` writes, indexed first; then thirty newer cards mentioning the harbor."""
    for n in range(40):
        write_card(vault, f"old/other{n:02}.md", f"Other {n}", f"Nothing about the sea, note {n}.")
    write_old()
    sync()
    for n in range(30):
        write_card(vault, f"new/day{n:02}.md", f"Day {n}", f"Walked along the harbor, day {n}.")
    sync()
    return Index(config.load().db.path)


@pytest.fixture
def crowded(vault):
    """Three old cards mentioning the harbor among the harbor background (_harbor_index)."""
    def write_old():
        write_card(vault, "old/zephyr.md", "Wind log", "A zephyr crossed the harbor at dawn.")
        write_card(vault, "old/schedule.md", "Harbor schedule", "Ferries leave every hour.", kind="decision")
        write_card(vault, "old/crane.md", "Crane", "The harbor crane was repaired.", kind="decision")

    index = _harbor_index(vault, write_old)
    yield index
    index.close()


def _paths(index, text, budget=BUDGET, **filters):
    return [h.path for h in LexicalSearcher(index, rank_budget=budget).search(Query(text, 10, **filters)).hits]


def test_a_rare_word_finds_its_old_card_in_a_tier_most_cards_match(crowded):
    # No card holds all three words: the `any` tier's OR matches all 33 cards, over the budget.
    # `zephyr` is rare, so its card is scored however old it is, and ranks first.
    assert _paths(crowded, "zephyr harbor quokka")[0] == "old/zephyr.md"
    assert _paths(crowded, "zephyr harbor quokka", budget=1000)[0] == "old/zephyr.md"


def test_a_word_most_cards_hold_ranks_the_newest_and_every_card_naming_it(crowded):
    hits = _paths(crowded, "harbor")
    assert hits[0] == "old/schedule.md"  # named in its title: found over every card
    newest = {f"new/day{n:02}.md" for n in range(30 - BUDGET, 30)}
    assert set(hits[1:]) <= newest  # the body-only mentions: the newest ones scored
    assert "old/crane.md" not in hits and "old/zephyr.md" not in hits


def test_filters_that_leave_the_newest_short_score_further_back(crowded):
    assert sorted(_paths(crowded, "harbor", kind="decision")) == ["old/crane.md", "old/schedule.md"]


def test_a_scored_card_keeps_its_unbounded_score(crowded):
    alternatives = ('"zephyr"', '"harbor"', '"quokka"')
    expr = " OR ".join(alternatives)
    bounded, was_bounded = bound.whole_scores(crowded.run, WEIGHTS.whole, expr, alternatives, 100, BUDGET)
    whole, whole_bounded = bound.whole_scores(crowded.run, WEIGHTS.whole, expr, alternatives, 100, 1000)
    assert was_bounded and not whole_bounded
    assert len(whole) == 33 and len(bounded) == BUDGET
    assert all(score == pytest.approx(whole[seq]) for seq, score in bounded.items())
    [(zephyr,)] = crowded.run(sql.Statement("SELECT seq FROM cards WHERE path = 'old/zephyr.md'"))
    assert zephyr in bounded  # the rare alternative's card, oldest of all


def test_the_rarest_alternatives_fill_half_the_budget_at_most(crowded):
    run = crowded.run
    assert bound.rarest(run, ('"harbor"', '"zephyr"', '"crane"'), 5) == (['"crane"', '"zephyr"'], 2)
    assert bound.rarest(run, ('"harbor"', '"zephyr"'), 0) == ([], 0)
    assert bound.rarest(run, ('"zephyr"',), 5) == ([], 0)  # one alternative: the tier itself


@pytest.fixture
def windy(vault):
    """Five old cards holding the rare `zephyr`: two say it alone, three beside the common
    `harbor`, each in words of its own length; among the harbor background (_harbor_index)."""
    def write_old():
        for n in range(5):
            body = "A zephyr rose. " * (n + 1) + ("The harbor was calm. " * n if n >= 2 else "")
            write_card(vault, f"old/wind{n}.md", f"Wind {n}", body + "Filler words. " * (4 - n))

    index = _harbor_index(vault, write_old)
    yield index
    index.close()


def test_the_older_rare_word_cards_keep_their_best_within_a_short_window(windy):
    # Each statement over the older rare-word cards keeps its best `window` rows only; the best
    # `window` must still be the five wind cards' own order, as ranking every card gives it.
    alternatives = ('"zephyr"', '"harbor"')
    expr = " OR ".join(alternatives)
    whole, _ = bound.whole_scores(windy.run, WEIGHTS.whole, expr, alternatives, 100, 1000)
    for window in range(1, 6):
        short, bounded = bound.whole_scores(windy.run, WEIGHTS.whole, expr, alternatives, window, BUDGET)
        assert bounded
        best = dict(sorted(whole.items(), key=lambda item: -item[1])[:window])
        assert short.keys() == best.keys()
        assert all(short[seq] == pytest.approx(score) for seq, score in best.items())
