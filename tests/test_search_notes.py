"""A search's notes are codes with data; the CLI and the MCP edge word them, each its own way."""

from memsync import output
from memsync.mcp import text as mcp_text

from .conftest import write_card
from .helpers import sync


def test_notes_are_codes_with_data_and_the_json_note_is_worded_from_them(vault, cli):
    for n in range(3):
        write_card(vault, f"n{n}.md", f"note {n}", "the gateway timeout is thirty seconds here")
    sync()
    code, out = cli("search", "gateway", "-n", "2", "--json")
    assert out["notes"] == [{"code": "more", "shown": 2, "max": 20}]
    assert out["note"] == output.search_note(out["notes"])
    assert "more cards matched than the 2 shown" in out["note"] and "raise the limit (up to 20)" in out["note"]
    assert out["terms"] == ["gateway"]


def test_an_empty_result_names_its_reason_by_code(vault, cli):
    write_card(vault, "a.md", "alpha", "the gateway timeout is thirty seconds here", kind="knowledge")
    sync()
    code, out = cli("search", "gateway", "--kind", "project", "--json")
    assert code == 1 and out["notes"] == [{"code": "no_kind", "kind": "project", "kinds": ["knowledge"]}]
    code, out = cli("search", "nothinglikethis", "--json")
    assert out["notes"] == [{"code": "empty", "filters": {}}]


def test_each_edge_words_the_same_note_its_own_way():
    hidden = [{"code": "hidden_invalid", "count": 2, "more": False}]
    assert "--include-invalid" in output.search_note(hidden)
    assert "include_invalid=true" in mcp_text.search_note(hidden) and "--" not in mcp_text.search_note(hidden)
    more = [{"code": "more", "shown": 10, "max": 20}]
    assert mcp_text.search_note(more) is None  # the reply's `10+ hits` head says it
    strict = [{"code": "strict_part", "strict": 3, "tier": "all", "rest": 7, "rest_tier": "any"}]
    assert output.search_note(strict) == "3 matched every word; 7 below matched some of the words"
    assert mcp_text.search_note(strict) == "the first 3 matched every word; the 7 after them some words"
    two = [{"code": "strict_part", "strict": 1, "tier": "all", "rest": 9, "rest_tier": "any",
            "rests": [{"tier": "any", "count": 1}, {"tier": "any-common", "count": 8}]}]
    assert output.search_note(two) == ("1 matched every word; 9 below: 1 matched some of the words, "
                                       "then 8 only its common words")
    assert mcp_text.search_note(two) == ("the first 1 matched every word; the 9 after them: 1 some words, "
                                         "then 8 common words only")
    unembedded = [{"code": "no_vectors"}]
    assert "run `memsync index --embed`" in output.search_note(unembedded)
    assert mcp_text.search_note(unembedded).startswith("no card has a vector yet, so this searched by words only; the user")


def test_explain_shows_tier_parts_and_match_in_text_and_json(vault, cli):
    write_card(vault, "sync.md", "Obsidian Sync", "Sync keeps your vault the same on every device.")
    write_card(vault, "other.md", "Phone", "Settings for the phone.\n\n## Sync\n\nturn sync on.")
    sync()
    code, out = cli("search", "sync", "--json", "--explain")
    assert code == 0
    tiers = out["explain"]["tiers"]
    assert tiers[0]["tier"] == "all" and tiers[0]["match"] == '"sync"' and tiers[0]["hits"] == 2
    first = out["hits"][0]["explain"]
    assert first["tier"] == "all" and first["parts"] and "fields" in first
    assert abs(sum(first["parts"].values()) - out["hits"][0]["score"]) < 0.01
    code, plain = cli("search", "sync", "--json")
    assert "explain" not in plain and all("explain" not in h for h in plain["hits"])
    code, text = cli("search", "sync", "--explain")
    assert "why: all" in text and 'tier all: 2 hit(s); MATCH "sync"' in text
