"""The capped prior from use (memsync.lifecycle.prior): near-ties only, never across classes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from memsync.lifecycle import prior

HELPFUL = {"helpful": 50, "unhelpful": 0, "opened": 50}


def _order(hits, uses):
    return [h[0] for h in prior.reorder(hits, lambda h: h[1], lambda h: h[2], lambda h: uses.get(h[0]))]


def test_a_helpful_card_passes_a_near_tie_of_its_class():
    hits = [("a", 10.0, "body"), ("b", 9.95, "body")]
    assert _order(hits, {"b": HELPFUL}) == ["b", "a"]


def test_it_never_passes_a_title_match_however_close():
    hits = [("title", 10.0, "title"), ("body", 9.999, "body")]
    assert _order(hits, {"body": HELPFUL}) == ["title", "body"]


def test_it_never_passes_a_hit_more_than_the_cap_ahead():
    hits = [("a", 10.0, "body"), ("b", 9.7, "body")]
    assert _order(hits, {"b": HELPFUL}) == ["a", "b"]


def test_no_use_changes_nothing_and_unhelpful_earns_nothing():
    hits = [("a", 10.0, "body"), ("b", 9.99, "body"), ("c", 9.98, "body")]
    assert _order(hits, {}) == ["a", "b", "c"]
    assert _order(hits, {"c": {"helpful": 1, "unhelpful": 3, "opened": 9}}) == ["a", "b", "c"]
    assert prior.boost(HELPFUL) == prior.CAP and prior.boost(None) == 0


@given(st.lists(st.tuples(st.floats(1, 100), st.sampled_from(["title", "body"]),
                          st.integers(0, 10), st.integers(0, 10)), min_size=1, max_size=12))
def test_the_cap_holds_for_any_hits_and_use(rows):
    hits = sorted(((f"c{i}", s, k) for i, (s, k, _h, _u) in enumerate(rows)), key=lambda h: -h[1])
    uses = {f"c{i}": {"helpful": h, "unhelpful": u, "opened": h} for i, (_s, _k, h, u) in enumerate(rows)}
    out = prior.reorder(hits, lambda h: h[1], lambda h: h[2], lambda h: uses[h[0]])
    assert sorted(out) == sorted(hits)
    place = {h[0]: n for n, h in enumerate(out)}
    for x in hits:
        for y in hits:
            if place[x[0]] < place[y[0]] and x[1] < y[1]:  # x was lifted above y
                assert x[2] == y[2], "crossed a class"
                assert y[1] <= x[1] * (1 + prior.CAP) * (1 + prior.CAP), "more than a near-tie"


def test_through_the_cli_the_prior_is_off_unless_config_turns_it_on(cli, vault, home):
    import json

    from .conftest import write_card

    write_card(vault, "a.md", "alpha", "the rsync flag list for backups lives here, see below")
    write_card(vault, "b.md", "beta", "the rsync flag list for backups lives here, see below")
    cli("index")
    _, first = cli("search", "rsync", "--json")
    order = [h["id"] for h in first["hits"]]
    assert first["hits"][0]["score"] == first["hits"][1]["score"]  # a tie
    for _ in range(5):
        cli("feedback", order[1], "--helpful")
    _, again = cli("search", "rsync", "--json")
    assert [h["id"] for h in again["hits"]] == order  # off by default
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"use_prior": True}))
    _, lifted = cli("search", "rsync", "--json")
    assert [h["id"] for h in lifted["hits"]] == order[::-1]


def test_explain_shows_each_hits_use_and_the_priors_boost(cli, vault, home):
    from .conftest import write_card

    write_card(vault, "a.md", "alpha", "the rsync flag list for backups lives here, see below")
    cli("index")
    _, found = cli("search", "rsync", "--json")
    card = found["hits"][0]["id"]
    cli("feedback", card, "--helpful")
    _, off = cli("search", "rsync", "--json", "--explain")
    use = off["hits"][0]["explain"]["use"]
    assert use["helpful"] == 1 and use["returned"] == 1 and use["boost"] == 0.0  # prior off; this search not yet counted
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"use_prior": True}))
    _, on = cli("search", "rsync", "--json", "--explain")
    assert 0 < on["hits"][0]["explain"]["use"]["boost"] <= prior.CAP
    _, text = cli("search", "rsync", "--explain")
    assert "use: returned 3, opened 0, helpful 1, unhelpful 0" in text
    _, plain = cli("search", "rsync", "--json")
    assert "explain" not in plain["hits"][0]
