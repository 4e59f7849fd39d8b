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


# Every yes/no argument, with the other arguments its tool needs to get as far as reading it.
FLAGS = [
    ("memory_search", "include_invalid", {"query": "heron"}),
    ("memory_search", "semantic", {"query": "heron"}),
    ("memory_get", "full", {"id": 5}),
    ("memory_capture", "reject_secrets", {"title": "heron", "body": "a grey heron waits at the bank"}),
    ("memory_delete", "force", {"restore": ".trash/heron.md"}),
    ("memory_stats", "check", {}),
    ("memory_reindex", "rebuild", {}),
]


def test_a_flag_is_true_or_false_never_a_guess_from_yes_or_1(server_log, vault, cli):
    """pydantic's lax mode read "yes", "on", "1" and 1 as true: `rebuild: "yes"` rebuilt the
    index and `check: 1` ran the health check, and the model never learned it had it wrong."""
    write_card(vault, "03-Knowledge/heron.md", "heron", "a grey heron waits at the river bank for fish")
    cli("index")

    async def body(session):
        listed = {t.name: t.input_schema["properties"] for t in (await session.list_tools()).tools}
        for tool, flag, needed in FLAGS:  # the check costs the published schema nothing
            assert listed[tool][flag] == {"type": "boolean", **({} if flag == "semantic" else {"default": False})}
            for given in ("yes", "on", "1", 1, 0, "no", [True]):
                said = await refused(session, tool, **needed, **{flag: given})
                assert said.startswith(f"{tool}: {flag} must be true or false (got {given!r})"), said
        # the JSON literal written as a string reads as it, as "5" reads as 5
        for given in ("true", "False"):
            result = await session.call_tool("memory_search", {"query": "heron", "include_invalid": given})
            assert not result.is_error and result.structured_content["hits"], text_of(result)
        assert not (await session.call_tool("memory_stats", {"check": "false"})).is_error

    scenario(body)(server_log)


def test_feedback_refuses_the_reading_arguments_it_would_ignore(server_log, vault, cli):
    """memory_get with feedback sends no text, so an offset given with it was dropped silently."""
    write_card(vault, "03-Knowledge/heron.md", "heron", "a grey heron waits at the river bank for fish")
    cli("index")

    async def body(session):
        card_id = (await session.call_tool("memory_search", {"query": "heron"})).structured_content["hits"][0]["id"]
        for extra in ({"offset": 5}, {"max_chars": 10}, {"max_chars": 0}, {"full": True}):
            said = await refused(session, "memory_get", id=card_id, feedback="helpful", **extra)
            assert said.startswith("memory_get: feedback records a verdict and sends no text"), said
        assert not (await session.call_tool("memory_get", {"id": card_id, "feedback": "helpful"})).is_error

    scenario(body)(server_log)


def test_an_empty_filter_is_refused_not_read_as_no_filter(server_log, vault, cli):
    """`tag: ""` searched every card, as if no tag was given, while an empty query is refused."""
    write_card(vault, "03-Knowledge/heron.md", "heron", "a grey heron waits at the river bank for fish")
    cli("index")

    async def body(session):
        for name in ("tag", "kind", "source"):
            for given in ("", "  "):
                said = await refused(session, "memory_search", query="heron", **{name: given})
                assert said == f"{name} is empty; leave it out to search every {name}, or name one", said

    scenario(body)(server_log)
    code, out = cli("search", "heron", "--tag", "", "--json")
    assert code == 2 and out["error"]["message"].startswith("--tag is empty"), out
