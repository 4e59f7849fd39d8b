"""`memsync mcp` driven as a real subprocess through the SDK's stdio client, as an agent would."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import anyio
from mcp.client import Client

from bench.mcp_budget import make_vault
from memsync import api, config
from memsync.mcp import server as mcp_server

from .conftest import write_card
from .mcp_helpers import (
    DEADLINE,
    LEAKS,
    STRUCTURED,
    TOOLS,
    connected,
    eventually,
    read_hits,
    refused,
    scenario,
    server_log,
    text_of,
    tool,
)
from .mcp_helpers import hits as _hits

__all__ = ["server_log"]  # a fixture, imported for the tests below

TOOLS_LIST_BUDGET = 7000  # bytes, json.dumps of tools/list as the client parses it (issue 12)


def test_handshake_lists_eight_small_tools_that_keep_the_guidance(server_log):
    async def body(session):
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.values()]
        assert len(json.dumps(dumped)) <= TOOLS_LIST_BUDGET
        for t in listed.values():
            assert t.input_schema["type"] == "object" and t.output_schema is None, t.name
            assert "title" not in json.dumps(t.input_schema["properties"].get("query", {}))
        for name in ("memory_search", "memory_stats"):
            assert listed[name].annotations.read_only_hint is True
        for name in ("memory_delete", "memory_update"):
            assert listed[name].annotations.destructive_hint is True
        for name in ("memory_capture", "memory_supersede", "memory_reindex"):
            assert listed[name].annotations.destructive_hint is False
            assert listed[name].annotations.read_only_hint is False
        search = listed["memory_search"]
        assert set(search.input_schema["properties"]) == {
            "query", "limit", "kind", "source", "tag", "as_of", "include_invalid", "semantic",
        }
        assert search.input_schema["required"] == ["query"]
        assert set(listed["memory_delete"].input_schema["properties"]) == {"id", "restore", "force"}
        assert {"id", "old_id"} <= set(listed["memory_supersede"].input_schema["properties"])
        for name in ("memory_get", "memory_update", "memory_supersede", "memory_delete"):
            assert "id" in listed[name].input_schema["properties"], name  # one name for the card
        for name in ("memory_capture", "memory_update", "memory_supersede"):
            tags = listed[name].input_schema["properties"]["tags"]
            assert {b["type"] for b in tags["anyOf"]} == {"array", "string"}

        init = await session.initialize()  # the handshake's answer, kept by the session
        assert init.server_info.name == "memsync"
        guidance = init.instructions + " ".join(t.description for t in listed.values())
        for idea in ("keywords or identifiers", "as_of", "soft", "restorable", "restore=",
                     "memory_supersede", "memory_update", "chat log", "coverage", "matched `all`",
                     "what was true"):
            assert idea in guidance, idea
        # said once: the rule that picks update or supersede lives in the instructions and in
        # those two tools' own descriptions, nowhere else
        for name in ("memory_search", "memory_get", "memory_stats", "memory_reindex"):
            assert "memory_supersede" not in listed[name].description

    scenario(body)(server_log)


def test_reads_match_the_cli_and_the_text_is_a_rendering(server_log, vault, cli):
    write_card(vault, "03-Knowledge/nginx.md", "nginx 站点根目录", "ecs-prod 上 nginx 的站点根目录是 /srv/www/site。",
               kind="knowledge", tags=["nginx", "ops"])
    write_card(vault, "02-Projects/billing.md", "billing service", "The billing service runs on ecs-prod too.")
    assert cli("index")[0] == 0
    _, cli_search = cli("search", "ecs-prod", "--json")
    card_id = next(h["id"] for h in cli_search["hits"] if h["path"] == "03-Knowledge/nginx.md")

    async def body(session):
        result = await session.call_tool("memory_search", {"query": "ecs-prod"})
        assert result.structured_content == cli_search
        text = text_of(result)
        assert [{k: h[k] for k in ("id", "title", "path", "snippet")} for h in read_hits(text)] == [
            {k: h[k] for k in ("id", "title", "path", "snippet")} for h in cli_search["hits"]]
        assert "in 03-Knowledge/" in text.splitlines() and "in 02-Projects/" in text.splitlines()
        assert text.startswith("2 hits (matched: all)")
        assert (await tool(session, "memory_search", query="站点", tag="nginx"))["hits"][0]["id"] == card_id
        assert (await tool(session, "memory_search", query="ecs-prod", kind="project"))["hits"][0]["title"] == (
            "billing service"
        )
        got = await session.call_tool("memory_get", {"id": card_id})
        card = got.structured_content
        assert card["title"] == "nginx 站点根目录" and "/srv/www/site" in card["text"]
        assert card["has_more"] is False and card["next_offset"] is None
        assert text_of(got).count("/srv/www/site") == 1  # the card text once
        assert text_of(got).startswith(f"# nginx 站点根目录\nid {card_id} · 03-Knowledge/nginx.md")
        _, cli_show = cli("show", card_id, "--json")
        assert set(card) == set(cli_show) and card["text"] == cli_show["text"]
        stats = await tool(session, "memory_stats")
        _, cli_stats = cli("stats", "--json")
        assert set(stats) >= set(cli_stats) - {"watcher"} and stats["cards"] == cli_stats["cards"] == 2
        assert stats["by_kind"]["knowledge"] == 1 and stats["reads"] >= 1
        report = await tool(session, "memory_reindex")
        _, cli_report = cli("index", "--json")
        assert set(report) == set(cli_report) and report["scanned"] == 2 and report["added"] == 0
        rebuilt = await tool(session, "memory_reindex", rebuild=True)
        assert rebuilt["added"] == 2
        ids_after = [h["id"] for h in await _hits(session, "ecs-prod")]
        assert ids_after == [h["id"] for h in cli_search["hits"]]  # a rebuild keeps ids

    scenario(body)(server_log)


def test_a_default_reply_is_text_only_and_its_ids_drive_the_other_tools(server_log, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSYNC_VAULT", str(make_vault(tmp_path / "budget")))  # 30 cards, long bodies

    async def body(session):
        await eventually(lambda: _full_page(session))
        result = await session.call_tool("memory_search", {"query": "deploy", "limit": 10})
        assert result.structured_content is None
        text = text_of(result)
        assert text.startswith("10+ hits (matched: all)\nin 03-Knowledge/\n")
        assert "more cards matched" not in text  # the `+` says it; the description says what to do
        found = read_hits(text)
        assert len(found) == 10 and all(len(h["snippet"]) >= 160 for h in found)
        assert all(h["path"].startswith("03-Knowledge/") and h["path"].endswith(".md") for h in found)
        assert len(text.encode()) <= 2400  # the whole message, as sent, is measured in test_mcp_raw
        first = found[0]
        card = await session.call_tool("memory_get", {"id": first["id"]})
        assert card.structured_content is None and not card.is_error
        assert text_of(card).startswith(f"# {first['title']}\nid {first['id']} · {first['path']}")
        fixed = await session.call_tool("memory_update", {"id": first["id"], "tags": "[deploy, fixed]"})
        assert not fixed.is_error and fixed.structured_content is None, text_of(fixed)
        assert text_of(fixed).startswith(f"updated {first['path']} (id {first['id']})")
        again = await session.call_tool("memory_get", {"id": first["id"]})
        assert "#deploy #fixed" in text_of(again).splitlines()[1]
        gone = await session.call_tool("memory_get", {"id": 1})
        assert gone.is_error and gone.structured_content is None and "memory_search" in text_of(gone)
        second = found[1]
        newer = await session.call_tool("memory_supersede", {
            "id": second["id"], "title": "backup deploy moved", "body": "The backup deploy now runs from ops-99."})
        newer_id = int(text_of(newer).split("(id ")[1].split(")")[0])
        assert not newer.is_error and newer.structured_content is None, text_of(newer)
        assert [h["id"] for h in await _hits(session, "ops-99")][0] == newer_id  # others fill below
        deleted = await session.call_tool("memory_delete", {"id": newer_id})
        trash = [line for line in text_of(deleted).splitlines() if line.startswith("trash_path: ")]
        assert not deleted.is_error and len(trash) == 1, text_of(deleted)
        restored = await session.call_tool("memory_delete", {"restore": trash[0].removeprefix("trash_path: ")})
        assert not restored.is_error and text_of(restored).startswith("restored "), text_of(restored)
        await eventually(lambda: _hits(session, "ops-99"))

    scenario(body, options=())(server_log)


def test_structured_replies_carry_the_same_text_and_the_cli_objects(server_log, vault, cli):
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")
    assert cli("index")[0] == 0
    _, cli_search = cli("search", "owl", "--json")
    card_id = cli_search["hits"][0]["id"]

    async def replies(*options):
        async with connected(server_log, *options) as session:
            return (await session.call_tool("memory_search", {"query": "owl"}),
                    await session.call_tool("memory_get", {"id": card_id}))

    async def main():
        with anyio.fail_after(DEADLINE):
            return await replies(), await replies(STRUCTURED)

    (found, card), (found_structured, card_structured) = anyio.run(main)
    assert found.structured_content is None and card.structured_content is None
    assert found_structured.structured_content == cli_search
    assert card_structured.structured_content["id"] == card_id
    assert text_of(found_structured) == text_of(found)

    def unused(text: str) -> str:  # the use counts grow with each call (memsync.lifecycle)
        return re.sub(r"^use: .*\n", "", text, flags=re.M)

    assert unused(text_of(card_structured)) == unused(text_of(card)) != text_of(card)
    assert "the barn owl hunts at dusk" in text_of(card)


async def _full_page(session) -> bool:
    return len(await _hits(session, "deploy", limit=20)) == 20


def test_wrong_arguments_and_hostile_queries_give_clean_answers(server_log, vault):
    write_card(vault, "03-Knowledge/near.md", "proximity search", "NEAR and OR are FTS5 operators, not words here.")

    async def body(session):
        await eventually(lambda: _hits(session, "proximity"))
        for args in (
            {"query": 42},
            {"query": "x", "limit": "many"},
            {"query": "x", "include_invalid": "perhaps"},
            {"query": "x", "as_of": "last tuesday"},
            {"query": "x", "as_of": "2026-02-30"},
            {"query": "x", "source": "nowhere"},
            {"query": "   "},
            {},
        ):
            await refused(session, "memory_search", **args)
        for args in ({"id": "abc"}, {"id": -3}, {"id": 10**30}, {"id": 77}, {"id": 1, "offset": -1}):
            await refused(session, "memory_get", **args)
        await refused(session, "memory_capture", title="t", body="a long enough body", on_conflict="explode")
        await refused(session, "memory_reindex", rebuild="sometimes")
        assert "Unknown tool" in await refused(session, "memory_teleport")
        # an error names the argument, what it must be, and what was given, in the tool's words
        assert await refused(session, "memory_search", query="x", limit="many") == (
            "memory_search: limit must be a whole number (got 'many'); pass a whole number, 1-20. "
            "Call it again with that fixed.")
        assert "memory_get: id must be 1 or more (got -3)" in await refused(session, "memory_get", id=-3)
        assert "query is required" in await refused(session, "memory_search")
        assert "tags must be a list of strings, or one comma-separated string" in await refused(
            session, "memory_capture", title="t", body="a long enough body here", tags=7)
        # advice names tools and their arguments, never CLI commands and flags
        missing = await refused(session, "memory_get", id=77)
        assert "the memory_search tool" in missing and "memsync search" not in missing
        empty_date = await refused(session, "memory_search", query="x", as_of="")
        assert "as_of expects a date" in empty_date and "--as-of" not in empty_date
        # ... while the user's own words (a title with --flag-like text) pass through as written
        await tool(session, "memory_capture", title="plan --title draft", body="the plan for the draft, long enough")
        taken = await session.call_tool("memory_capture", {
            "title": "plan --title draft", "body": "another body for the same title", "on_conflict": "reject"})
        assert taken.is_error and "'plan --title draft'" in text_of(taken)
        assert "existing_path: 03-Knowledge/plan title draft.md" in text_of(taken)
        assert taken.structured_content["status"] == "conflict"  # a refusal still carries its result

        for query in ('NEAR("a" b, 2) AND OR NOT', '"unbalanced', "*", "title:proximity^ -x + (", "'; DROP--"):
            result = await session.call_tool("memory_search", {"query": query})
            text = text_of(result)
            assert not any(leak in text for leak in LEAKS), text
            if not result.is_error:
                assert isinstance(result.structured_content["hits"], list)
        found = (await tool(session, "memory_search", query="NEAR OR proximity", limit=500))["hits"]
        assert found and len(found) <= 20
        await session.send_ping()  # still alive after all of it

    scenario(body)(server_log)


def test_an_unexpected_failure_is_a_generic_tool_error_and_logged(monkeypatch, caplog):
    """A library bug must not leak its text to the model; the traceback goes to the log."""

    def broken(cfg):
        raise RuntimeError("disk I/O error at /secret/place")

    monkeypatch.setattr(api, "stats", broken)

    async def main():
        async with Client(mcp_server.build(config.load())) as client:
            return await client.call_tool("memory_stats", {})

    result = anyio.run(main)
    assert result.is_error
    assert result.content[0].text == mcp_server.INTERNAL_ERROR
    assert "disk I/O error at /secret/place" in caplog.text and "Traceback" in caplog.text


def test_the_full_memory_lifecycle(server_log, vault):
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    title = "nginx site root on ecs-prod"
    body_text = "The nginx site root on ecs-prod is /srv/www/site; deploys rsync into it.\n" * 3

    async def body(session):
        made = await tool(session, "memory_capture", title=title, body=body_text, kind="knowledge",
                          tags=["nginx", "ops"])
        assert made["status"] == "created" and made["indexed"] is True, str(made.get("warnings"))
        card_id, path = made["id"], made["path"]
        assert path.startswith("03-Knowledge/") and (vault / path).is_file()

        assert [h["id"] for h in await _hits(session, "nginx ecs-prod")] == [card_id]

        first = await tool(session, "memory_get", id=card_id, max_chars=40)
        assert first["has_more"] is True and first["returned"] == 40 and first["next_offset"] == 40
        rest = await tool(session, "memory_get", id=card_id, offset=40, max_chars=0)
        assert rest["has_more"] is False and rest["offset"] == 40
        whole = await tool(session, "memory_get", id=card_id, full=True)
        assert first["text"][:40] + rest["text"] == whole["text"] and whole["length"] == len(whole["text"])

        again = await tool(session, "memory_capture", title=title, body=body_text, kind="knowledge",
                           tags=["nginx", "ops"])
        assert again["status"] == "unchanged" and again["id"] == card_id

        assert "20" in await refused(session, "memory_capture", title="tiny", body="too short")
        assert not list(vault.rglob("tiny*.md"))
        other = "A different note that happens to carry the very same title as the first."
        text = await refused(session, "memory_capture", title=title, body=other, on_conflict="reject")
        assert path in text  # the refusal names the card already holding the title
        secret = "Staging database login for user admin: password=hunter2-Xq9vLr7wq"
        await refused(session, "memory_capture", title="staging db", body=secret, reject_secrets=True)
        assert not list(vault.rglob("staging*.md"))

        fixed = await tool(session, "memory_update", id=card_id,
                           body="The nginx site root on ecs-prod is /srv/www/html; deploys rsync into it.")
        assert fixed["status"] == "updated" and "body" in fixed["changed"] and fixed["path"] == path
        assert [h["id"] for h in await _hits(session, "html")] == [card_id]
        assert "supersede" in await refused(session, "memory_update", id=card_id, kind="mistake")

        newer = await tool(session, "memory_supersede", id=card_id, title="nginx site root on ecs-prod 2027",
                           body="Since the 2027 migration the nginx site root on ecs-prod is /data/www.")
        assert newer["status"] == "superseded"
        new_id = newer["id"]
        assert new_id != card_id

        assert [h["id"] for h in await _hits(session, "nginx ecs-prod")] == [new_id]
        assert "already superseded" in await refused(
            session, "memory_supersede", id=card_id, title="again", body="a third version of the same fact",
        )
        both = await session.call_tool("memory_search", {"query": "nginx ecs-prod", "include_invalid": True})
        assert [(h["id"], h["valid"]) for h in both.structured_content["hits"]] == [(new_id, True), (card_id, False)]
        assert "INVALID" in text_of(both).split(str(card_id), 1)[1]
        assert await _hits(session, "nginx ecs-prod", as_of=yesterday) == []

        old = await tool(session, "memory_get", id=card_id)
        assert old["valid"] is False and old["invalid_at"] and old["superseded_by"]
        assert "superseded" in old["text"].splitlines()[0]

        gone = await tool(session, "memory_delete", id=new_id)
        assert gone["status"] == "deleted"
        assert await _hits(session, "2027 migration") == []
        assert list((vault / ".trash").rglob("*.md"))
        assert not (vault / newer["path"]).exists()
        await refused(session, "memory_get", id=new_id)

        stats = await tool(session, "memory_stats")
        assert stats["cards"] == 1 and stats["invalid"] == 1 and stats["trash"]["files"] == 1
        report = await tool(session, "memory_reindex")
        assert report["removed"] == 0 and report["added"] == 0

    scenario(body)(server_log)


def test_only_the_mcp_modules_import_the_sdk():
    import ast

    package = Path(mcp_server.__file__).parents[1]
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            )
            if any(n.split(".")[0] in ("mcp", "mcp_types", "uvicorn", "starlette") for n in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers <= {"mcp/server.py", "mcp/tools.py", "mcp/replies.py", "mcp/http.py", "mcp/brief.py",
                         "mcp/unreadable.py"}
    assert "mcp/server.py" in importers
