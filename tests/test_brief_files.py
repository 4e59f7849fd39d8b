"""A changed file of several cards (Gemini's bullets, a memory graph's entities) in `memsync brief`,
through the CLI and a real index: each card is told once, in the text and in --json, and the
sections' counts agree with what they show."""

from __future__ import annotations

import json
import re
import time

from memsync.store.index import Index

from . import briefing
from .briefing import brief, titles

two_projects, brief_home = briefing.two_projects, briefing.brief_home  # fixtures

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


def add_graph_source(tmp_path, graph) -> None:
    """A memory graph (mcp-memory) at `graph` added to the home's sources."""
    config = tmp_path / "home" / "config.json"
    settings = json.loads(config.read_text())
    settings["sources"].append({"name": "graph", "adapter": "mcp-memory", "path": str(graph)})
    config.write_text(json.dumps(settings))


def write_people(graph, observations: dict[str, list[str]]) -> None:
    """The graph's memory.jsonl: a `person` entity for each name, with its observations."""
    lines = [{"type": "entity", "name": name, "entityType": "person", "observations": seen}
             for name, seen in observations.items()]
    (graph / "memory.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


GITHUB_TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz" + "0123456789"


def write_flagged_graph(graph, bob_also: str = "") -> None:
    """Four people, the first named with a GitHub token (a title the secrets scanner flags);
    `bob_also`: one more observation of Bob's."""
    people = [f"Deploy token {GITHUB_TOKEN}", "Bob", "Carol", "Dave"]
    write_people(graph, {name: [f"{name[:6]} works on the shop", *([bob_also] if bob_also and name == "Bob" else [])]
                         for name in people})


def changed_file_item(cli, brief_home, tmp_path) -> tuple[dict, dict, dict]:
    """Once the graph changed: `memsync index`, then the brief, its one changed item, and the
    graph's card ids by title."""
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice
    data = brief(cli, brief_home["shop"])
    [item] = [i for s in data["sections"] if s["key"] == "changed" for i in s["items"]]
    index = Index(tmp_path / "home" / "memsync.db")
    ids = {row["title"]: row["id"] for row in index.cards() if row["source"] == "graph"}
    index.close()
    return data, item, ids



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


def test_an_edit_of_one_entity_of_a_memory_graph_tells_the_file(brief_home, cli, tmp_path):
    graph = tmp_path / "graph"
    graph.mkdir()
    people = ["Alice", "Bob", "Carol", "Dave"]

    def write_graph(alice: list[str]) -> None:
        write_people(graph, {name: alice if name == "Alice" else [f"{name} works on the shop"] for name in people})

    write_graph(["Alice likes tea"])
    add_graph_source(tmp_path, graph)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    brief(cli, brief_home["shop"])
    time.sleep(1.01 - time.time() % 1)
    write_graph(["Alice likes tea", "Alice moved to Berlin"])  # one entity of four changed
    data, item, ids = changed_file_item(cli, brief_home, tmp_path)
    assert item["title"] == "graph:memory.jsonl" and item["id"] is None and item["file"]
    assert item["note"] == "changed: one or more of its 4 cards"
    assert item["cards"] == [ids[name] for name in people[:3]]  # the first few, for memory_get
    assert f"- graph:memory.jsonl (changed: one or more of its 4 cards) — {ids['Alice']} Alice;" in data["text"]
    time.sleep(1.01 - time.time() % 1)
    assert "graph:memory.jsonl" not in titles(brief(cli, brief_home["shop"]), "changed")  # told once


def test_a_flagged_title_in_a_changed_file_is_held_back_and_not_pointed_to(brief_home, cli, tmp_path):
    """A file's item names its first cards; one whose title the scanner flags is counted held
    back, and its id is left out of `cards` as its title is left out of the text."""
    graph = tmp_path / "graph"
    graph.mkdir()
    key = GITHUB_TOKEN
    write_flagged_graph(graph)
    add_graph_source(tmp_path, graph)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    before = brief(cli, brief_home["shop"])["held_back"]
    time.sleep(1.01 - time.time() % 1)
    write_flagged_graph(graph, "Bob moved to Berlin")
    data, item, ids = changed_file_item(cli, brief_home, tmp_path)
    assert key not in json.dumps(data)
    assert item["cards"] == [ids["Bob"], ids["Carol"]]  # as the line names them
    assert item["line"] == f"{ids['Bob']} Bob; {ids['Carol']} Carol; …"
    assert data["held_back"] == before + 1 and "Held back: " in data["text"]
