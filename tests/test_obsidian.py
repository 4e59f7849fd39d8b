"""Obsidian's model of a note, through a real vault, a real index and the CLI: names, headings,
aliases, tags, wikilinks (anchor text, updated incrementally) and Excluded files."""

from __future__ import annotations

import json

from .conftest import write_card
from .helpers import found, sync

FILLER = "Obsidian notes sync settings with plugins and the vault. "


def _hits(cli, query, *options):
    code, data = cli("search", query, "--json", *options)
    assert code in (0, 1), data
    return data["hits"] if isinstance(data, dict) else []


def _paths(cli, query, *options):
    return [h["path"] for h in _hits(cli, query, *options)]


def test_the_file_name_finds_its_note_first(cli, vault):
    (vault / "Web Clipper").mkdir()
    (vault / "Web Clipper" / "Troubleshoot Web Clipper.md").write_text(
        "# Login issues\n\nIf the clipper cannot reach the page, reload it.\n")
    (vault / "Home.md").write_text("Start here: a list of everything.\n")
    for n in range(6):  # notes that say the same words more often, in their bodies
        write_card(vault, f"other/{n}.md", f"Other {n}",
                   "Troubleshoot the web clipper: the web clipper web clipper. Home home home.\n" * 2)
    cli("index")
    assert _paths(cli, "Troubleshoot Web Clipper")[0] == "Web Clipper/Troubleshoot Web Clipper.md"
    assert _paths(cli, "Home")[0] == "Home.md"
    assert _hits(cli, "Home")[0]["title"] == "Home"


def test_an_alias_and_a_title_of_the_commonest_words_rank_first(cli, vault):
    for n in range(12):
        write_card(vault, f"n{n}.md", f"Topic {n}", FILLER * (1 + n % 3))
    write_card(vault, "Settings.md", "Settings", "Every option, one page each.\n",
               aliases="[Obsidian settings]")
    write_card(vault, "Sync notes.md", "Sync notes", "How files travel between devices.\n")
    cli("index")
    hits = _hits(cli, "Obsidian settings")
    assert hits[0]["path"] == "Settings.md" and hits[0]["score"] > hits[1]["score"] >= 0
    assert _paths(cli, "sync notes")[0] == "Sync notes.md"


def test_a_long_card_with_the_exact_title_beats_short_mentions(cli, vault):
    write_card(vault, "Canvas.md", "Canvas", ("A long guide about boards, cards and arrows. " * 300)
               + "\nAt the very end, the word canvas once.\n")
    for n in range(5):
        write_card(vault, f"mention{n}.md", f"Mention {n}", "Open a canvas here.\n")
    cli("index")
    assert _paths(cli, "canvas")[0] == "Canvas.md"


def test_h1_and_other_headings_are_searchable_and_a_fenced_heading_is_not(cli, vault):
    (vault / "guide.md").write_text("# Big picture\n\ntext\n\n## Deinen Tarif downgraden\n\nmore\n"
                                    "```\n# Fenced comment\n```\n")
    write_card(vault, "plans.md", "Plans", "To downgrade your Tarif, open the account page. Tarif.\n")
    cli("index")
    assert _paths(cli, "Deinen Tarif downgraden")[0] == "guide.md"
    assert _hits(cli, "guide")[0]["title"] == "guide"  # not "Big picture", not "Fenced comment"


def test_a_link_label_finds_the_target_and_follows_edits_of_the_linking_note(cli, vault):
    write_card(vault, "Note.md", "Note", "The note about the cache eviction policy.\n")
    linking = write_card(vault, "daily/today.md", "Today", "Read [[Note|quokka]] again, and [[note]].\n")
    cli("index")
    hits = _hits(cli, "quokka")
    assert [h["path"] for h in hits] == ["Note.md", "daily/today.md"]
    assert hits[0]["inlinks"] == 1 and hits[1]["inlinks"] == 0
    linking.write_text("---\ntitle: Today\n---\nRead [[Note#Eviction|wombat]] now.\n")
    sync()
    assert found("wombat") == ["Note.md", "daily/today.md"]
    assert found("quokka") == []
    linking.unlink()
    sync()
    assert found("wombat") == [] and _hits(cli, "cache")[0]["inlinks"] == 0


