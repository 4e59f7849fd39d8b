"""`memsync mcp` driven as a real subprocess through the SDK's stdio client, as an agent would."""

from __future__ import annotations

import datetime as dt
import os
import signal
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp.client import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memsync import api, config, mcp_server

from .conftest import MEMSYNC_BIN, write_card

DEADLINE = 60.0
TOOLS = {
    "memory_search", "memory_get", "memory_capture", "memory_update",
    "memory_supersede", "memory_delete", "memory_stats", "memory_reindex",
}
# Text that would mean an implementation detail leaked to the model.
LEAKS = ("Traceback", "sqlite3", "OperationalError", "validation error for", "pydantic", "File \"")


@pytest.fixture
def server_log(tmp_path) -> Path:
    return tmp_path / "server.log"


@asynccontextmanager
async def connected(server_log: Path):
    params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp"], env=os.environ.copy())
    with server_log.open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=DEADLINE) as session,
        ):
            await session.initialize()
            yield session


def scenario(fn):
    """Run an async test body against a live `memsync mcp`, bounded by a deadline."""

    def run(server_log, **fixtures):
        async def main():
            with anyio.fail_after(DEADLINE):
                async with connected(server_log) as session:
                    await fn(session, **fixtures)

        anyio.run(main)
        assert "Traceback" not in server_log.read_text()

    return run


async def tool(session, name: str, **arguments) -> dict:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def refused(session, name: str, **arguments) -> str:
    result = await session.call_tool(name, arguments)
    assert result.is_error, result
    text = result.content[0].text
    assert text and not any(leak in text for leak in LEAKS), text
    return text


async def eventually(check, deadline: float = 20.0):
    """Poll an async check until it returns something truthy."""
    end = anyio.current_time() + deadline
    while not (value := await check()):
        assert anyio.current_time() < end, "condition not met before the deadline"
        await anyio.sleep(0.05)
    return value


def test_handshake_lists_eight_tools_with_schemas_descriptions_annotations(server_log):
    async def body(session):
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        for t in listed.values():
            assert len(t.description) > 150, t.name
            assert t.input_schema["type"] == "object"
            assert t.output_schema and t.output_schema["type"] == "object", t.name
        for name in ("memory_search", "memory_get", "memory_stats"):
            assert listed[name].annotations.read_only_hint is True
        assert listed["memory_delete"].annotations.destructive_hint is True
        for name in ("memory_capture", "memory_reindex"):
            assert listed[name].annotations.idempotent_hint is True
            assert listed[name].annotations.read_only_hint is False
        search = listed["memory_search"]
        assert set(search.input_schema["properties"]) == {
            "query", "limit", "kind", "source", "tag", "as_of", "include_invalid",
        }
        assert search.input_schema["required"] == ["query"]
        assert {"id", "path", "title", "score", "matched", "coverage", "snippet", "valid"} <= set(
            search.output_schema["$defs"]["SearchHit"]["properties"]
        )
        descriptions = " ".join(t.description for t in listed.values())
        for idea in ("keywords or identifiers", "as_of", "soft", "memory_supersede", "chat log"):
            assert idea in descriptions

        init = await session.initialize()  # the handshake's answer, kept by the session
        assert init.server_info.name == "memsync"
        assert 2 <= init.instructions.count(". ") + 1 <= 4  # two to three sentences
        for name in ("memory_search", "memory_update", "memory_supersede", "memory_delete"):
            assert name in init.instructions

    scenario(body)(server_log)


