"""Obsidian's order of a note's parts in the ranking, and a full page for every query."""

from .conftest import write_card
from .helpers import sync

PHONES = ("Obsidian for Android", "Obsidian for iOS", "Obsidian CLI")


def _search(cli, *args):
    code, out = cli("search", *args, "--json")
    assert code == 0, out
    return out


def _notes_with_a_section(vault, heading: str, words: str) -> None:
    for title in PHONES:
        write_card(vault, f"{title}.md", title,
                   f"{title} runs on its platform.\n\n## Install\n\nGet it from the store.\n\n"
                   f"## {heading}\n\n{words}\n\n## Settings\n\nOpen the settings.\n")


def test_a_note_named_for_a_topic_beats_notes_with_a_section_of_that_name(vault, cli):
    _notes_with_a_section(vault, "Sync", "Turn on sync to keep your notes the same on every device.")
    write_card(vault, "Introduction to Obsidian Sync.md", "Introduction to Obsidian Sync",
               "A paid service that keeps your vaults the same on all your devices.\n")
    sync()
    out = _search(cli, "sync")
    assert out["hits"][0]["path"] == "Introduction to Obsidian Sync.md"
    assert {h["path"] for h in out["hits"][1:]} == {f"{t}.md" for t in PHONES}


def test_the_cjk_twin_a_title_holding_同步_beats_sections_named_同步(vault, cli):
    _notes_with_a_section(vault, "同步", "開啟同步，讓每台裝置上的筆記都一樣。")
    write_card(vault, "Obsidian 同步簡介.md", "Obsidian 同步簡介", "一項付費服務，讓你所有裝置上的保險庫保持一致。\n")
    sync()
    assert _search(cli, "同步")["hits"][0]["path"] == "Obsidian 同步簡介.md"


def test_an_exact_heading_no_title_holds_still_finds_its_note_first(vault, cli):
    write_card(vault, "Manage vaults.md", "Manage vaults",
               "Open another vault from the vault switcher.\n\n## Create a new vault\n\nPick a folder.\n")
    write_card(vault, "Vault settings.md", "Vault settings", "Create a shortcut to a new file in the vault.\n")
    write_card(vault, "New notes.md", "Create new notes", "Create a note in any vault folder.\n")
    sync()
    out = _search(cli, "Create a new vault", "--explain")
    assert out["hits"][0]["path"] == "Manage vaults.md"
    assert "exact" in out["hits"][0]["explain"]["fields"]


def test_a_question_whose_every_word_matches_two_cards_still_gets_a_full_page(vault, cli):
    write_card(vault, "a.md", "Tuesday", "Melanie painted a sunrise over the lake on Tuesday morning.")
    write_card(vault, "b.md", "Lake trip", "Melanie painted the lake at sunrise, her favourite view.")
    for n in range(8):
        write_card(vault, f"c{n}.md", f"Day {n}", f"Melanie talked about the lake trip number {n}.")
    sync()
    out = _search(cli, "Melanie painted sunrise lake")
    hits = out["hits"]
    assert len(hits) == 10  # every card holding a word of the question, not the two alone
    strict = [h for h in hits if h["matched"] == out["matched"]]
    assert {h["path"] for h in strict} == {"a.md", "b.md"} and hits[:2] == strict
    part = next(n for n in out["notes"] if n["code"] == "strict_part")
    assert part["strict"] == 2 and part["rest"] == 8
    # Melanie and lake are in every card of this small vault: the 8 below hold nothing else
    assert out["note"].startswith("2 matched every word; 8 below matched only its common words")
    assert all(h["matched"] == "any-common" for h in hits[2:])


def _common_word_vault(vault, holding: int, total: int = 60) -> None:
    for n in range(total):
        said = "what the weather did today" if n < holding else "a quiet day"
        write_card(vault, f"day{n}.md", f"Day {n}", f"Notes of day {n}: {said}.")
    write_card(vault, "heron.md", "Heron", "The grey heron eats small fish at the river.")


def test_a_word_most_cards_hold_is_weak_in_a_question_and_not_required(vault, cli):
    _common_word_vault(vault, holding=45)  # "what" in 45 of 61 cards: weak
    sync()
    out = _search(cli, "what did the heron eat", "--explain")
    assert out["hits"][0]["path"] == "heron.md"
    assert out["matched"] == "all"  # the heron card lacks "what" and "did", yet holds the question
    first = out["explain"]["tiers"][0]["match"]
    assert "heron" in first and "what" not in first


def test_a_word_stops_being_weak_once_fewer_cards_hold_it(vault, cli):
    # The weak decision is kept between searches of one process only while the index is the
    # same: the library's searcher, twice over one index, with cards removed in between.
    from memsync import config
    from memsync.search.lexical import LexicalSearcher
    from memsync.store.index import Index

    _common_word_vault(vault, holding=45)
    sync()
    index = Index(config.load().db.path)
    try:
        assert "what" not in LexicalSearcher(index).plan("what heron").content
        for n in range(10, 45):
            write_card(vault, f"day{n}.md", f"Day {n}", f"Notes of day {n}: a quiet day.")
        sync()
        assert "what" in LexicalSearcher(index).plan("what heron").content  # 10 of 61 cards
    finally:
        index.close()