def test_a_link_resolves_when_its_target_appears_and_by_path(cli, vault):
    write_card(vault, "a.md", "A", "Points at [[projects/Plan|roadmap]] and [[Later]].\n")
    cli("index")
    assert found("roadmap") == ["a.md"]
    write_card(vault, "projects/Plan.md", "Plan", "The plan.\n")
    write_card(vault, "archive/Plan.md", "Old plan", "An old plan.\n")  # same name, other folder
    (vault / "Later.md").write_text("Written after the link.\n")
    sync()
    assert found("roadmap") == ["projects/Plan.md", "a.md"]
    assert _hits(cli, "Later")[0]["inlinks"] == 1


def test_nested_and_inline_tags_filter_and_search(cli, vault):
    write_card(vault, "a.md", "Alpha", "Body with #project/memsync inline.\n")
    write_card(vault, "b.md", "Beta", "Plain body mentioning project.\n", tags="[Project]")
    write_card(vault, "c.md", "Gamma", "```\n#project/hidden in code\n```\nbody\n")
    cli("index")
    assert sorted(_paths(cli, "body", "--tag", "project")) == ["a.md", "b.md"]
    assert _paths(cli, "body", "--tag", "#project/memsync") == ["a.md"]
    assert _paths(cli, "memsync") == ["a.md"]
    assert _paths(cli, "body", "--tag", "hidden") == []


def test_obsidian_excluded_files_are_not_indexed(cli, vault):
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text(json.dumps(
        {"userIgnoreFilters": ["Templates/", "/\\.excalidraw\\.md$/", "Archive"]}))
    write_card(vault, "Templates/t.md", "Template", "placeholder zebra\n")
    write_card(vault, "Archived notes.md", "Archived", "old zebra\n")
    write_card(vault, "drawing.excalidraw.md", "Drawing", "zebra shapes\n")
    write_card(vault, "kept.md", "Kept", "a real zebra\n")
    cli("index")
    assert _paths(cli, "zebra") == ["kept.md"]
    (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": []}))
    cli("index")
    assert len(_paths(cli, "zebra")) == 4


def test_japanese_korean_and_chinese_titles_and_headings_rank_first(cli, vault):
    """Japanese mixes kanji and kana without spaces, Korean writes words with spaces and
    particles attached; a CJK run typed as a title or heading ranks that note first, and in the
    strict tiers a run is matched as written, not as its bigrams far apart."""
    write_card(vault, "京都.md", "京都", "京都の観光地とお寺の一覧です。\n")
    write_card(vault, "天気.md", "東京都の天気", "東京都の天気予報。明日は晴れ。\n")
    write_card(vault, "旅行.md", "旅行メモ", "東京と京都と大阪。京都の宿。京都駅の近く。京都タワー。\n")
    (vault / "데이터.md").write_text("## Google Keep에서 데이터 내보내기\n\n설정에서 데이터를 내보냅니다.\n")
    write_card(vault, "기타.md", "기타", "데이터 데이터를 내보내기 전에 Keep 백업을 확인하세요. 데이터.\n")
    (vault / "設定.md").write_text("# 設定\n\n所有的設定。\n")
    write_card(vault, "同步.md", "同步", "同步設定與設定檔，設定設定。\n")
    cli("index")
    assert _paths(cli, "京都")[0] == "京都.md"
    # 旅行.md has 東京 and 京都, never 東京都: it only fills the page below, matched apart
    assert [h["path"] for h in _hits(cli, "東京都") if h["matched"] == "all"] == ["天気.md"]
    assert _paths(cli, "Google Keep에서 데이터 내보내기")[0] == "데이터.md"
    assert _paths(cli, "設定")[0] == "設定.md"
