"""memory_get as an agent reads it: the card's tags are the ones search knows it by."""

from __future__ import annotations

from .conftest import write_card
from .mcp_helpers import hits, refused, scenario, server_log, text_of, tool

__all__ = ["server_log"]  # a fixture, imported for the tests below


def test_memory_get_shows_inline_tags_beside_the_frontmatter_ones(server_log, vault, cli):
    write_card(vault, "03-Knowledge/heron.md", "heron",
               "the grey heron waits at the river bank #wading #water/river for fish", tags=["birds"])
    cli("index")

    async def body(session):
        found = await hits(session, "heron", tag="wading")  # search knows the inline tag
        assert [h["title"] for h in found] == ["heron"]
        result = await session.call_tool("memory_get", {"id": found[0]["id"]})
        assert result.structured_content["tags"] == ["birds", "wading", "water/river"]
        assert "#birds #wading #water/river" in text_of(result)

    scenario(body)(server_log)


def test_a_nested_inline_tag_implies_its_parents_and_frontmatter_keeps_its_spelling():
    from memsync.store.fields import all_tags

    assert all_tags(["Water"], ["water", "water/river"]) == ["Water", "water/river"]
    assert all_tags(["a/b"], ["a", "a/b"]) == ["a/b"]
    assert all_tags([], ["ops", "x", "x/y"]) == ["ops", "x/y"]


def test_memory_get_is_not_announced_read_only_since_its_feedback_is_recorded(server_log, vault, cli):
    write_card(vault, "03-Knowledge/heron.md", "heron", "the grey heron waits at the river bank for fish")
    cli("index")

    async def body(session):
        listed = {t.name: t for t in (await session.list_tools()).tools}
        hint = listed["memory_get"].annotations
        assert hint.read_only_hint is False and hint.destructive_hint is False
        card_id = (await hits(session, "heron"))[0]["id"]
        await session.call_tool("memory_get", {"id": card_id, "feedback": "helpful"})
        after = await session.call_tool("memory_get", {"id": card_id})
        assert after.structured_content["use"]["helpful"] == 1  # the call did change something

    scenario(body)(server_log)


def test_a_deleted_card_s_id_says_where_it_is_and_the_call_that_brings_it_back(server_log, vault, cli):
    """Its id waits in the trash with the file, where memory_search cannot find it: sending the
    agent to search for ids was no way back."""
    write_card(vault, "03-Knowledge/old heron.md", "old heron", "the grey heron waits at the river bank")
    cli("index")

    async def body(session):
        card = (await hits(session, "heron"))[0]["id"]
        await tool(session, "memory_delete", id=card)
        said = [await refused(session, name, id=card, **more) for name, more in (
            ("memory_get", {}), ("memory_update", {"body": "the heron moved to the lake for good"}),
            ("memory_supersede", {"title": "heron", "body": "the heron moved to the lake for good"}),
            ("memory_delete", {}))]
        undo = "the memory_delete tool with restore=.trash/03-Knowledge/old heron.md brings it back"
        assert all(f"card {card} was deleted" in s and undo in s for s in said), said
        await tool(session, "memory_delete", restore=".trash/03-Knowledge/old heron.md")
        assert (await tool(session, "memory_get", id=card))["title"] == "old heron"

    scenario(body)(server_log)


def test_an_id_no_card_ever_had_still_sends_the_agent_to_search(server_log, vault):
    async def body(session):
        assert "find ids with the memory_search tool" in await refused(session, "memory_get", id=424242)

    scenario(body)(server_log)
