"""The brief's "Most used" section (docs/brief.md: by priority, feedback, then reads), through the
real CLI and index, once more cards have reads than the brief reads rows of
(memsync.brief.ROWS["used"]): a card that ranks first is never crowded out by read counts."""

from __future__ import annotations

import pytest

from memsync.brief import ROWS
from memsync.store.index import Index

from .conftest import write_card

READ = ROWS["used"] + 5  # cards read twice each: more than the brief reads rows of


@pytest.fixture
def read_vault(tmp_path, vault, cli):
    """READ cards read twice each, and a project folder none of them belongs to."""
    project = tmp_path / "code" / "elsewhere"
    (project / ".git").mkdir(parents=True)
    for n in range(READ):
        write_card(vault, f"03-Knowledge/read-{n}.md", f"Read {n}", f"Read note {n}.\n")
    write_card(vault, "03-Knowledge/critical.md", "Never read, critical", "Stop the line first.\n",
               priority="critical")
    write_card(vault, "03-Knowledge/p1.md", "Never read, P1", "Ask before a release.\n", priority="P1")
    write_card(vault, "03-Knowledge/low.md", "Never read, low", "Nice to know.\n", priority="low")
    write_card(vault, "03-Knowledge/liked.md", "Read once, helpful", "It helped.\n")
    write_card(vault, "03-Knowledge/told.md", "Never read, helpful", "Its snippet was enough.\n")
    write_card(vault, "03-Knowledge/disliked.md", "Never read, unhelpful", "Beside the point.\n")
    assert cli("index")[0] == 0
    index = Index(tmp_path / "home" / "memsync.db")
    ids = {row["title"]: row["id"] for row in index.cards()}
    with index.transaction():  # what `memsync show` records, without 170 runs of it
        for n in range(READ):
            index.record_read(ids[f"Read {n}"], "2026-01-02T10:00:00+00:00")
            index.record_read(ids[f"Read {n}"], "2026-01-02T10:00:00+00:00")
    index.close()
    assert cli("show", ids["Read once, helpful"])[0] == 0
    assert cli("feedback", ids["Read once, helpful"], "--helpful")[0] == 0
    # verdicts with no read, as memory_get's feedback gives them
    assert cli("feedback", ids["Never read, helpful"], "--helpful")[0] == 0
    assert cli("feedback", ids["Never read, unhelpful"], "--unhelpful")[0] == 0
    return project


def used(cli, project) -> list[str]:
    code, data = cli("brief", "--project", project, "--json", "--peek")
    assert code == 0, data
    return [item["title"] for section in data["sections"] if section["key"] == "used" for item in section["items"]]


def test_a_priority_card_never_read_leads_most_used_past_many_read_cards(read_vault, cli):
    shown = used(cli, read_vault)
    assert shown[:2] == ["Never read, critical", "Never read, P1"]


def test_helpful_feedback_outranks_reads_past_many_read_cards(read_vault, cli):
    assert used(cli, read_vault)[2] == "Read once, helpful"


def test_a_card_marked_helpful_but_never_opened_is_most_used_after_the_read_ones_as_helpful(read_vault, cli):
    """DESIGN §13: the most used and helpful. memory_get's feedback counts no read."""
    shown = used(cli, read_vault)
    assert shown[2:4] == ["Read once, helpful", "Never read, helpful"]
    assert "Never read, unhelpful" not in shown


def test_a_low_priority_card_never_read_is_not_most_used(read_vault, cli):
    """`low` counts as no priority (docs/brief.md), so a card never read has nothing to be here by."""
    assert "Never read, low" not in used(cli, read_vault)
