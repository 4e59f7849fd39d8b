"""What a hit shows of its body, through the CLI on a real vault, and the window rules alone."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.search.snippets import snippet

from .conftest import write_card
from .helpers import sync

FILLER = " ".join(f"filler{i}" for i in range(60))


def _shown(cli, text: str) -> dict[str, tuple[str, str]]:
    code, out = cli("search", text, "--json")
    assert code == 0, out
    return {h["path"]: (h["matched"], h["snippet"]) for h in out["hits"]}


def test_a_card_found_by_a_head_of_the_query_word_shows_where_the_head_is(vault, cli):
    # `postgresql` reaches a card saying only `postgres` (query.cuts): its window is the one the
    # query `postgres` shows, not the body's opening
    write_card(vault, "backups.md", "Nightly jobs",
               f"Jobs run from cron. {FILLER} The postgres backups run at 02:00 with pg_dump. {FILLER}")
    sync()
    matched, shown = _shown(cli, "postgresql")["backups.md"]
    assert matched == "all-prefix" and "The postgres backups run" in shown and shown.startswith("…")
    assert shown == _shown(cli, "postgres")["backups.md"][1]


@pytest.mark.parametrize("query,body,shown,not_shown", [
    # `inelastic` holds `elastic` but FTS5 never matched it there; `elasticity` begins with a head
    # but is a longer word: the window is around the word `elastic`
    ("elasticsearch", f"An inelastic budget, some elasticity. {FILLER} Logs go to the elastic cluster. {FILLER}",
     "Logs go to the elastic cluster", "elasticity"),
    # a CJK character ends the word before it (memsync.cjk)
    ("postgresql", f"开头的说明。{FILLER} 生产用postgres存订单。{FILLER}", "生产用postgres存订单", "开头"),
])
def test_the_head_shown_begins_a_word_and_a_whole_word_comes_first(vault, cli, query, body, shown, not_shown):
    write_card(vault, "card.md", "Card", body)
    sync()
    matched, snippet_shown = _shown(cli, query)["card.md"]
    assert matched == "all-prefix" and shown in snippet_shown and not_shown not in snippet_shown


def test_a_query_word_the_body_holds_is_shown_before_any_head():
    body = f"postgres first. {FILLER} {FILLER} then postgresql itself. {FILLER}"
    piece = snippet(body, ("postgresql",))
    assert "postgresql itself" in piece and "postgres first" not in piece


def test_a_body_holding_neither_word_nor_head_shows_its_opening():
    body = f"Jobs run from cron. {FILLER} {FILLER}"
    assert snippet(body, ("postgresql",)) == snippet(body, ("zzzz",))
    assert snippet(body, ("postgresql",)).startswith("Jobs run from cron.")


_WORDS = st.lists(st.sampled_from(["alpha", "登录", "用postgres", "inpostgres", "postgresdb", "postgres,", "x" * 30,
                                   "ﬁle"]), max_size=300)


@settings(max_examples=300, deadline=None)
@given(_WORDS, _WORDS)
def test_a_long_cards_window_around_a_head_is_the_one_the_whole_body_gives(before, after):
    # as for a query word (test_search), only a stretch around the head is looked at
    from memsync.search.snippets import SNIPPET_CHARS, _heads, _window

    body = " ".join([*before, "postgres", *after])
    whole = _window(body, ("postgresql",), SNIPPET_CHARS, False, False, _heads(("postgresql",)))
    piece = snippet(body, ("postgresql",))
    assert piece.strip("…") == whole.strip("…") and "postgres" in piece
    assert piece.startswith("…") == whole.startswith("…")
