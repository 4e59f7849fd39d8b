"""A changed file of several cards (Gemini's bullets, a memory graph's entities) in `memsync brief`,
through the CLI and a real index: each card is told once, in the text and in --json, and the
sections' counts agree with what they show."""

from __future__ import annotations

import json
import re
import time

from memsync.store.index import Index

from . import test_brief
from .test_brief import (
    GITHUB_TOKEN,
    add_graph_source,
    brief,
    titles,
    write_flagged_graph,
    write_people,
)

# the home of test_brief (two projects, shop and blog), as fixtures of this module too
two_projects = test_brief.two_projects
brief_home = test_brief.brief_home

BULLETS = ["the linter is ruff-9", "the formatter is black-3", "tests run with pytest -q",
           "deploys go through make ship"]


def next_second() -> None:
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here


def card_ids(tmp_path, source: str) -> dict[str, int]:
    index = Index(tmp_path / "home" / "memsync.db")
    ids = {row["title"]: row["id"] for row in index.cards() if row["source"] == source}
    index.close()
    return ids


def told(data) -> list[int]:
    """Every card id the brief's items point at, with repeats: an item's own and a file's named ones."""
    return [i for s in data["sections"] for item in s["items"] for i in ([item["id"]] if item["id"] else item["cards"])]


def items(data, key) -> list[dict]:
    return [item for s in data["sections"] if s["key"] == key for item in s["items"]]


def section(data, key) -> dict:
    return next(s for s in data["sections"] if s["key"] == key)


def assert_each_card_told_once(data) -> None:
    ids = told(data)
    assert len(ids) == len(set(ids)), ids
    for card_id in ids:  # the text names each one once too
        assert len(re.findall(rf"\b{card_id}\b", data["text"])) == 1, card_id
    for s in data["sections"]:  # the heading's count is what the items tell
        if s["items"]:
            assert s["shown"] <= s["total"] or s["capped"], s


def test_a_changed_gemini_file_of_the_project_is_told_once_in_the_project_section(brief_home, cli, tmp_path):
    gemini = brief_home["shop"] / "GEMINI.md"
    gemini.write_text("## Gemini Added Memories\n" + "".join(f"- {b}\n" for b in BULLETS))
    assert cli("index")[0] == 0
    next_second()
    brief(cli, brief_home["shop"])
    next_second()
    gemini.write_text(gemini.read_text().replace("ruff-9", "ruff-10"))
    assert cli("index")[0] == 0
    data = brief(cli, brief_home["shop"], "--budget", "3000")
    ids = card_ids(tmp_path, "code")
    [item] = [i for i in items(data, "project") if i["id"] is None]
    assert item["title"] == "code:shop/GEMINI.md" and item["note"] == "changed: one or more of its 4 cards"
    named = [ids[t] for t in ("the linter is ruff-10", "the formatter is black-3", "tests run with pytest -q")]
    assert sorted(item["cards"]) == sorted(named)
    # the fourth bullet, not named by the file's item, is the project's card as any other
    assert ids["deploys go through make ship"] in [i["id"] for i in items(data, "project")]
    assert items(data, "changed") == [] and "## Changed since" not in data["text"]
    assert_each_card_told_once(data)
    project = section(data, "project")
    assert project["shown"] == project["total"]  # every card the project has, the secret held back
    assert "## This project\n" in data["text"]  # so its heading says no "(N of M)"


def test_a_memory_graph_of_the_project_with_a_flagged_entity_counts_it_held_back_once(brief_home, cli, tmp_path):
    graph = brief_home["shop"] / "memory"
    graph.mkdir()
    write_flagged_graph(graph)
    add_graph_source(tmp_path, graph)
    assert cli("index")[0] == 0
    next_second()
    before = brief(cli, brief_home["shop"], "--budget", "3000")
    next_second()
    write_flagged_graph(graph, "Bob moved to Berlin")
    assert cli("index")[0] == 0
    data = brief(cli, brief_home["shop"], "--budget", "3000")
    ids = card_ids(tmp_path, "graph")
    [item] = [i for i in items(data, "project") if i["id"] is None]
    assert item["title"] == "graph:memory.jsonl" and item["cards"] == [ids["Bob"], ids["Carol"]]
    assert GITHUB_TOKEN not in json.dumps(data)
    assert data["held_back"] == before["held_back"]  # the token's card, held back before as now
    assert_each_card_told_once(data)
    project, earlier = section(data, "project"), section(before, "project")
    assert project["total"] == earlier["total"] and project["shown"] == earlier["shown"]


def test_a_card_named_by_a_changed_file_is_not_listed_again_as_most_used(brief_home, cli, tmp_path):
    graph = tmp_path / "graph"
    graph.mkdir()
    people = ["Alice", "Bob", "Carol", "Dave"]

    def write_graph(alice: str) -> None:
        write_people(graph, {name: [alice if name == "Alice" else f"{name} works on the blog"] for name in people})

    write_graph("Alice likes tea")
    add_graph_source(tmp_path, graph)
    assert cli("index")[0] == 0
    ids = card_ids(tmp_path, "graph")
    for _ in range(5):  # Bob is read most: a "most used" card
        cli("show", ids["Bob"])
    next_second()
    before = brief(cli, brief_home["shop"])
    assert ids["Bob"] in [i["id"] for i in items(before, "used")]
    next_second()
    write_graph("Alice moved to Berlin")
    assert cli("index")[0] == 0
    data = brief(cli, brief_home["shop"])
    [item] = items(data, "changed")
    assert item["title"] == "graph:memory.jsonl" and ids["Bob"] in item["cards"]
    assert ids["Bob"] not in [i["id"] for i in items(data, "used")]
    assert_each_card_told_once(data)
    used = section(data, "used")
    assert used["total"] == section(before, "used")["total"] - 1 and used["shown"] == used["total"]
    assert "graph:memory.jsonl" in titles(data, "changed")
