"""Summaries (DESIGN §12): `summary:` is a field of its own, and what search results show."""

from __future__ import annotations

import json

from memsync import notes

from .conftest import write_card
from .mcp_helpers import scenario, server_log, text_of

__all__ = ["server_log"]  # a fixture, imported for the test below

LONG = "部署流程：先在 ecs-prod 上停掉 nginx，然后同步静态文件。" * 20  # > 500 characters
SUMMARY = "ecs-prod 的发布步骤：停 nginx、同步、再启动"


def test_summary_in_frontmatter_is_a_card_field():
    card = notes.parse(b"---\ntitle: t\nsummary: |\n  one line\n  and more\n---\nbody text here", "a.md")
    assert card.summary == "one line and more"
    assert notes.parse(b"---\ntitle: t\n---\nbody", "a.md").summary is None


def test_search_shows_the_summary_instead_of_a_body_window(cli, vault):
    write_card(vault, "03-Knowledge/deploy.md", "deploy steps", LONG, summary=SUMMARY)
    write_card(vault, "03-Knowledge/plain.md", "plain card", "nginx 在 ecs-prod 上的根目录是 /srv/www")
    cli("index")
    code, data = cli("search", "ecs-prod", "--json")
    assert code == 0
    shown = {hit["title"]: hit["snippet"] for hit in data["hits"]}
    assert shown["deploy steps"] == SUMMARY
    assert "/srv/www" in shown["plain card"]
    code, text = cli("search", "ecs-prod")
    assert SUMMARY in text and "同步静态文件" not in text


def test_a_summarys_words_find_the_card_and_rank_it_near_a_title(cli, vault):
    write_card(vault, "03-Knowledge/runbook.md", "runbook 7", "Stop the web tier first, then copy the files.",
               summary="how the quarterly failover drill goes")
    for n in range(3):  # the same word, only in bodies
        write_card(vault, f"03-Knowledge/other{n}.md", f"note {n}",
                   f"We talked about the failover drill again today, note {n}, at length.")
    cli("index")
    _, data = cli("search", "failover drill", "--json", "--explain")
    assert data["hits"][0]["path"] == "03-Knowledge/runbook.md"
    assert "h1" in data["hits"][0]["explain"]["fields"]  # counted with the top-level headings
    _, cjk = cli("search", "同步", "--json")
    assert cjk["hits"] == []
    write_card(vault, "03-Knowledge/sync.md", "部署", "先停掉 nginx。", summary="每晚同步静态文件")
    cli("index")
    _, cjk = cli("search", "同步", "--json")
    assert [h["path"] for h in cjk["hits"]] == ["03-Knowledge/sync.md"]


def test_capture_update_and_supersede_take_a_summary(cli, vault):
    code, made = cli("capture", "--title", "发布步骤", "--body", LONG, "--summary", SUMMARY, "--json")
    assert code == 0 and "warnings" not in made
    card = notes.parse((vault / made["path"]).read_bytes(), made["path"])
    assert (card.summary, card.body) == (SUMMARY, LONG)
    code, fixed = cli("update", made["id"], "--summary", "停 nginx 再同步", "--json")
    assert code == 0 and fixed["changed"] == ["summary"]
    assert notes.parse((vault / made["path"]).read_bytes(), made["path"]).summary == "停 nginx 再同步"
    code, cleared = cli("update", made["id"], "--summary", "", "--json")
    assert code == 0 and "summary:" not in (vault / made["path"]).read_text()
    code, newer = cli("supersede", made["id"], "--title", "发布步骤 v2", "--body", LONG + "再检查。",
                      "--summary", "新的发布步骤", "--json")
    assert code == 0 and newer["status"] == "superseded"
    assert notes.parse((vault / newer["path"]).read_bytes(), newer["path"]).summary == "新的发布步骤"


def test_a_long_body_without_summary_is_saved_with_a_warning_saying_why(cli, vault):
    code, data = cli("capture", "--title", "长卡片", "--body", LONG, "--json")
    assert code == 0 and data["status"] == "created"
    (warning,) = data["warnings"]
    assert "no summary" in warning and "hard to find" in warning and "split" in warning
    code, short = cli("capture", "--title", "短卡片", "--body", "nginx 根目录是 /srv/www/site", "--json")
    assert "warnings" not in short


def test_an_update_that_leaves_a_long_body_without_summary_warns_as_capture_does(cli, vault):
    _, short = cli("capture", "--title", "会长的卡", "--body", "nginx 根目录是 /srv/www/site", "--json")
    code, grown = cli("update", short["id"], "--body", LONG, "--json")
    assert code == 0 and grown["status"] == "updated"
    (warning,) = grown["warnings"]
    assert "no summary" in warning and "split" in warning
    _, summed = cli("update", short["id"], "--summary", "发布步骤", "--json")
    assert "warnings" not in summed
    _, cleared = cli("update", short["id"], "--summary", "", "--json")  # the long body stays, unsummed
    assert "no summary" in cleared["warnings"][0]
    _, retitled = cli("update", short["id"], "--title", "改名的卡", "--json")  # no nag on other fields
    assert "warnings" not in retitled


def test_the_threshold_is_a_config_key(cli, home):
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"summary_threshold": 2000}))
    _, data = cli("capture", "--title", "长卡片", "--body", LONG, "--json")
    assert "warnings" not in data
    (home / "config.json").write_text(json.dumps({"summary_threshold": "big"}))
    code, _ = cli("capture", "--title", "另一张", "--body", LONG, "--json")
    assert code == 2


def test_mcp_search_text_shows_the_summary(server_log, vault, cli):
    write_card(vault, "03-Knowledge/deploy.md", "deploy steps", LONG, summary=SUMMARY)
    cli("index")

    async def body(session):
        result = await session.call_tool("memory_search", {"query": "ecs-prod"})
        text = text_of(result)
        assert SUMMARY in text and "同步静态文件" not in text
        made = await session.call_tool("memory_capture", {
            "title": "another", "body": LONG, "summary": "短的摘要在这里"})
        assert "短的摘要在这里" in (vault / "03-Knowledge/another.md").read_text()
        assert "warnings" not in text_of(made)

    scenario(body, options=())(server_log)


def test_a_summary_given_by_hand_is_no_longer_marked_generated(cli, vault):
    (vault / "long.md").write_text("---\ntitle: long\nsummary: The first lines.\nsummary_generated: true\n---\n"
                                   + "The backup job runs nightly at two and keeps thirty days. " * 12 + "\n")
    cli("index")
    card_id = cli("search", "backup", "--json")[1]["hits"][0]["id"]
    assert cli("update", card_id, "--summary", "Nightly backups, kept thirty days.")[0] == 0
    text = (vault / "long.md").read_text()
    assert "summary: Nightly backups, kept thirty days." in text and "summary_generated" not in text
