"""Library messages reworded for a model calling memsync's MCP tools.

Messages are written once, in the CLI's words (`memsync update`, `--as-of`), because a person
reads most of them. A model cannot run a command: it calls a tool with arguments. Each command
that has a tool maps to it, and each CLI flag that reaches a tool is the argument of the same
name with underscores, so the translation is mechanical (`memsync delete --restore P` is the
memory_delete tool with restore=P; `memsync doctor` is memory_stats with check=true). Commands
only a person can run (purge, doctor's repairs, a mass removal's yes, watch, sources) stay as
written and are said to be the user's to run, so a model passes them on. Anything quoted stays
as written: titles, paths and values are the user's, not advice.
"""

from __future__ import annotations

import re
from typing import overload

TOOL_FOR_COMMAND = {
    "search": "memory_search",
    "show": "memory_get",
    "capture": "memory_capture",
    "update": "memory_update",
    "supersede": "memory_supersede",
    "delete": "memory_delete",
    "stats": "memory_stats",
    "index": "memory_reindex",
    "doctor": "memory_stats",  # with check=true (COMMAND_ARGUMENTS): the same findings
}
# Arguments a command's tool needs to do what the command does.
COMMAND_ARGUMENTS = {"doctor": ["check=true"]}
# CLI flags whose tool argument has the same name (with underscores).
ARGUMENT_FLAGS = (
    "as-of", "include-invalid", "title", "body", "kind", "tags", "tag", "source", "limit",
    "on-conflict", "reject-secrets", "offset", "max-chars", "full", "rebuild", "priority", "ttl",
    "restore", "force", "semantic", "summary",
)
PERSON_ONLY_FLAGS = ("--purge", "--fix", "--allow-mass-removal")  # --fix, --fix-pairs: doctor's repairs
# Said after a command no tool can run, so a model passes it on instead of trying it.
FOR_THE_USER = " (for the user to run)"
_COMMAND = re.compile(r"`memsync (\w+)([^`]*)`")
_FLAG = re.compile(r"(?<![\w-])--(" + "|".join(sorted(ARGUMENT_FLAGS, key=len, reverse=True)) + r")(?![\w-])")
# A value, not "...": one word, or a shell-quoted one ('x y.md', a path with spaces)
_FLAG_VALUE = re.compile(r"--([a-z][a-z-]*) ('[^']*'|(?!\.\.\.)[^\s'-]\S*)")
# What is not advice: a command in backticks, or a quoted value (Python's repr quotes, or JSON's).
_VERBATIM = re.compile(r"(`[^`]*`|(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\")")


def _tool(match: re.Match) -> str:
    tool, args = TOOL_FOR_COMMAND.get(match[1]), match[2]
    if tool is None or any(flag in args for flag in PERSON_ONLY_FLAGS):
        return match[0] + FOR_THE_USER
    given = [*COMMAND_ARGUMENTS.get(match[1], []),
             *(f"{name.replace('-', '_')}={value.strip(chr(39))}" for name, value in _FLAG_VALUE.findall(args))]
    return f"the {tool} tool" + (f" with {', '.join(given)}" if given else "")


@overload
def for_model(text: str) -> str: ...
@overload
def for_model(text: None) -> None: ...
def for_model(text: str | None) -> str | None:
    """`memsync update` -> the memory_update tool; --as-of -> as_of; quoted text untouched."""
    if not text:
        return text
    out = []
    # split() keeps the verbatim pieces at the odd places
    for place, part in enumerate(_VERBATIM.split(text)):
        if place % 2 == 0:
            out.append(_FLAG.sub(lambda m: m[1].replace("-", "_"), part))
        elif part.startswith("`") and (command := _COMMAND.fullmatch(part)):
            out.append(_tool(command))
        else:
            out.append(part)
    return "".join(out)
