"""memory_search's answer to a query with nothing to search for: one kind of answer, saying what
to send instead."""

from __future__ import annotations

from .conftest import write_card
from .mcp_helpers import refused, scenario, server_log

__all__ = ["server_log"]  # a fixture, imported for the tests below


def test_an_empty_query_and_a_wildcard_are_both_refused_with_what_to_send(server_log, vault, cli):
    write_card(vault, "03-Knowledge/heron.md", "heron", "the grey heron waits at the river bank for fish")
    cli("index")

    async def body(session):
        for query in ("", "   ", "*", "?!", "-"):
            said = await refused(session, "memory_search", query=query)
            assert "pass keywords or identifiers" in said, said
            assert "the memory_stats tool" in said and "memsync" not in said, said

    scenario(body)(server_log)


def test_the_cli_exits_2_for_a_query_without_words_as_for_an_empty_one(vault, cli):
    write_card(vault, "03-Knowledge/heron.md", "heron", "the grey heron waits at the river bank for fish")
    cli("index")
    for query in ("", "*", "!!!"):  # "!!!" was a "nothing found" (exit 1) before
        code, data = cli("search", "--json", query)
        assert code == 2 and data["error"]["code"] == "bad_argument", (query, data)
