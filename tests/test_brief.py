"""`memsync brief` on a vault with two projects, through the real CLI and a real index: the right
cards in the right order, within the budget, never a flagged secret; and the pure pieces it
is made of (tokens, priorities, first lines, a section's count)."""

from __future__ import annotations

import pytest

from memsync.brief import tokens
from memsync.brief.select import first_line, priority_rank, shorten
from memsync.store.index import Index

from . import briefing
from .briefing import brief, titles
from .conftest import write_card

two_projects, brief_home = briefing.two_projects, briefing.brief_home  # fixtures


def test_the_brief_holds_the_projects_cards_by_priority_and_none_of_the_other_project(brief_home, cli):
    data = brief(cli, brief_home["shop"], "--peek")
    shop = titles(data, "project")
    assert shop[0] == "Shop deploy"  # priority: high
    assert set(shop) == {"Shop deploy", "Shop cache", "Orders table", "登录服务器", "AGENTS.md (shop)", "payments"}
    assert not {"Blog theme", "Post format", "drafts"} & set(shop) and "Blog" not in data["text"]
    assert titles(data, "used") == ["Git habits", "SSH config"]  # most read first
    blog = titles(brief(cli, brief_home["blog"], "--peek"), "project")
    assert set(blog) == {"Blog theme", "Post format", "drafts"}


def test_each_item_is_id_title_and_first_line(brief_home, cli):
    text = brief(cli, brief_home["shop"], "--peek")["text"]
    ids = brief_home["ids"]
    assert f"- {ids['Orders table']} Orders table — Orders are kept for seven years." in text.splitlines()
    assert text.rstrip().splitlines()[-1].startswith("Before this session ends, save what you learnt")
    assert "memory_capture" in text.splitlines()[-1] and "memory_search" in text


def test_a_flagged_secret_is_held_back_and_counted(brief_home, cli):
    data = brief(cli, brief_home["shop"], "--peek")
    assert "Shop database" not in data["text"] and "hunter2" not in data["text"]
    assert data["held_back"] == 1 and "Held back: 1 card" in data["text"]


def test_the_budget_is_kept_and_no_item_is_cut(brief_home, cli, vault):
    for n in range(40):
        write_card(vault, f"02-Projects/shop/note-{n:02}.md", f"Shop note {n:02}",
                   f"Shop fact number {n} about the checkout flow and its retries.\n")
    cli("index")
    whole = brief(cli, brief_home["shop"], "--peek", "--budget", "5000")["text"].splitlines()
    for budget in (200, 300, 450, 1200):
        data = brief(cli, brief_home["shop"], "--peek", "--budget", budget)
        assert tokens.estimate(data["text"]) <= budget, budget
        items = [line for line in data["text"].splitlines() if line.startswith("- ")]
        assert items and all(line in whole for line in items)  # each one whole
        assert data["text"].rstrip().splitlines()[-1].startswith("Before this session ends")
    small = brief(cli, brief_home["shop"], "--peek", "--budget", 300)["text"]
    assert "## This project (" in small  # says how many it left out


def test_a_budget_below_the_fixed_lines_is_refused(brief_home, cli):
    code, data = cli("brief", "--project", brief_home["shop"], "--budget", 50, "--json")
    assert code == 2 and "too small" in data["error"]["message"]


def test_a_project_folder_that_does_not_exist_is_refused(brief_home, cli, tmp_path):
    code, data = cli("brief", "--project", tmp_path / "no-such-project", "--json")
    assert code == 2 and "no such folder; give the project's folder" in data["error"]["message"]
    (tmp_path / "notes.txt").write_text("a file, not a project")
    code, data = cli("brief", "--project", tmp_path / "notes.txt", "--json")
    assert code == 2 and "notes.txt: not a folder; give the project's folder" in data["error"]["message"]


def test_the_same_index_gives_the_same_brief(brief_home, cli):
    first = brief(cli, brief_home["shop"], "--peek")["text"]
    assert brief(cli, brief_home["shop"], "--peek")["text"] == first
    assert brief(cli, brief_home["shop"])["text"] == first  # recording the mark changes nothing yet


def test_a_cards_summary_is_its_line(brief_home, cli, vault):
    write_card(vault, "02-Projects/shop/refunds.md", "Refunds", "# Refunds\n\nA long story about refunds.\n",
               summary="Refunds over 100 EUR need a second approver.")
    cli("index")
    items = {i["title"]: i for s in brief(cli, brief_home["shop"], "--peek")["sections"] for i in s["items"]}
    assert items["Refunds"]["line"] == "Refunds over 100 EUR need a second approver."


