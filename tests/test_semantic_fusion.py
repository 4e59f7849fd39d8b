"""Fusion of a lexical and a dense ranking: pure functions and HybridSearcher.order()."""

import pytest
from pytest import approx

from memsync.semantic import fusion
from memsync.semantic.hybrid import Candidates, HybridSearcher

np = pytest.importorskip("numpy", reason="memsync[semantic] is not installed")


def test_minmax_maps_each_ranking_onto_0_to_1():
    assert fusion.minmax({1: 10.0, 2: 5.0, 3: 0.0}) == {1: 1.0, 2: 0.5, 3: 0.0}
    assert fusion.minmax({1: 3.0}) == {1: 1.0}  # one candidate: the best there is
    assert fusion.minmax({}) == {}


def test_blend_weighs_the_parts_and_a_card_without_a_vector_keeps_its_lexical_part():
    lexical, dense = {1: 9.0, 2: 3.0, 3: 1.0}, {1: 0.80, 2: 0.90, 4: 0.85}
    fused = fusion.blend(lexical, dense, weight=0.5, unembedded=frozenset({3}))
    assert fused[1] == approx(0.5 * 0.0 + 0.5 * 1.0)
    assert fused[2] == approx(0.5 * 1.0 + 0.5 * 0.25)
    assert fused[4] == approx(0.5 * 0.5)  # found by meaning alone: no lexical part
    assert fused[3] == 0.0  # lexically last and not embedded yet: its lexical part, not half of it


def test_rrf_counts_only_the_order():
    assert fusion.rrf({1: 100.0, 2: 1.0}, {2: 0.9, 1: 0.1}) == fusion.rrf({1: 2.0, 2: 1.0}, {2: 0.5, 1: 0.4})


def order(dense_when="always", floor=None, strong=False):
    searcher = HybridSearcher(None, None, lexical=object(), dense_when=dense_when, floor=floor)
    found = Candidates({1: 5.0, 2: 4.0}, {1: 0.80, 2: 0.82, 3: 0.95, 4: 0.81},
                       standing={1: 0.0, 2: 0.4, 3: 3.0, 4: 0.2}, strong=strong)
    return [card for card, _ in searcher.order(found)]


def test_a_floor_keeps_out_cards_found_by_meaning_alone_that_do_not_stand_out():
    assert 3 in order(floor=2.0) and 4 not in order(floor=2.0)  # 3 sd up passes, 0.2 sd does not
    assert set(order()) == {1, 2, 3, 4}


def test_standing_is_the_z_score_over_the_vault_when_every_card_shares_a_script():
    best = np.array([0.80, 0.82, 0.95, 0.81])
    z = (best - best.mean()) / best.std()
    assert fusion.standing(best) == approx(z)
    assert fusion.standing(best, np.zeros(4, dtype=int), min_group=2) == approx(z)


def test_standing_measures_each_card_against_the_cards_of_its_script():
    # a Chinese query: its Chinese cards (script 0) all score high, the English answer (script 1)
    # scores lower than all of them, yet stands far above the other English cards
    best = np.array([0.86, 0.87, 0.88, 0.86, 0.87, 0.78, 0.79, 0.78, 0.79, 0.84])
    scripts = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    answer = 9
    assert fusion.standing(best)[answer] < 0.5  # against the whole vault: below the mean
    by_script = fusion.standing(best, scripts, min_group=5)
    assert by_script[answer] > 1.9 and by_script[answer] == by_script.max()
    # too few cards of a script to be a yardstick: the whole vault is
    assert fusion.standing(best, scripts, min_group=6) == approx(fusion.standing(best))


def test_rerank_lets_no_dense_only_card_in_when_every_word_matched():
    assert set(order("rerank", strong=True)) == {1, 2}
    assert 3 in order("rerank", strong=False)


def test_page_scores_never_rise_down_the_page():
    # a filled page: two strict hits, then looser ones whose own scores are higher
    assert fusion.page_scores([(1, 5.0), (2, 3.0), (3, 9.0), (4, 2.0)]) == {1: 5.0, 2: 3.0, 3: 3.0, 4: 2.0}
    ranked = sorted(fusion.minmax(fusion.page_scores([(7, 1.0), (8, 4.0)])).items(), key=lambda kv: -kv[1])
    assert [card for card, _ in ranked] == [7, 8]  # a tie keeps the page's order
