"""What a hit shows of its body, through the CLI on a real vault, and the window rules alone."""

import unicodedata

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


# Characters of several code points, each followed by a number so that every window is found once
# in the body; a window may end between two digits, never inside one of these.
CLUSTERS = {"accent typed apart": "e\u0301", "flag": "🇯🇵", "family": "👨\u200d👩\u200d👧",
            "skin tone": "👍🏽", "Hangul jamo": unicodedata.normalize("NFD", "한")}


@pytest.mark.parametrize("cluster", CLUSTERS.values(), ids=CLUSTERS.keys())
@pytest.mark.parametrize("count", [90, 400])  # a short body, and one cut to a stretch first
@pytest.mark.parametrize("terms", [("needle",), ("absent",)])  # a window around it, the opening
def test_a_window_without_spaces_never_cuts_inside_a_character(cluster, count, terms):
    for lead in range(len(cluster) + 1):
        parts = ["x" * lead] + [f"{cluster}{n}" for n in range(count)]
        parts.insert(count // 2, " needle ")
        inside, at = set(), 0
        for part in parts:
            if part.startswith(cluster):
                inside.update(range(at + 1, at + len(cluster)))
            at += len(part)
        body = "".join(parts)
        shown = snippet(body, terms).removeprefix("…").removesuffix("…")
        assert shown in body  # the body's own characters, even where folding composes them
        start = body.index(shown)
        assert start not in inside and start + len(shown) not in inside, (lead, shown)


def test_a_hit_on_a_decomposed_korean_card_shows_whole_syllables(vault, cli):
    """Typed as jamo (macOS file names, some input methods), a syllable cut at its vowel or its
    final showed as another one (한 as 하) or as a lone jamo."""
    korean = unicodedata.normalize("NFD", "한국어로된메모입니다" * 30)
    write_card(vault, "ko.md", "Korean note", f"{korean} needle {korean}")
    sync()
    shown = _shown(cli, "needle")["ko.md"][1].strip("…")
    composed = unicodedata.normalize("NFC", shown)
    assert composed in unicodedata.normalize("NFC", f"{korean} needle {korean}")


# Characters whose folded form (NFKC, lower case) has another length than they do.
RESHAPED = {"ligature": "ﬁle", "dotted capital I": "İstanbul", "full-width ㌔": "㌔", "square ㍻": "㍻",
            "decomposed accent": "Cafe\u0301"}


@pytest.mark.parametrize("word", RESHAPED.values(), ids=RESHAPED.keys())
@pytest.mark.parametrize("terms", [("needle",), ("absent",)])  # terms come folded
def test_a_body_that_folding_reshapes_is_shown_in_its_own_characters(word, terms):
    """Folding changed the body's length, so the window was cut from the folded text: a hit with
    no match in its body, or one found only once folded, showed `the grey heron` for `The Grey
    Heron` and `file` for `ﬁle`."""
    filler = " ".join(f"filler{i}" for i in range(15))
    body = f"The Grey {word} Heron {filler} ＮＥＥＤＬＥ at the pond {word} {filler}"
    shown = snippet(body, terms).strip("…")
    assert shown in body and word in shown
    if terms == ("needle",):  # found once folded: the window is around it, in the body's letters
        assert "ＮＥＥＤＬＥ at the pond" in shown
    else:
        assert shown.startswith("The Grey")


def test_a_hit_on_a_card_folding_reshapes_shows_the_cards_text(vault, cli):
    write_card(vault, "istanbul.md", "Ferry times", "İstanbul ferries leave Kadıköy every 20 minutes, "
               "ﬁrst at 06:00.")
    sync()
    assert _shown(cli, "ferry")["istanbul.md"][1].startswith("İstanbul ferries leave Kadıköy")


def test_the_window_shows_the_place_holding_the_most_query_words(vault, cli):
    # a long log whose common words (`the`, `at`) come early and often: the window is the one
    # line holding every word of `needle-at-the-end`, not the first `the`
    lines = "\n".join(f"Line {n}: the quick fox jumps at the lazy dog." for n in range(400))
    write_card(vault, "log.md", "Build log", f"{lines}\nthe build ended with needle-at-the-end\n")
    sync()
    matched, shown = _shown(cli, "needle-at-the-end")["log.md"]
    assert matched == "all" and "needle-at-the-end" in shown


def test_of_places_showing_as_many_words_the_first_is_shown():
    body = f"nginx root is /srv/www. {FILLER} {FILLER} nginx root again at the end. {FILLER}"
    assert "nginx root is /srv/www" in snippet(body, ("nginx", "root"))
    assert "again" in snippet(body, ("nginx", "again"))
