"""Cursor project rules: `.cursor/rules/*.mdc`, Markdown with a small frontmatter
(`description`, `globs`, `alwaysApply`). One rule file is one card titled by its description."""

from __future__ import annotations

import re
from dataclasses import replace

from memsync import notes
from memsync.model.indexing import Card

from .base import FileAdapter, first_line_title, hidden


class CursorRulesAdapter(FileAdapter):
    name = "cursor"
    suffixes = (".mdc",)

    def enters(self, rel_dir: str) -> bool:
        parts = rel_dir.split("/")
        if ".cursor" not in parts:
            return super().enters(rel_dir)
        i = parts.index(".cursor")
        inside = parts[i + 1 :]
        return (not inside or inside[0] == "rules") and not hidden("/".join(parts[:i] + inside))

    def wants(self, rel_path: str) -> bool:
        return rel_path.endswith(".mdc") and ".cursor/rules/" in "/" + rel_path

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        card = notes.parse(data, rel_path)
        text, _ = notes.decode(data)
        meta, _body, problem = notes.split_frontmatter(text)
        if problem and (block := notes.fenced(text)) is not None:
            # Cursor writes globs bare (`globs: *.tsx, src/**/*.ts`), which YAML refuses (`*`
            # starts an alias): its frontmatter is read as the flat `key: value` lines it is.
            meta = dict(_FLAT.findall(block))
            if card.problem == problem:
                card = replace(card, problem=None)
        description = meta.get("description")
        title = first_line_title(str(description)) if description else card.title
        return [replace(card, title=title, kind=card.kind or "prompt")]


_FLAT = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.M)
