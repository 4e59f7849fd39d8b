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
import shlex
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
# CLI flags whose tool argument has the same name (with underscores): switches, which a tool
# takes as `name=true`, and flags with a value.
SWITCH_FLAGS = ("include-invalid", "reject-secrets", "full", "rebuild", "force", "semantic")
VALUE_FLAGS = ("as-of", "title", "body", "kind", "tags", "tag", "source", "limit", "on-conflict",
               "offset", "max-chars", "priority", "ttl", "restore", "summary")
ARGUMENT_FLAGS = SWITCH_FLAGS + VALUE_FLAGS
# Tools that name their card by `id`: a command's card id (`memsync show 12`) is that argument.
TAKES_ID = ("memory_get", "memory_update", "memory_supersede", "memory_delete")
# Said after a command no tool can run, so a model passes it on instead of trying it.
FOR_THE_USER = " (for the user to run)"
# The same inside the advice's own parentheses, where a second pair read as "(... `memsync
# sources --remove x` (for the user to run))"; a comma closes it before any words that follow.
FOR_THE_USER_INSIDE = ", for the user to run"
_ENDS_CLAUSE = tuple(").,;:")
_COMMAND = re.compile(r"`memsync (\w+)([^`]*)`")
# A flag in prose, with the whole number after it if there is one (`--offset 50`)
_FLAG = re.compile(r"(?<![\w-])--(" + "|".join(sorted(ARGUMENT_FLAGS, key=len, reverse=True))
                   + r")(?![\w-])(?: (\d+)(?![\w:/-]|\.\d))?")
# A command's words when the shell cannot split them (an unbalanced quote): a quoted one is one word
_WORD = re.compile(r"'[^']*'|\S+")


def _words(args: str) -> list[str]:
    """A command's words as the shell reads them, quotes taken off: the CLI quotes a path for the
    shell (shlex.quote), so `'x y.md'` is one word and `'Bob'"'"'s notes.md'` is Bob's notes.md."""
    try:
        return shlex.split(args)
    except ValueError:  # not a shell command after all (a quote left open): word by word
        return [word.strip("'") for word in _WORD.findall(args)]


def _arguments(tool: str, words: list[str]) -> list[str] | None:
    """A command's words as the tool's arguments (`--kind tool` -> kind=tool, `--rebuild` ->
    rebuild=true, `12` -> id=12); None when a flag has no argument of the tool (`--purge`,
    `--fix`, `--embed`): only the user can run that command."""
    given: list[str] = []
    words = [w for w in words if w != "..."]  # "and the rest", not a value
    at = 0
    while at < len(words):
        word = words[at]
        name = word[2:]
        if word.isdigit() and tool in TAKES_ID:
            given.append(f"id={word}")
        elif name in SWITCH_FLAGS:
            given.append(f"{name.replace('-', '_')}=true")
        elif name in VALUE_FLAGS:
            if at + 1 < len(words) and not words[at + 1].startswith("--"):
                at += 1
                given.append(f"{name.replace('-', '_')}={words[at]}")
        elif word.startswith("-"):
            return None
        at += 1  # any other word is a placeholder (ID, P) or the search words
    return given
# What is not advice: a command in backticks, or a quoted value (Python's repr quotes, or JSON's).
_VERBATIM = re.compile(r"(`[^`]*`|(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\")")


def _tool(match: re.Match, inside: bool = False, then: str = "") -> str:
    """A command as its tool, or as written and said to be the user's; `inside`: it stands
    within parentheses, and `then` is the prose after it."""
    tool = TOOL_FOR_COMMAND.get(match[1])
    given = _arguments(tool, _words(match[2])) if tool else None
    if tool is None or given is None:
        if not inside:
            return match[0] + FOR_THE_USER
        return match[0] + FOR_THE_USER_INSIDE + ("" if not then or then.startswith(_ENDS_CLAUSE) else ",")
    given = [*COMMAND_ARGUMENTS.get(match[1], []), *given]
    return f"the {tool} tool" + (f" with {', '.join(given)}" if given else "")


def _flag(match: re.Match) -> str:
    """A flag named in prose: its argument's name, `name=N` with a number (`--offset 50`); a
    switch is turned on by passing true."""
    name, number = match[1].replace("-", "_"), match[2]
    if match[1] in SWITCH_FLAGS:
        return f"{name}=true" + (f" {number}" if number else "")
    return f"{name}={number}" if number else name


@overload
def for_model(text: str) -> str: ...
@overload
def for_model(text: None) -> None: ...
def for_model(text: str | None) -> str | None:
    """`memsync update` -> the memory_update tool; --as-of -> as_of; quoted text untouched."""
    if not text:
        return text
    out = []
    depth = 0  # parentheses open in the prose so far (those in quoted values do not count)
    # split() keeps the verbatim pieces at the odd places
    pieces = _VERBATIM.split(text)
    for place, part in enumerate(pieces):
        if place % 2 == 0:
            out.append(_FLAG.sub(_flag, part))
            for char in part:
                depth = depth + 1 if char == "(" else max(depth - 1, 0) if char == ")" else depth
        elif part.startswith("`") and (command := _COMMAND.fullmatch(part)):
            out.append(_tool(command, depth > 0, pieces[place + 1]))
        else:
            out.append(part)
    return "".join(out)
