"""Library messages reworded for a model calling memsync's MCP tools.

Messages are written once, in the CLI's words (`memsync update`, `--as-of`), because a person
reads most of them. A model cannot run a command: it calls a tool with arguments. Every CLI flag
that reaches a tool has the same name with underscores, and each command that has a tool maps to
one, so the translation is mechanical. Commands only a person can run (restore, purge, watch,
sources) are left as they are.
"""

from __future__ import annotations

import re

TOOL_FOR_COMMAND = {
    "search": "memory_search",
    "show": "memory_get",
    "capture": "memory_capture",
    "update": "memory_update",
    "supersede": "memory_supersede",
    "delete": "memory_delete",
    "stats": "memory_stats",
    "index": "memory_reindex",
}
PERSON_ONLY_FLAGS = ("--restore", "--purge")
_COMMAND = re.compile(r"`memsync (\w+)([^`]*)`")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z]*(?:-[a-z]+)*)")


def _tool(match: re.Match) -> str:
    tool, args = TOOL_FOR_COMMAND.get(match[1]), match[2]
    if tool is None or any(flag in args for flag in PERSON_ONLY_FLAGS):
        return match[0]
    return f"the {tool} tool"


def for_model(text: str | None) -> str | None:
    """`memsync update` -> the memory_update tool; --as-of -> as_of (outside commands kept)."""
    if not text:
        return text
    parts = _COMMAND.sub(_tool, text).split("`")
    # even parts are outside backticks: a person-only command keeps its flags
    parts[::2] = [_FLAG.sub(lambda m: m[1].replace("-", "_"), part) for part in parts[::2]]
    return "`".join(parts)