def test_reads_match_the_cli(server_log, vault, cli):
    write_card(vault, "03-Knowledge/nginx.md", "nginx 站点根目录", "ecs-prod 上 nginx 的站点根目录是 /srv/www/site。",
               kind="knowledge", tags=["nginx", "ops"])
    write_card(vault, "02-Projects/billing.md", "billing service", "The billing service runs on ecs-prod too.")
    assert cli("index")[0] == 0
    _, cli_search = cli("search", "ecs-prod", "--json")
    card_id = next(h["id"] for h in cli_search["hits"] if h["path"] == "03-Knowledge/nginx.md")

    async def body(session):
        found = await tool(session, "memory_search", query="ecs-prod")
        assert found == cli_search
        assert (await tool(session, "memory_search", query="站点", tag="nginx"))["hits"][0]["id"] == card_id
        assert (await tool(session, "memory_search", query="ecs-prod", kind="project"))["hits"][0]["title"] == (
            "billing service"
        )
        card = await tool(session, "memory_get", id=card_id)
        assert card["title"] == "nginx 站点根目录" and "/srv/www/site" in card["text"]
        assert card["has_more"] is False and card["next_offset"] is None
        stats = await tool(session, "memory_stats")
        assert stats["cards"] == 2 and stats["by_kind"]["knowledge"] == 1 and stats["reads"] >= 1
        report = await tool(session, "memory_reindex")
        assert report["scanned"] == 2 and report["added"] == 0
        rebuilt = await tool(session, "memory_reindex", rebuild=True)
        assert rebuilt["added"] == 2
        ids_after = [h["id"] for h in await _hits(session, "ecs-prod")]
        assert ids_after == [h["id"] for h in cli_search["hits"]]  # a rebuild keeps ids

    scenario(body)(server_log)


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
        await refused(session, "memory_capture", title="t", body="a long enough body here", tags="nginx")
        await refused(session, "memory_capture", title="t", body="a long enough body", on_conflict="explode")
        await refused(session, "memory_reindex", rebuild="sometimes")
        assert "Unknown tool" in await refused(session, "memory_teleport")
        assert "limit" in await refused(session, "memory_search", query="x", limit="many")
        # advice names tools and their arguments, never CLI commands and flags
        missing = await refused(session, "memory_get", id=77)
        assert "the memory_search tool" in missing and "memsync search" not in missing
        empty_date = await refused(session, "memory_search", query="x", as_of="")
        assert "as_of expects a date" in empty_date and "--as-of" not in empty_date
        # ... while the user's own words (a title with --flag-like text) pass through as written
        await tool(session, "memory_capture", title="plan --title draft", body="the plan for the draft, long enough")
        taken = await refused(session, "memory_capture", title="plan --title draft",
                              body="another body for the same title", on_conflict="reject")
        assert "'plan --title draft'" in taken and '"existing_path": "03-Knowledge/plan-title-draft.md"' in taken

        for query in ('NEAR("a" b, 2) AND OR NOT', '"unbalanced', "*", "title:proximity^ -x + (", "'; DROP--"):
            result = await session.call_tool("memory_search", {"query": query})
            text = result.content[0].text
            assert not any(leak in text for leak in LEAKS), text
            if not result.is_error:
                assert isinstance(result.structured_content["hits"], list)
        hits = (await tool(session, "memory_search", query="NEAR OR proximity", limit=500))["hits"]
        assert hits and len(hits) <= 20
        await session.send_ping()  # still alive after all of it

    scenario(body)(server_log)


async def _hits(session, query: str, **filters) -> list[dict]:
    return (await tool(session, "memory_search", query=query, **filters))["hits"]


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

        newer = await tool(session, "memory_supersede", old_id=card_id, title="nginx site root on ecs-prod 2027",
                           body="Since the 2027 migration the nginx site root on ecs-prod is /data/www.")
        assert newer["status"] == "superseded"
        new_id = newer["id"]
        assert new_id != card_id

        assert [h["id"] for h in await _hits(session, "nginx ecs-prod")] == [new_id]
        assert "already superseded" in await refused(
            session, "memory_supersede", old_id=card_id, title="again", body="a third version of the same fact",
        )
        both = await _hits(session, "nginx ecs-prod", include_invalid=True)
        assert [(h["id"], h["valid"]) for h in both] == [(new_id, True), (card_id, False)]
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


def test_the_server_keeps_the_index_live_without_a_daemon(server_log, vault, home):
    write_card(vault, "03-Knowledge/before.md", "written before start", "the heron nests by the river")

    async def body(session):
        await eventually(lambda: _hits(session, "heron"))
        assert (await tool(session, "memory_stats"))["watcher"]["live"] is True
        write_card(vault, "03-Knowledge/later.md", "written while serving", "the kingfisher dives for fish")
        found = await eventually(lambda: _hits(session, "kingfisher"))
        assert found[0]["path"] == "03-Knowledge/later.md"

    scenario(body)(server_log)
    # The in-process watcher let go of the vault when the server stopped.
    assert api.watcher_status(config.load())["live"] is False


def two_servers(server_log, vault, then):
    """Run `then(first, second, owner)` with two servers on one home; the first one's process
    (pid `owner`) holds the watcher."""
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")

    async def main():
        with anyio.fail_after(DEADLINE):
            async with connected(server_log) as first:
                await eventually(lambda: _hits(first, "owl"))
                owner = (await tool(first, "memory_stats"))["watcher"]["pid"]
                async with connected(server_log) as second:
                    await eventually(lambda: _hits(second, "owl"))
                    await then(first, second, owner)

    anyio.run(main)


