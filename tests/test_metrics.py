"""The metric functions against cases worked out by hand."""

from __future__ import annotations

import math

import pytest

from bench import metrics
from memsync import benchmark

L3 = math.log2(3)


def test_ndcg_binary_with_a_miss_in_between():
    # DCG = 1/log2(2) + 0 + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3)
    assert metrics.ndcg_at(["a", "x", "b"], {"a", "b"}) == pytest.approx(1.5 / (1 + 1 / L3))


def test_ndcg_single_relevant_at_rank_two():
    assert metrics.ndcg_at(["x", "a"], {"a"}) == pytest.approx(1 / L3)


def test_ndcg_graded_in_the_wrong_order():
    # DCG = 1 + 2/log2(3); ideal = 2 + 1/log2(3)
    assert metrics.ndcg_at(["b", "a"], {"a": 2, "b": 1}) == pytest.approx((1 + 2 / L3) / (2 + 1 / L3))


def test_ndcg_ignores_what_lies_past_k_and_is_one_when_perfect():
    assert metrics.ndcg_at([f"x{i}" for i in range(10)] + ["a"], {"a"}, k=10) == 0.0
    assert metrics.ndcg_at(["a", "b"], {"a", "b"}) == pytest.approx(1.0)


def test_ndcg_ideal_is_cut_at_k_too():
    # 3 relevant, k=2, both top slots relevant: perfect, even though one relevant doc is missing
    assert metrics.ndcg_at(["a", "b"], {"a", "b", "c"}, k=2) == pytest.approx(1.0)


def test_recall_at_cutoffs():
    ranked = ["a", "x", "b"]
    assert metrics.recall_at(ranked, {"a", "b", "c"}, 2) == pytest.approx(1 / 3)
    assert metrics.recall_at(ranked, {"a", "b", "c"}, 3) == pytest.approx(2 / 3)
    assert metrics.recall_at(ranked, set(), 3) == 0.0


def test_mrr_uses_the_first_relevant_rank_within_k():
    assert metrics.mrr_at(["x", "y", "a", "b"], {"a", "b"}) == pytest.approx(1 / 3)
    assert metrics.mrr_at([f"x{i}" for i in range(10)] + ["a"], {"a"}, k=10) == 0.0


def test_summarize_averages_per_query():
    figures = metrics.summarize([(["a"], {"a"}), (["x"], {"a"})])
    assert figures["mrr@10"] == pytest.approx(0.5)
    assert figures["ndcg@10"] == pytest.approx(0.5)
    assert figures["queries"] == 2


def test_first_hit_on_empty_truth_means_returning_nothing():
    none = frozenset()
    assert benchmark.first_hit_ok([], none) is True
    assert benchmark.first_hit_ok(["a"], none) is False
    assert benchmark.first_hit_ok(["a", "b"], frozenset({"b"})) is False
    assert benchmark.first_hit_ok(["b"], frozenset({"b"})) is True


def test_capped_precision_does_not_punish_running_out_of_relevant_cards():
    assert benchmark.capped_precision(["a", "x", "b", "y", "z"], frozenset({"a", "b"})) == 1.0
    seven = frozenset("abcdefg")
    assert benchmark.capped_precision(["a", "x", "b", "y", "c"], seven) == pytest.approx(3 / 5)
    assert benchmark.capped_precision(["a"], frozenset()) is None


def test_noise_is_the_unacceptable_share_of_what_came_back():
    assert benchmark.noise_rate(["a", "x"], frozenset({"a"})) == 0.5
    assert benchmark.noise_rate([], frozenset({"a"})) == 0.0
    assert benchmark.noise_rate(["x", "y"], frozenset()) == 1.0
    assert benchmark.noise_rate(["a", "b", "c", "d", "e", "x"], frozenset("abcde")) == 0.0


@pytest.mark.parametrize(
    ("ranked", "held"),
    [(["a", "b"], True), (["b", "a"], False), (["a"], True), (["b"], False), ([], False)],
)
def test_pair_held(ranked, held):
    assert benchmark.pair_held(ranked, "a", "b") is held


def _report(first_hit, noise, pairs):
    summary = {"queries": 1, "first_hit": first_hit, "p_at_5": 1.0, "noise_at_5": noise, "tiers": {}}
    return {"overall": summary, "groups": {"kw": summary}, "pairs": {"pairs_held": pairs}}


def test_compare_flags_only_what_got_worse():
    base = _report(0.9, 0.2, 0.8)
    assert benchmark.compare(_report(1.0, 0.1, 0.9), base) == []
    worse = {w["metric"] for w in benchmark.compare(_report(0.8, 0.3, 0.7), base)}
    assert worse == {
        "overall.first_hit", "kw.first_hit", "overall.noise_at_5", "kw.noise_at_5",
        "pairs.pairs_held",
    }
