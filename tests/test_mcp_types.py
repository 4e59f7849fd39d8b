"""Arguments of another JSON type than the schema's, as clients send them: a number written as a
string or as a float with nothing after the point reads as the number; anything else is a tool
error naming the argument, never a traceback and never a guess."""

from __future__ import annotations

from .conftest import write_card
from .mcp_helpers import indexed_herons, refused, scenario, server_log, text_of

__all__ = ["server_log"]  # a fixture, imported for the tests below


def test_a_number_as_a_string_or_a_whole_float_is_read_as_the_number(server_log, vault, cli):
    indexed_herons(vault, cli, 4, "a grey heron waits at the river bank, {n}")

    async def body(session):
        for limit in ("2", 2.0, 2):
            result = await session.call_tool("memory_search", {"query": "heron", "limit": limit})
            assert not result.is_error and text_of(result).startswith("2+ hits"), (limit, text_of(result))
        card_id = result.structured_content["hits"][0]["id"]
        for given in (str(card_id), float(card_id)):
            result = await session.call_tool("memory_get", {"id": given, "offset": "2", "max_chars": 5.0})
            assert not result.is_error and result.structured_content["id"] == card_id, text_of(result)
            assert result.structured_content["returned"] == 5

    scenario(body)(server_log)


def test_true_or_false_for_a_number_is_refused_not_read_as_1_or_0(server_log, vault, cli):
    """pydantic reads true as 1: `limit: false` searched for one hit (saying "limit 0 is outside
    1-20"), and `id: true` looked for card 1."""
    write_card(vault, "03-Knowledge/heron.md", "heron", "a grey heron waits at the river bank for fish")
    cli("index")

    async def body(session):
        for flag in (True, False):
            said = await refused(session, "memory_search", query="heron", limit=flag)
            assert said.startswith(f"memory_search: limit must be a whole number (got {flag})"), said
            said = await refused(session, "memory_get", id=flag)
            assert said.startswith(f"memory_get: id must be a whole number (got {flag})"), said
            for args in ({"offset": flag}, {"max_chars": flag}):
                assert "must be a whole number" in await refused(session, "memory_get", id=5, **args)
            assert "id must be a whole number" in await refused(session, "memory_delete", id=flag)
            assert "id must be a whole number" in await refused(
                session, "memory_supersede", id=flag, title="heron moved", body="the heron now waits at the lake")
        for limit in (2.5, "2.5", "two", [2], None):  # no guess either
            said = await refused(session, "memory_search", query="heron", limit=limit)
            assert "limit must be a whole number" in said, said

    scenario(body)(server_log)
