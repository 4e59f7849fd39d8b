"""The MCP reference memory server's knowledge graph (`memory.jsonl`).

Each line is an entity (`{"type": "entity", "name", "entityType", "observations"}`) or a
relation (`{"type": "relation", "from", "to", "relationType"}`). Every entity becomes a card
`memory.jsonl#<anchor of its name>` whose body lists its observations and its relations.
"""

from __future__ import annotations

import json

from memsync.model import Card

from .base import FileAdapter, anchor, hidden


class MemoryGraphAdapter(FileAdapter):
    name = "mcp-memory"
    suffixes = (".jsonl",)

    def wants(self, rel_path: str) -> bool:
        return rel_path.endswith(".jsonl") and not hidden(rel_path)

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        entities: dict[str, dict] = {}
        relations: list[dict] = []
        bad_lines = []
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                bad_lines.append(number)
                continue
            if not isinstance(item, dict):
                bad_lines.append(number)
            elif item.get("type") == "entity" and isinstance(item.get("name"), str):
                entities.setdefault(item["name"], item)
            elif item.get("type") == "relation":
                relations.append(item)
        problem = f"lines that are not JSON objects: {bad_lines[:10]}" if bad_lines else None
        cards = []
        for name, entity in entities.items():
            observations = [str(o) for o in entity.get("observations") or []]
            links = [
                f"{r.get('from')} {r.get('relationType')} {r.get('to')}"
                for r in relations if name in (r.get("from"), r.get("to"))
            ]
            body = "\n".join([*(f"- {o}" for o in observations), *(f"- {link}" for link in links)])
            kind = entity.get("entityType")
            cards.append(Card(path=f"{rel_path}#{anchor(name)}", title=name, body=body,
                              kind=str(kind) if kind else None, problem=problem))
        return cards