def test_a_second_server_leaves_the_watching_to_the_first(server_log, vault):
    async def then(first, second, owner):
        write_card(vault, "03-Knowledge/wren.md", "wrens", "the wren sings loudly for its size")
        await eventually(lambda: _hits(second, "wren"))
        assert (await tool(second, "memory_stats"))["watcher"]["pid"] == owner

    two_servers(server_log, vault, then)
    assert "Traceback" not in server_log.read_text()


def test_a_server_takes_over_the_watching_when_the_watcher_stops(server_log, vault):
    async def then(first, second, owner):
        await first.send_ping()
        # leaving `first` would close `second` too (nested contexts), so stop the owner through
        # its pid, as a user closing that client would
        os.kill(owner, signal.SIGTERM)
        await eventually(lambda: _live_owner(second, not_pid=owner))
        write_card(vault, "03-Knowledge/wren.md", "wrens", "the wren sings loudly for its size")
        await eventually(lambda: _hits(second, "wren"))

    two_servers(server_log, vault, then)


async def _live_owner(session, not_pid: int) -> bool:
    watcher = (await tool(session, "memory_stats"))["watcher"]
    return watcher.get("live") and watcher.get("pid") != not_pid


def test_a_source_added_while_the_server_runs_is_searchable_by_name(server_log, vault, tmp_path, run_cli):
    notes = tmp_path / "team-notes"
    notes.mkdir()
    (notes / "kafka.md").write_text("# kafka\nthe kafka cluster runs three brokers on ecs-prod\n")
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")

    async def body(session):
        await eventually(lambda: _hits(session, "owl"))
        code, _out, err = run_cli("sources", "--add", "team", "--path", str(notes))
        assert code == 0, err
        hits = await eventually(lambda: _hits(session, "kafka", source="team"), deadline=30)
        assert hits[0]["source"] == "team"

    scenario(body)(server_log)


def test_the_index_counts_as_ready_after_the_start_up_pass_even_while_writes_go_on(vault):
    # "still being built" must not outlive the start-up reconcile just because files keep
    # changing: a new folder every few ms keeps the watcher from ever being idle.
    import threading
    import time

    stop = threading.Event()

    def keep_writing():
        i = 0
        while not stop.is_set():
            write_card(vault, f"stream/{i}/card.md", f"stream {i}", f"a card in a new folder {i}")
            i += 1
            time.sleep(0.01)

    writer = threading.Thread(target=keep_writing)
    writer.start()
    live = mcp_server.LiveIndex(config.load())
    try:
        live.start()
        assert live.ready.wait(15)
    finally:
        stop.set()
        writer.join()
        live.stop()


def test_a_config_json_broken_while_the_server_runs_is_reported_not_fatal(server_log, vault, home):
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")

    async def body(session):
        await eventually(lambda: _hits(session, "owl"))
        (home / "config.json").write_text('{"sources": 7}')
        stats = await tool(session, "memory_stats")
        assert any("config.json" in p and "keeps using" in p for p in stats["config_problems"])
        assert await _hits(session, "owl")  # the last good settings still serve
        (home / "config.json").write_text("{}")
        assert (await tool(session, "memory_stats"))["config_problems"] == []

    scenario(body)(server_log)


def test_only_mcp_server_imports_the_sdk():
    import ast

    package = Path(mcp_server.__file__).parent
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            )
            if any(n.split(".")[0] in ("mcp", "mcp_types") for n in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers == {"mcp_server.py"}


def test_concurrent_calls_on_one_session_all_succeed(server_log, vault):
    """The SDK runs each call on a worker thread; each opens its own index connection."""
    write_card(vault, "03-Knowledge/seed.md", "seed card", "the albatross glides for hours over open sea")

    async def body(session):
        seed = (await eventually(lambda: _hits(session, "albatross")))[0]["id"]
        outcomes: list[bool] = []

        async def one(n: int):
            if n % 3 == 0:
                result = await session.call_tool("memory_capture", {
                    "title": f"parallel fact {n}", "body": f"parallel fact number {n} about the petrel colony",
                })
            elif n % 3 == 1:
                result = await session.call_tool("memory_search", {"query": "albatross petrel"})
            else:
                result = await session.call_tool("memory_get", {"id": seed})
            outcomes.append(not result.is_error)

        async with anyio.create_task_group() as group:
            for n in range(24):
                group.start_soon(one, n)
        assert outcomes == [True] * 24
        assert len(await _hits(session, "petrel", limit=20)) == 8

    scenario(body)(server_log)
