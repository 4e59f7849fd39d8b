"""The MCP reference memory server's knowledge graph (`memory.jsonl`, or `memory.json`: the name
the server used by default before, for the same lines).

Each line is an entity (`{"type": "entity", "name", "entityType", "observations"}`) or a
relation (`{"type": "relation", "from", "to", "relationType"}`). Every entity becomes a card
`memory.jsonl#<anchor of its name>` whose body lists its observations and its relations. A
file that is one JSON document instead (a list of those items, or the `{"entities", "relations"}`
the server's read_graph returns) is read as the same items.

The server writes the file whole and the user cannot split it, so it is read line by line
(`read_lines`, from a file handle) under a size cap of its own, well above a note's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from memsync.model.indexing import Card
from memsync.sizes import MIB

from .base import FileAdapter, anchor

GRAPH_JSON = "memory.json"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads joins the pairs it can


class MemoryGraphAdapter(FileAdapter):
    name = "mcp-memory"
    suffixes = (".jsonl", ".json")
    by_name = True  # wants_name
    # Only the entities and relations are kept while reading, never the file's text: a graph
    # of this size holds some 200,000 entities.
    max_bytes = 64 * MIB
    rules_version = 2  # 2: memory.json read, beside every .jsonl

    def wants_name(self, name: str) -> bool:
        """Every `.jsonl`, and of the `.json` files only the server's old default name (others,
        settings and the like, are not a graph)."""
        return (name.endswith(".jsonl") or name == GRAPH_JSON) and not name.startswith(".")

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        return self.read_lines(data.split(b"\n"), rel_path)

    def read_lines(self, raw_lines: Iterable[bytes], rel_path: str) -> list[Card]:
        """The cards of the lines of a graph file. Lines end at `\n` only: the server writes
        each item with JSON.stringify, which leaves U+2028 and friends unescaped inside strings."""
        entities: dict[str, dict] = {}
        relations: list[dict] = []
        bad_lines: list[int] = []
        nameless: list[int] = []  # entities no card can be made of: said, not dropped unseen
        for number, item in _items(raw_lines):
            if not isinstance(item, dict):
                _note(bad_lines, number)
            elif item.get("type") == "entity" and not (isinstance(item.get("name"), str) and item["name"].strip()):
                _note(nameless, number)
            elif item.get("type") == "entity":
                # A name on two lines is one entity (the server reads the file so): the later
                # line's observations join the first's.
                entity = entities.setdefault(item["name"], {**item, "observations": []})
                entity["observations"] += [o for o in _observations(item) if o not in entity["observations"]]
            elif item.get("type") == "relation":
                relations.append(item)
        problem = "; ".join([*([f"lines that are not JSON objects: {bad_lines[:10]}"] if bad_lines else []),
                             *([f"entities without a name: lines {nameless[:10]}"] if nameless else [])]) or None
        links: dict[str, list[str]] = {}  # by entity name: one pass, not one per entity
        for r in relations:
            link = f"{r.get('from')} {r.get('relationType')} {r.get('to')}"
            for end in dict.fromkeys(e for e in (r.get("from"), r.get("to")) if isinstance(e, str)):
                links.setdefault(end, []).append(link)
        cards: list[Card] = []
        if problem and not entities:
            # Nothing to hang the problem on: one card for the file carries it, so stats and
            # doctor name a graph that gives nothing (a document cut short, the wrong file).
            return [Card(path=rel_path, title=rel_path.rsplit("/", 1)[-1], body="", problem=problem)]
        for name, entity in entities.items():
            lines = [*entity["observations"], *links.get(name, [])]
            kind = entity.get("entityType")
            # the file's problem once, on its first card: it is the file's, not each entity's
            cards.append(Card(path=f"{rel_path}#{anchor(name)}", title=name,
                              body="\n".join(f"- {line}" for line in lines),
                              kind=str(kind) if kind else None, problem=None if cards else problem))
        return cards


def _note(lines: list[int], number: int) -> None:
    if not lines or lines[-1] != number:  # a document's items share its line
        lines.append(number)


def _items(raw_lines: Iterable[bytes]) -> Iterator[tuple[int, object]]:
    """(line number, parsed item, or None for a line that is not JSON) for each line that is not
    blank. A file that is one JSON document (a list of items, or `{"entities": [...],
    "relations": [...]}` as the server's read_graph gives it, however indented) gives the items
    in it, each numbered by the line where the document starts."""
    lines = iter(raw_lines)
    started = False
    for number, raw in enumerate(lines, 1):
        line = raw.decode("utf-8", errors="replace")
        if number == 1:  # a BOM (Windows editors, PowerShell) is no part of the item: json refuses it
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        if not started and line.strip() in ("{", "["):
            # A document over several lines (no item of a JSONL file is a lone bracket): read
            # whole, within the adapter's cap.
            line += b"".join(lines).decode("utf-8", errors="replace")
        started = True
        try:
            item = json.loads(line)
        except ValueError:
            yield number, None
            continue
        if "\\u" in line:  # JSON may spell half of a surrogate pair, which no file can store
            item = _whole_characters(item)
        yield from ((number, each) for each in _unpacked(item))


def _unpacked(item: object) -> list:
    """The items of one parsed line: itself, or those of a whole graph written as one document."""
    if isinstance(item, list):
        return item
    if not (isinstance(item, dict) and "type" not in item and ("entities" in item or "relations" in item)):
        return [item]
    items = []
    for key, kind in (("entities", "entity"), ("relations", "relation")):
        listed = item.get(key)
        for each in listed if isinstance(listed, list) else []:
            items.append({**each, "type": kind} if isinstance(each, dict) else each)
    return items


def _observations(entity: dict) -> list[str]:
    observations = entity.get("observations") or []
    if not isinstance(observations, list):  # one observation written without its list
        observations = [observations]
    # A number, a list or an object written by another tool reads as its JSON (`{"a": 1}`, not
    # Python's `{'a': 1}`); a null is no observation.
    return [o if isinstance(o, str) else json.dumps(o, ensure_ascii=False)
            for o in observations if o is not None]


def _whole_characters(value):
    """`value` with every lone surrogate (from a `\\ud800`-style escape) replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_whole_characters(v) for v in value]
    if isinstance(value, dict):
        return {_whole_characters(k): _whole_characters(v) for k, v in value.items()}
    return value
