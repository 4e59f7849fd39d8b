"""`memsync mcp` keeps the index live by itself, shares the watching with other servers, and
follows config.json while it runs."""

from __future__ import annotations

import os
import signal

import anyio
from mcp.client import Client

from memsync import config
from memsync.mcp import server as mcp_server
from memsync.watch import lock

from .conftest import write_card
from .mcp_helpers import (
    DEADLINE,
    STRUCTURED,
    connected,
    eventually,
    scenario,
    server_log,
    text_of,
    tool,
)
from .mcp_helpers import hits as _hits

__all__ = ["server_log"]  # a fixture, imported for the tests below


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
    assert lock.status(config.load().lock_file)["live"] is False


def test_a_stats_call_before_the_watcher_holds_the_vault_says_it_is_starting(vault, cli):
    """The watcher starts once the handshake is over, so a first memory_stats can run before it
    holds the vault. A LiveIndex whose start is held back pins that moment."""
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")
    cli("index")

    class HeldBack(mcp_server.LiveIndex):
        def start(self) -> None:
            pass

    async def main():
        async with Client(mcp_server.build(config.load(), HeldBack(config.load()), structured=True)) as client:
            return await client.call_tool("memory_stats", {})

    result = anyio.run(main)
    assert result.structured_content["watcher"] == {"live": False, "starting": True}
    assert "watcher: starting" in text_of(result) and "live false" not in text_of(result)


def test_the_first_stats_call_after_the_handshake_never_says_no_watcher_runs(server_log, vault):
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")

    async def body(session):
        first = (await tool(session, "memory_stats"))["watcher"]  # races the watcher's start
        assert first.get("live") or first.get("starting"), first

        async def live():
            return (await tool(session, "memory_stats"))["watcher"].get("live")

        await eventually(live)
        assert "starting" not in (await tool(session, "memory_stats"))["watcher"]

    scenario(body)(server_log)


def test_a_stopped_server_does_not_say_its_watcher_is_starting(vault):
    live = mcp_server.LiveIndex(config.load())
    assert live.starting  # not started yet: the first call after the handshake starts it
    live.stop()
    assert not live.starting  # stopped: nothing is on its way


def two_servers(server_log, vault, then):
    """Run `then(first, second, owner)` with two servers on one home; the first one's process
    (pid `owner`) holds the watcher."""
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")

    async def main():
        with anyio.fail_after(DEADLINE):
            async with connected(server_log, STRUCTURED) as first:
                await eventually(lambda: _hits(first, "owl"))
                owner = (await tool(first, "memory_stats"))["watcher"]["pid"]
                async with connected(server_log, STRUCTURED) as second:
                    await eventually(lambda: _hits(second, "owl"))
                    await then(first, second, owner)

    anyio.run(main)


def test_a_second_server_leaves_the_watching_to_the_first(server_log, vault):
    async def then(first, second, owner):
        write_card(vault, "03-Knowledge/wren.md", "wrens", "the wren sings loudly for its size")
        await eventually(lambda: _hits(second, "wren"))
        assert (await tool(second, "memory_stats"))["watcher"]["pid"] == owner

    two_servers(server_log, vault, then)
    logged = server_log.read_text()
    assert "Traceback" not in logged
    # the second says who keeps the index live for it, not the advice to stop that one
    assert "which keeps the index live; this server takes over if it stops" in logged
    assert "stop it first" not in logged and "kill " not in logged


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



def test_two_threads_of_one_server_can_label_the_index_at_once(tmp_path):
    # The watcher thread and a tool call both claim the index on a first start; one temp file
    # name per process made one of them fail (FileNotFoundError on the rename).
    import threading

    from memsync.store import vaults

    db, vault = tmp_path / "home" / "memsync.db", tmp_path / "vault"
    errors: list[BaseException] = []

    def label_often():
        try:
            for _ in range(200):
                vaults.write_label(db, vault)
        except OSError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=label_often) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and vaults.owner(db) == vault