def test_a_question_whose_content_words_match_few_cards_is_topped_up_by_its_common_words(vault, cli):
    _common_word_vault(vault, holding=45)
    sync()
    out = _search(cli, "what did the heron eat")
    hits = out["hits"]
    assert len(hits) == 10 and hits[0]["path"] == "heron.md"
    assert all(h["matched"] == "any-common" for h in hits[1:])  # below, and labelled
    part = next(n for n in out["notes"] if n["code"] == "strict_part")
    assert part["strict"] == 1 and part["rest_tier"] == "any-common"
    assert "only its common words" in out["note"]


def test_a_title_holding_a_common_word_of_the_query_holds_the_query(vault, cli):
    # "obsidian" is in nearly every card, so it is weak and left out of the matching; a title
    # still names the note by it: "Obsidian Sync intro" holds `obsidian sync`, "Headless Sync" does not,
    # though its headings say sync more often.
    for n in range(60):
        write_card(vault, f"o{n}.md", f"Note {n}", f"Obsidian keeps note {n} in a folder.")
    write_card(vault, "Headless Sync.md", "Headless Sync",
               "Obsidian can sync without the app.\n\n## Sync a vault\n\nRun it.\n\n## Sync settings\n\nSet it.\n")
    write_card(vault, "Obsidian Sync intro.md", "Obsidian Sync intro", "A paid service that keeps devices the same.\n")
    sync()
    out = _search(cli, "Obsidian Sync", "--explain")
    assert "obsidian" not in out["explain"]["tiers"][0]["match"]  # weak: not required
    first, second = out["hits"][:2]
    assert first["path"] == "Obsidian Sync intro.md" and second["path"] == "Headless Sync.md"
    assert "held" in first["explain"]["fields"] and "held" not in second["explain"]["fields"]


def test_a_japanese_question_finds_the_note_named_for_its_words_over_a_long_one_full_of_particles(vault, cli):
    # The Osaka note shares only particle pairs with the question (に行, 時に, なら, を食), dozens
    # of them; the Kanazawa note is named for its first word and holds 海鮮丼.
    write_card(vault, "大阪 週末.md", "大阪 週末",
               "夜に行くと混む。昼に食べるなら串カツ。土曜日に行った。お好み焼きを食べた。\n"
               "なんばに行くなら地下鉄。帰りは何時になってもいい。道頓堀に行く人が多い。\n")
    write_card(vault, "金沢 日帰り.md", "金沢 日帰り",
               "北陸新幹線で日帰り。近江町市場の海鮮丼は開店前に着くと並ばない。兼六園も回った。\n")
    for n in range(10):  # particles are common: most notes hold them
        write_card(vault, f"memo{n}.md", f"メモ {n}", f"予定その{n}。買い物に行くなら夕方。\n")
    sync()
    out = _search(cli, "金沢で朝に海鮮丼を食べるなら何時に行く", "--explain")
    assert out["hits"][0]["path"] == "金沢 日帰り.md", [(h["path"], h["explain"]["parts"]) for h in out["hits"]]


def test_the_strict_part_note_names_every_lower_tier_below_it(vault, cli):
    _common_word_vault(vault, holding=45)
    write_card(vault, "egret.md", "Egret", "The little egret eats frogs in the reeds.")
    sync()
    out = _search(cli, "what did the heron eat")
    assert [h["matched"] for h in out["hits"][:3]] == ["all", "any", "any-common"]
    part = next(n for n in out["notes"] if n["code"] == "strict_part")
    assert part["rest_tier"] == "any" and part["rest"] == 9
    assert part["rests"] == [{"tier": "any", "count": 1}, {"tier": "any-common", "count": 8}]
    assert "1 matched some of the words, then 8 only its common words" in out["note"]


def _small_vault(vault) -> None:
    write_card(vault, "lift.md", "Lift maintenance", "The elevator in building B is serviced every March.")
    write_card(vault, "stairs.md", "Stairs", "Use the stairs when the elevator is out of order.")
    write_card(vault, "escalator.md", "Escalator", "An escalator in hall C, serviced in May.")
    for n, topic in enumerate(("budget", "roadmap", "offsite", "hiring plan", "office move", "launch", "retro")):
        write_card(vault, f"n{n}.md", f"Note {n}", f"Notes on the {topic}: the plan is on the board.")


def test_in_a_small_vault_cards_holding_only_a_common_word_come_last_and_say_so(vault, cli):
    _small_vault(vault)  # 10 cards: "the" is in 9 of them
    sync()
    out = _search(cli, "the elevator", "-n", "20")
    assert [h["path"] for h in out["hits"][:2]] == ["stairs.md", "lift.md"]
    assert all(h["matched"] == "all" for h in out["hits"][:2])
    assert {h["matched"] for h in out["hits"][2:]} == {"any-common"} and len(out["hits"]) == 9
    assert "7 below matched only its common words" in out["note"]


def test_in_a_small_vault_a_common_word_is_still_required_in_the_strict_part(vault, cli):
    _small_vault(vault)
    sync()
    out = _search(cli, "the escalator")
    # the escalator card lacks "the", so it is no strict hit (in a large vault it would be one)
    assert out["matched"] == "any" and out["hits"][0]["path"] == "escalator.md"
    assert {h["matched"] for h in out["hits"][1:]} == {"any-common"}
