"""`show`: windows over long cards, explicit truncation, read stats, invalid banner."""

import pytest

from memsync import paging

from .conftest import write_card
from .helpers import indexer, sync


def card_id(cli, word):
    return cli("search", word, "--json")[1]["hits"][0]["id"]


def test_window_reports_what_is_left():
    page = paging.window("x" * 50, offset=0, max_chars=20)
    assert (page["returned"], page["has_more"], page["next_offset"], page["length"]) == (20, True, 20, 50)
    assert page["text"] == "x" * 20  # the card's characters only; the hint stands beside them
    assert "30 more characters" in page["hint"] and "offset 20" in page["hint"]


def test_the_whole_text_is_offered_only_while_what_is_left_is_not_huge():
    near = paging.window("x" * (20 + paging.FULL_HINT_CHARS), max_chars=20)
    assert near["hint"].endswith("continue with --offset 20, or --full for the whole text]")
    huge = paging.window("x" * (21 + paging.FULL_HINT_CHARS), max_chars=20)
    assert huge["hint"].endswith("continue with --offset 20, a window at a time]")
    assert "--full" not in huge["hint"]


def test_last_window_has_no_more():
    page = paging.window("x" * 50, offset=40, max_chars=20)
    assert (page["returned"], page["has_more"], page["next_offset"]) == (10, False, None)
    assert page["text"] == "x" * 10


def test_a_window_past_the_end_says_so():
    page = paging.window("x" * 86, offset=1000)
    assert page["text"] == "" and page["returned"] == 0 and page["has_more"] is False
    assert page["hint"] == "[offset 1000 is past the end: the card has 86 characters]"
    assert "hint" not in paging.window("x" * 86, offset=86 - 10) and "hint" not in paging.window("")


def test_zero_max_chars_and_full_mean_everything():
    assert paging.window("y" * 30000, max_chars=0)["returned"] == 30000
    assert paging.window("y" * 30000, full=True)["has_more"] is False


def test_default_window_is_20000_chars(vault, cli):
    write_card(vault, "long.md", "long card", "longword " + "z" * 30000)
    sync()
    out = cli("show", card_id(cli, "longword"), "--json")[1]
    assert out["returned"] == 20000 and out["has_more"] and out["next_offset"] == 20000
    assert len(out["text"]) == 20000 and "more characters" in out["hint"]
    rest = cli("show", out["id"], "--offset", 20000, "--json")[1]
    assert rest["has_more"] is False and rest["returned"] == out["length"] - 20000
    assert out["text"] + rest["text"] == "longword " + "z" * 30000 and "hint" not in rest
    _, human = cli("show", out["id"])
    # the options of `memsync show` that do it, as written on its command line
    assert human.rstrip().endswith("continue with --offset 20000, or --full for the whole text]")


def test_show_names_the_kind_and_tags_as_memory_get_does(vault, cli):
    (vault / "t.md").write_text("---\ntitle: tagged\nkind: tool\ntags: [deploy, infra/k8s]\n---\n"
                                "a tagged card about #rollout windows\n")
    sync()
    _, human = cli("show", card_id(cli, "rollout"))
    assert human.splitlines()[2] == "tool · #deploy #infra/k8s #rollout"


def test_show_counts_reads(vault, cli):
    write_card(vault, "a.md", "alpha", "readable card text")
    sync()
    cid = card_id(cli, "readable")
    for _ in range(3):
        cli("show", cid)
    _, index = indexer()
    count, last = index.read_stats(cid)
    index.close()
    assert count == 3 and last


def test_search_does_not_count_reads(vault, cli):
    write_card(vault, "a.md", "alpha", "readable card text")
    sync()
    cid = card_id(cli, "readable")
    _, index = indexer()
    assert index.read_stats(cid)[0] == 0
    index.close()


def test_superseded_card_starts_with_a_banner(vault, cli):
    write_card(vault, "old.md", "old", "old address 10.0.0.1",
               invalid_at="2026-03-01T10:00:00+08:00", superseded_by="new.md")
    write_card(vault, "new.md", "new", "new address 10.0.0.9", supersedes="old.md")
    sync()
    out = cli("search", "address", "--include-invalid", "--json")[1]
    old = next(h for h in out["hits"] if h["path"] == "old.md")
    shown = cli("show", old["id"], "--json")[1]
    first_line = shown["text"].splitlines()[0]
    assert shown["valid"] is False and shown["superseded_by"] == "new.md"
    assert "2026-03-01" in first_line and "new.md" in first_line and "--as-of 2026-02-28" in first_line


def test_unknown_id_exits_1(vault, cli):
    write_card(vault, "a.md", "alpha", "x" * 30)
    sync()
    code, out = cli("show", 12345, "--json")
    assert code == 1 and "memsync search" in out["error"]["message"]


def test_negative_offset_is_an_argument_error(vault, cli):
    write_card(vault, "a.md", "alpha", "readable card text")
    sync()
    code, out = cli("show", card_id(cli, "readable"), "--offset", -5, "--json")
    assert code == 2


@pytest.mark.parametrize("args", [
    ("show", 2**63), ("show", "--", -(2**63) - 1), ("update", 10**20, "--body", "a body of some length here"),
    ("feedback", 2**63, "--helpful"), ("delete", 2**63), ("log", "--card", 2**63),
    ("supersede", 2**63, "--title", "t", "--body", "a body of some length here"),
])
def test_an_id_too_long_for_sqlite_is_an_argument_error(vault, run_cli, args):
    """Two ids pasted together once reached SQLite and ended in an OverflowError's traceback."""
    write_card(vault, "a.md", "alpha", "readable card text")
    sync()
    code, _, err = run_cli(*args)
    assert code == 2 and "too long to be a card id; find ids with `memsync search`" in err
    assert "Traceback" not in err
