"""Fusion of a lexical and a dense ranking: pure functions and HybridSearcher.order()."""

from pytest import approx

from memsync.semantic import fusion
from memsync.semantic.hybrid import Candidates, HybridSearcher


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
    found = Candidates({1: 5.0, 2: 4.0}, {1: 0.80, 2: 0.82, 3: 0.95, 4: 0.81}, mean=0.80, sd=0.05,
                       strong=strong)
    return [card for card, _ in searcher.order(found)]


def test_a_floor_keeps_out_cards_found_by_meaning_alone_that_do_not_stand_out():
    assert 3 in order(floor=2.0) and 4 not in order(floor=2.0)  # 0.95 is 3 sd up, 0.81 is not
    assert set(order()) == {1, 2, 3, 4}


def test_rerank_lets_no_dense_only_card_in_when_every_word_matched():
    assert set(order("rerank", strong=True)) == {1, 2}
    assert 3 in order("rerank", strong=False)
