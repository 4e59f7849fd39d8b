"""What the trash tests share: one captured card (`card`; a test module takes it by naming it,
`card = trashing.card`), its body, the vault's files with their bytes, and a card's read stats."""

from __future__ import annotations

import pytest

from memsync import api, config

BODY = "The staging database lives on db-stage-2, port 5433, user app_ro."


def tree(vault):
    """Every file under the vault (dot-folders included) with its bytes."""
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file()}


def stats_of(card_id):
    with api.open_index(config.load()) as index:
        return index.read_stats(card_id)


@pytest.fixture
def card(cli):
    _, data = cli("capture", "--title", "staging db", "--body", BODY, "--json")
    return data