def test_a_p3_card_counts_as_low_and_a_listed_priority_is_reported(tmp_path, vault, cli):
    """docs/brief.md: `low`, `P3` and lower count as none; P3 ranked above a low card. A priority
    written as a list was dropped without a word."""
    project = tmp_path / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    for name in ("a", "b", "c"):  # the ids decide among cards of the same rank
        write_card(vault, f"02-Projects/{name}.md", f"Shop {name}", f"The {name} part of the shop.\n",
                   project="shop")
    assert cli("index")[0] == 0
    index = Index(tmp_path / "home" / "memsync.db")
    by_id = [row["path"] for row in sorted(index.cards(), key=lambda row: row["id"])]
    index.close()
    for path, priority in zip(by_id, ("low", "P3", "[high]"), strict=True):
        text = (vault / path).read_text().replace("project: shop", f"project: shop\npriority: {priority}")
        (vault / path).write_text(text)
    assert cli("index")[0] == 0
    order = titles(brief(cli, project, "--peek"), "project")
    assert order == [f"Shop {p.split('/')[-1][:-3]}" for p in by_id]
    problems = {p["path"]: p["message"] for p in cli("stats", "--json")[1]["problems"]}
    assert problems == {by_id[2]: "priority '[high]' is not one value, so the card has no priority; "
                                  "write one word or number, such as high or P1"}


def test_cjk_counts_one_token_a_character():
    assert tokens.estimate("登录服务器") == 5
    assert tokens.estimate("abcdefgh") == 2 and tokens.estimate("abcdefghi") == 3
    assert tokens.estimate("用prometheus管理，好。") == 2 + 3 + 2 + 2  # CJK 4, punctuation 2, 10 Latin
    assert tokens.estimate("") == 0


@pytest.mark.parametrize(("value", "rank"), [("high", 3), ("P0", 4), ("p2", 2), ("5", 4), ("3", 2), ("1", 0),
                                             ("low", 0), (None, 0), ("soon", 0), ("Critical", 4),
                                             ("P3", 0), ("p4", 0)])
def test_priority_words_and_numbers(value, rank):
    assert priority_rank(value) == rank


def test_the_first_line_skips_headings_fences_and_the_title():
    body = "# Title\n\n```sh\nmake x\n```\n- [ ] Check the **logs** first\nmore"
    assert first_line(body, "Title") == "Check the **logs** first"
    assert first_line("Title\n\n> quoted  text", "title") == "quoted text"
    assert shorten("word " * 50, 10).endswith("…") and tokens.estimate(shorten("word " * 50, 10)) <= 10
    assert tokens.estimate(shorten("登" * 100, 12)) <= 12


def test_a_claude_md_is_summed_up_by_its_first_line_past_its_imports(brief_home, cli):
    # Claude Code reads `@path` as "put that file here": the line itself tells an agent nothing
    shop = brief_home["shop"]
    (shop / "CLAUDE.md").write_text("# Shop\n\n@AGENTS.md\n- @~/.claude/extra.md @./docs/style.md\n\n"
                                     "Use Postgres 16; staging is shop_staging.\nAsk @ana before a release.\n")
    assert cli("index")[0] == 0
    lines = brief(cli, shop, "--peek")["text"].splitlines()
    assert [line.split(" ", 2)[2] for line in lines if " CLAUDE.md (shop) — " in line] == [
        "CLAUDE.md (shop) — Use Postgres 16; staging is shop_staging."]
    assert first_line("@ana please review the @docs/api.md changes", "t").startswith("@ana")
    assert first_line("See @README.md for an overview", "t") == "See @README.md for an overview"


def test_a_section_whose_query_stopped_says_its_count_is_a_lower_bound():
    from memsync.brief.select import select

    rows = [{"id": n, "source": "vault", "path": f"{n}.md", "title": f"Card {n}", "kind": None,
             "priority": None, "created": None, "updated": None, "invalid_at": None,
             "superseded_by": None, "supersedes": None, "reads": 100 - n} for n in range(1, 40)]
    texts = {r["id"]: (f"Body of card {r['id']} with a fact.", None) for r in rows}
    chosen = select([], [], rows, texts, {}, None, lambda s, p: None, 60, capped=frozenset({"used"}))
    used = chosen.sections["used"]
    assert used.capped and 0 < len(used.items) < used.total
    from memsync.brief.select import heading_text

    assert heading_text("used", len(used.items), used.total, None, used.capped).endswith(f"of {used.total}+)")


def test_a_chinese_line_is_cut_at_a_character_not_back_at_its_last_space(brief_home, cli, vault):
    """`CPU 超过九十…` lost everything after `CPU`: the cut went back to a space as in English."""
    body = "使用 prometheus 与 alertmanager，CPU 超过百分之九十持续五分钟就发送告警到钉钉群组并电话通知值班。\n"
    write_card(vault, "02-Projects/shop/监控.md", "监控告警", body, project="shop")
    cli("index")
    data = brief(cli, brief_home["shop"], "--peek")
    item = next(item for section in data["sections"] for item in section["items"] if item["title"] == "监控告警")
    line = next(text for text in data["text"].splitlines() if f"{item['id']} 监控告警" in text)
    shown = line.split(" — ", 1)[1]
    assert shown.endswith("…") and body.startswith(shown[:-1])
    assert "CPU 超过百分之九十" in shown and tokens.estimate(shown) <= 32
