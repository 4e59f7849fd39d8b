"""Cursor project rules: `.cursor/rules/*.mdc`, Markdown with a small frontmatter
(`description`, `globs`, `alwaysApply`). One rule file is one card titled by its description.

Also Cursor's older `.cursorrules`: one plain text (or Markdown) file of rules at a project's
top, which Cursor still reads. It is one card, titled "Cursor rules" (and the project's folder,
when the source holds several projects).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from memsync import notes
from memsync.model.indexing import Card

from .base import FileAdapter, first_line_title, hidden

LEGACY_RULES = ".cursorrules"


class CursorRulesAdapter(FileAdapter):
    name = "cursor"
    suffixes = (".mdc", LEGACY_RULES)
    rules_version = 3  # 2: .cursorrules read, beside .cursor/rules/*.mdc; 3: links read through
    follows_links = True  # a .cursorrules is often a link to the project's AGENTS.md

    def enters(self, rel_dir: str) -> bool:
        parts = rel_dir.split("/")
        if ".cursor" not in parts:
            return super().enters(rel_dir)
        i = parts.index(".cursor")
        inside = parts[i + 1 :]
        return (not inside or inside[0] == "rules") and not hidden("/".join(parts[:i] + inside))

    def wants(self, rel_path: str) -> bool:
        folder, _, name = rel_path.rpartition("/")
        if name == LEGACY_RULES:
            return not hidden(folder)
        return rel_path.endswith(".mdc") and ".cursor/rules/" in "/" + rel_path

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        card = notes.parse(data, rel_path)
        folder, _, name = rel_path.rpartition("/")
        if name == LEGACY_RULES:  # no frontmatter of Cursor's: named by where it is
            title = card.title if card.title != LEGACY_RULES else "Cursor rules" + (
                f": {folder}" if folder else "")
            return [replace(card, title=title, kind=card.kind or "prompt")]
        text, _ = notes.decode(data)
        meta, _body, problem = notes.split_frontmatter(text)
        if problem and (block := notes.fenced(text)) is not None:
            # Cursor writes globs bare (`globs: *.tsx, src/**/*.ts`), which YAML refuses (`*`
            # starts an alias): its frontmatter is read as the flat `key: value` lines it is.
            meta = {key: _unquoted(value) for key, value in _FLAT.findall(block)}
            if card.problem == problem:
                card = replace(card, problem=None)
        description = meta.get("description")
        title = first_line_title(str(description)) if description else card.title
        return [replace(card, title=title, kind=card.kind or "prompt")]


_FLAT = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.M)


def _unquoted(value: str) -> str:
    """A flat value as YAML reads a quoted scalar: `"Use Redis"` is the text Use Redis (a
    description quoted by hand beside bare globs kept its quotes in the title)."""
    if len(value) < 2 or value[0] != value[-1] or value[0] not in "'\"":
        return value
    if value[0] == "'":
        return value[1:-1].replace("''", "'")  # the one escape of a single-quoted scalar
    try:
        return str(json.loads(value))  # YAML's double-quoted escapes include JSON's
    except ValueError:  # not one quoted scalar ("a" and "b"), or an escape JSON lacks
        return value
