"""The MCP memory server's knowledge graph (`memory.jsonl`) as a source: the server writes the file
whole and the user cannot split it, so it is read line by line under a size cap of its own."""

from __future__ import annotations

import json
from contextlib import closing

import pytest

import memsync.adapters as adapters
from memsync import api, config, reading
from memsync.model import Source
from memsync.store.index import Index
from memsync.sync import MAX_FILE_BYTES, Indexer

from .helpers import found


def write_graph(path, entities: int, filler: int = 0) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(entities):
            item = {"type": "entity", "name": f"entity {i}", "entityType": "thing",
                    "observations": [f"marker{i} seen", "filler " * filler]}
            handle.write(json.dumps(item) + "\n")


def test_a_graph_over_the_note_cap_is_indexed_whole(tmp_path, run_cli):
    graph = tmp_path / "graph"
    graph.mkdir()
    write_graph(graph / "memory.jsonl", 2000, filler=600)
    assert (graph / "memory.jsonl").stat().st_size > MAX_FILE_BYTES
    code, out, _err = run_cli("sources", "--add", "graph", "--adapter", "mcp-memory", "--path", graph, "--json")
    assert code == 0 and "problems" not in out
    assert found("marker1999") == ["memory.jsonl#" + adapters.base.anchor("entity 1999")]
    assert api.stats(config.load())["problems"] == []


def test_a_graph_that_grows_past_the_indexers_cap_keeps_its_cards(tmp_path):
    graph = tmp_path / "graph"
    graph.mkdir()
    write_graph(graph / "memory.jsonl", 3)
    sources = [Source("graph", "mcp-memory", str(graph))]
    with closing(Index(config.load().db.path)) as index:
        Indexer(index, sources, max_bytes=256).reconcile()
        write_graph(graph / "memory.jsonl", 40)  # far over 256 bytes
        report = Indexer(index, sources, max_bytes=256).reconcile()
    assert report.problems == [] and report.removed == 0
    assert found("marker39") == ["memory.jsonl#" + adapters.base.anchor("entity 39")]


def test_a_graph_over_its_own_cap_says_so_without_asking_for_a_split(tmp_path):
    graph = tmp_path / "graph"
    graph.mkdir()
    write_graph(graph / "memory.jsonl", 40)
    graph_cap = adapters.get("mcp-memory").max_bytes
    assert graph_cap and graph_cap > MAX_FILE_BYTES
    adapter = adapters.get("mcp-memory")
    adapter.max_bytes = 512  # this instance only: the file is over it
    look = reading.look(str(graph), adapter, 256, "memory.jsonl", None)
    assert look.state == "too_large"
    from memsync.batch import _problem

    message = _problem(look, adapter, 256)
    assert "split" not in message and "over the 512 bytes memsync reads" in message


def test_lines_end_at_newlines_only(tmp_path):
    # JSON.stringify leaves U+2028 raw inside a string: it does not end the line
    line = json.dumps({"type": "entity", "name": "Ann", "observations": ["a\u2028b"]}, ensure_ascii=False)
    (card,) = adapters.get("mcp-memory").read((line + "\n").encode(), "memory.jsonl")
    assert card.problem is None and card.body == "- a\u2028b"


GAMMA = {"name": "Gamma", "entityType": "person", "observations": ["likes kafka"]}
KNOWS = {"from": "Gamma", "to": "Delta", "relationType": "knows"}


def test_a_bom_before_the_first_line_keeps_its_entity():
    lines = [{"type": "entity", **GAMMA}, {"type": "entity", "name": "Omega", "observations": ["x"]}]
    data = "\ufeff" + "\r\n".join(json.dumps(x) for x in lines) + "\r\n"
    cards = adapters.get("mcp-memory").read(data.encode(), "memory.jsonl")
    assert [c.title for c in cards] == ["Gamma", "Omega"] and cards[0].problem is None


def test_observations_that_are_not_strings_read_as_their_json():
    item = {"type": "entity", "name": "Beta", "observations": [42, None, {"a": [1, 2]}, ["x"], True]}
    (card,) = adapters.get("mcp-memory").read(json.dumps(item).encode(), "memory.jsonl")
    assert card.body == '- 42\n- {"a": [1, 2]}\n- ["x"]\n- true'


@pytest.mark.parametrize("document", [
    json.dumps({"entities": [GAMMA], "relations": [KNOWS]}, indent=2),  # as read_graph gives it
    json.dumps({"entities": [GAMMA], "relations": [KNOWS]}),
    json.dumps([{"type": "entity", **GAMMA}, {"type": "relation", **KNOWS}], indent=1),
    json.dumps([{"type": "entity", **GAMMA}, {"type": "relation", **KNOWS}]),
])
def test_a_graph_written_as_one_json_document_is_read(tmp_path, run_cli, document):
    graph = tmp_path / "graph"
    graph.mkdir()
    (graph / "memory.json").write_text(document)
    code, _out, _err = run_cli("sources", "--add", "graph", "--adapter", "mcp-memory", "--path", graph)
    assert code == 0
    assert found("kafka") == ["memory.json#" + adapters.base.anchor("Gamma")]
    assert api.stats(config.load())["problems"] == []
    (card,) = adapters.get("mcp-memory").read(document.encode(), "memory.json")
    assert card.body == "- likes kafka\n- Gamma knows Delta"


def test_a_graph_that_gives_no_entity_says_why(tmp_path, run_cli):
    graph = tmp_path / "graph"
    graph.mkdir()
    (graph / "memory.json").write_text('{"type": "entity", "name": "Cut short"')  # a writer mid-write
    code, _out, _err = run_cli("sources", "--add", "graph", "--adapter", "mcp-memory", "--path", graph)
    assert code == 0
    code, out, _err = run_cli("stats", "--json")
    assert [(p["path"], p["message"]) for p in out["problems"]] == [
        ("memory.json", "lines that are not JSON objects: [1]")]


def test_an_entity_without_a_name_is_said_not_dropped_unseen(tmp_path, run_cli):
    # no card can be made of it (its name is its title and its anchor), so stats names its line
    graph = tmp_path / "graph"
    graph.mkdir()
    (graph / "memory.jsonl").write_text("\n".join(json.dumps(item, ensure_ascii=False) for item in [
        {"type": "entity", "name": "Ann", "entityType": "person", "observations": ["drinks oolong-7"]},
        {"type": "entity", "name": " ", "entityType": "person", "observations": ["lost sencha-4"]},
        {"type": "entity", "entityType": "place", "observations": ["lost matcha-2"]},
    ]) + "\nnot json\n")
    code, _out, _err = run_cli("sources", "--add", "graph", "--adapter", "mcp-memory", "--path", graph)
    assert code == 0 and found("oolong-7") == ["memory.jsonl#" + adapters.base.anchor("Ann")]
    code, out, _err = run_cli("stats", "--json")
    assert [(p["path"], p["message"]) for p in out["problems"]] == [("memory.jsonl", (
        "lines that are not JSON objects: [4]; entities without a name: lines [2, 3]"))]
