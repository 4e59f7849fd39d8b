"""What memory_search says beside its hits (issue 19): a clamped limit, and "still being built"
only while the start-up reconcile runs."""

from __future__ import annotations

from memsync import config
from memsync.mcp import server as mcp_server

from .conftest import write_card
from .mcp_helpers import indexed_herons, scenario, server_log, text_of

__all__ = ["server_log"]  # a fixture, imported for the tests below


def test_a_limit_out_of_range_says_it_was_clamped(server_log, vault, cli):
    indexed_herons(vault, cli, 25, "the grey heron number {n} fishes here")

    async def body(session):
        for asked, used in ((0, 1), (50, 20)):
            result = await session.call_tool("memory_search", {"query": "heron", "limit": asked})
            data = result.structured_content
            assert len(data["hits"]) == used
            assert f"limit {asked} is outside 1-20, so {used} was used" in data["note"]
            assert f"limit {asked} is outside 1-20" in text_of(result)
        data = (await session.call_tool("memory_search", {"query": "heron", "limit": 5})).structured_content
        assert "outside" not in (data["note"] or "")

    scenario(body)(server_log)


def test_the_first_empty_search_of_a_fresh_server_on_a_complete_index_says_no_more(server_log, vault, cli):
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")
    cli("index")

    async def body(session):
        result = await session.call_tool("memory_search", {"query": "zebra"})
        assert result.structured_content["hits"] == []
        assert "still being built" not in text_of(result)

    scenario(body)(server_log)


def test_building_is_true_only_between_start_and_the_end_of_the_start_up_pass(vault):
    write_card(vault, "03-Knowledge/owl.md", "owls", "the barn owl hunts at dusk over the meadow")
    live = mcp_server.LiveIndex(config.load())
    assert not live.building  # not started: the index is what the last run left
    try:
        live.start()
        assert live.ready.wait(15)
        assert not live.building
    finally:
        live.stop()


def test_memory_get_keeps_the_text_clean_and_the_hint_beside_it(server_log, vault, cli):
    body = "the heron waits at the river bank " * 5
    write_card(vault, "03-Knowledge/heron.md", "heron", body)
    cli("index")

    async def body_(session):
        card_id = (await session.call_tool("memory_search", {"query": "heron"})).structured_content["hits"][0]["id"]
        result = await session.call_tool("memory_get", {"id": card_id, "max_chars": 40})
        data = result.structured_content
        assert data["text"] == body.strip()[:40] and data["has_more"] is True
        # the arguments of memory_get that do it, as a model passes them (not `--offset 40`)
        assert "continue with offset=40, or full=true for the whole text]" in data["hint"]
        assert "continue with offset=40, or full=true for the whole text]" in text_of(result)

    scenario(body_)(server_log)


def index_the_ecs_card(vault, cli) -> None:
    write_card(vault, "07-Tools/ecs.md", "ECS deploy address", "The ECS deploy address is 10.0.0.5, port 8080.")
    cli("index")


async def supersede_the_ecs_card(session) -> tuple[dict, dict]:
    """The ECS card (index_the_ecs_card), found by search, and the card that supersedes it."""
    old = (await session.call_tool("memory_search", {"query": "ECS deploy"})).structured_content["hits"][0]
    new = (await session.call_tool("memory_supersede", {
        "id": old["id"], "title": "ECS deploy address",
        "body": "Since the move the ECS deploy address is 10.0.0.9, port 9090."})).structured_content
    return old, new


def test_deleting_one_card_of_a_pair_says_what_happens_to_the_other(server_log, vault, cli):
    index_the_ecs_card(vault, cli)

    async def body(session):
        _old, new = await supersede_the_ecs_card(session)
        result = await session.call_tool("memory_delete", {"id": new["id"]})
        assert not result.is_error
        assert "07-Tools/ecs.md" in text_of(result) and "stays marked invalid" in text_of(result)
        # what only the user can do is said to be theirs; what a tool does names the tool
        assert "`memsync doctor --fix-pairs` (for the user to run)" in text_of(result)
        assert "the memory_delete tool with restore=" in text_of(result)

    scenario(body)(server_log)


def test_deleting_the_older_card_of_a_pair_names_tools_or_the_user_never_bare_commands(server_log, vault, cli):
    index_the_ecs_card(vault, cli)

    async def body(session):
        old, _new = await supersede_the_ecs_card(session)
        text = text_of(await session.call_tool("memory_delete", {"id": old["id"]}))
        assert "the memory_stats tool with check=true reports the history as gone" in text, text
        assert "`memsync doctor --fix-pairs` (for the user to run) drops the pointer" in text, text

    scenario(body)(server_log)


def test_memory_supersede_says_which_fields_carry_over_as_they_do(server_log, vault, cli):
    """Its description said every other field defaults to the old card's, but the summary, a line
    about the old fact, does not (docs/write.md): an agent would leave a new card without one."""
    write_card(vault, "07-Tools/ecs.md", "ECS deploy address", "The ECS deploy address is 10.0.0.5, port 8080.",
               tags=["ecs"], priority="high", summary="ECS deploys go to 10.0.0.5:8080")
    cli("index")

    async def body(session):
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert "other fields but summary default to the old card's" in listed["memory_supersede"].description
        _old, new = await supersede_the_ecs_card(session)
        card = (await session.call_tool("memory_get", {"id": new["id"]})).structured_content
        assert "priority: high" in vault.joinpath(card["path"]).read_text()  # carried over
        assert "summary:" not in vault.joinpath(card["path"]).read_text()  # not

    scenario(body)(server_log)
