"""A kind given as "" or spaces is refused by every write, saying what leaving it out does:
`memory_capture` with `kind: ""` wrote a knowledge card, as if no kind was given, and
`memsync update --kind ""` advised `memsync supersede ID --kind  ...`, a command with no kind."""

from __future__ import annotations

import pytest

from .conftest import write_card
from .mcp_helpers import refused, scenario, server_log

__all__ = ["server_log"]  # a fixture, imported for the tests below

BODY = "a grey heron waits at the river bank for fish"
KINDS = "system, project, knowledge, content, prompt, business, tool, mistake"


@pytest.fixture
def heron(cli, vault):
    """An indexed card: its id and path."""
    path = write_card(vault, "03-Knowledge/heron.md", "heron", BODY, kind="knowledge")
    cli("index")
    return cli("search", "heron", "--json")[1]["hits"][0]["id"], path


def files(vault) -> list[str]:
    return sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))


@pytest.mark.parametrize("blank", ["", "  "])
def test_capture_refuses_a_blank_kind_and_writes_nothing(cli, vault, blank):
    code, out = cli("capture", "--title", "heron", "--body", BODY, "--kind", blank, "--json")
    assert code == 2 and out["error"]["code"] == "bad_argument", out
    assert out["error"]["message"] == f"--kind is empty; leave it out for a knowledge card, or name one of: {KINDS}"
    assert files(vault) == []


@pytest.mark.parametrize("blank", ["", " "])
def test_update_refuses_a_blank_kind_saying_it_keeps_the_kind(cli, heron, blank):
    card_id, path = heron
    before = path.read_bytes()
    code, out = cli("update", card_id, "--kind", blank, "--json")
    assert code == 2, out
    assert out["error"]["message"] == (f"--kind is empty; leave it out: an update keeps a card's kind, and "
                                       f"`memsync supersede {card_id} --kind KIND ...` writes the card under another")
    assert path.read_bytes() == before


def test_update_to_an_unknown_kind_says_so_rather_than_advise_a_supersede_to_it(cli, heron):
    code, out = cli("update", heron[0], "--kind", "bogus", "--json")
    assert code == 2 and out["error"]["message"] == f"unknown kind 'bogus'; use one of: {KINDS}", out


def test_supersede_refuses_a_blank_kind(cli, vault, heron):
    code, out = cli("supersede", heron[0], "--title", "heron moved", "--body", BODY + " at the lake",
                    "--kind", "", "--json")
    assert code == 2, out
    assert out["error"]["message"] == (f"--kind is empty; leave it out to keep the old card's kind, or name "
                                       f"one of: {KINDS}")
    assert files(vault) == ["03-Knowledge/heron.md"]


def test_the_tools_refuse_a_blank_kind_naming_the_argument(server_log, vault, heron):
    card_id, _path = heron

    async def body(session):
        for blank in ("", "  "):
            said = await refused(session, "memory_capture", title="heron two", body=BODY, kind=blank)
            assert said == f"kind is empty; leave it out for a knowledge card, or name one of: {KINDS}", said
            said = await refused(session, "memory_update", id=card_id, kind=blank)
            assert said == (f"kind is empty; leave it out: an update keeps a card's kind, and the "
                            f"memory_supersede tool with id={card_id}, kind=KIND writes the card under another"), said
            said = await refused(session, "memory_supersede", id=card_id, title="heron moved",
                                 body=BODY + " at the lake", kind=blank)
            assert said.startswith("kind is empty; leave it out to keep the old card's kind"), said

    scenario(body)(server_log)
    assert files(vault) == ["03-Knowledge/heron.md"]
