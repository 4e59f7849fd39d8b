"""Library results and failures as MCP tool results.

A reply's text block is a compact rendering of the result (mcp_text), never its JSON; the dict
itself (the objects of the CLI's `--json`) rides along as structured content, which the server
strips unless it runs with `--structured` (mcp_server says why). Failures become tool errors (`isError`) whose text names the
argument and the fix: a MemsyncError gives its message in tool words, anything unexpected a
generic line while the traceback goes to stderr.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from memsync.errors import MemsyncError
from memsync.mcp.words import for_model

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

log = logging.getLogger("memsync.mcp")

INTERNAL_ERROR = "internal error, see the server log (stderr)"
Render = Callable[[dict], str]


def reworded(data: dict) -> dict:
    """The advice in a result, in tool words (titles, paths and card text are never touched)."""
    out = dict(data)
    for key in ("note", "reminder", "hint"):
        if isinstance(out.get(key), str):
            out[key] = for_model(out[key])
    if isinstance(out.get("warnings"), list):
        out["warnings"] = [for_model(w) if isinstance(w, str) else w for w in out["warnings"]]
    for part in ("doctor", "audit"):  # memory_stats with check=true: findings, each with its fix
        if isinstance(out.get(part), dict):
            out[part] = _checked(out[part])
    return out


def _checked(part: dict) -> dict:
    out = {**part, "fix": for_model(part["fix"])} if isinstance(part.get("fix"), str) else dict(part)
    if isinstance(out.get("findings"), list):
        out["findings"] = [{**f, **{k: for_model(f[k]) for k in ("message", "fix") if isinstance(f.get(k), str)}}
                           if isinstance(f, dict) else f for f in out["findings"]]
    return out


def ok(data: dict, render: Render) -> CallToolResult:
    data = reworded(data)
    return CallToolResult(content=[TextContent(type="text", text=render(data))], structured_content=data)


def error(message: str, data: dict | None = None, render: Render | None = None) -> CallToolResult:
    """A tool error: the message in tool words; a refused write also carries its result."""
    text = for_model(message)
    if data is None:
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
    data = reworded(data)
    rest = {k: v for k, v in data.items() if k != "note"}  # the note is the message already
    text += "\n" + (render or str)(rest)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data,
                          is_error=True)


def attempt(tool: str, call: Callable[[], dict]) -> dict | CallToolResult:
    """Run one library call: its dict, or a tool error for every way it can fail (never a crash)."""
    try:
        return call()
    except MemsyncError as err:
        return error(err.message)
    except Exception:
        log.exception("%s failed", tool)
        return error(INTERNAL_ERROR)


def guarded(tool: str, call: Callable[[], dict], render: Render) -> CallToolResult:
    data = attempt(tool, call)
    return data if isinstance(data, CallToolResult) else ok(data, render)


def written(tool: str, call, render: Render) -> CallToolResult:
    """A write tool: a rejected or conflicting result is a tool error that still carries it."""

    def run():
        from memsync.write import (
            vault,  # the write path (YAML, rules) loads only when a write arrives
        )

        result = call(vault)
        return result, vault.exit_code_for(result)

    outcome = attempt(tool, run)
    if isinstance(outcome, CallToolResult):
        return outcome
    result, refused = outcome
    if not refused:
        return ok(result, render)
    return error(result.get("note") or f"{tool} was refused ({result.get('status')})", result, render)


# --- arguments the SDK's validation refused, said for a model

_WANTS = {
    "id": "a card id from memory_search (a whole number)",
    "old_id": "a card id from memory_search (a whole number)",
    "tags": "a list of strings, or one comma-separated string",
    "as_of": "a day, YYYY-MM-DD",
    "limit": "a whole number, 1-20",
    "offset": "a whole number, 0 or more",
    "max_chars": "a whole number, 0 or more (0 = the whole card)",
    "on_conflict": "'suffix' or 'reject'",
}
_PROBLEM = {
    "missing": "is required",
    "int_parsing": "must be a whole number", "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_parsing": "must be true or false", "bool_type": "must be true or false",
    "string_type": "must be a string", "list_type": "must be a list",
}


def _problem(err: ErrorDetails) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _PROBLEM:
        return _PROBLEM[kind]
    if kind == "greater_than_equal":
        return f"must be {ctx.get('ge')} or more"
    if kind == "less_than_equal":
        return f"must be at most {ctx.get('le')}"
    if kind == "literal_error":
        return f"must be {ctx.get('expected')}"
    return err["msg"][:1].lower() + err["msg"][1:]


def _shown(given) -> str:
    text = repr(given)
    return text if len(text) <= 40 else text[:37] + "..."


def describe_invalid(tool: str, exc: ValidationError) -> str:
    """`memory_get: id must be a whole number (got 'abc'); pass a card id from memory_search.`"""
    by_arg: dict[str, list[ErrorDetails]] = {}
    for err in exc.errors():
        by_arg.setdefault(str(err["loc"][0]) if err["loc"] else "arguments", []).append(err)
    parts = []
    for arg, errs in by_arg.items():
        err = errs[0]
        problem = _problem(err) if len(errs) == 1 else f"must be {_WANTS.get(arg, 'of the type in the schema')}"
        got = "" if err["type"] == "missing" else f" (got {_shown(err.get('input'))})"
        wants = f"; pass {_WANTS[arg]}" if arg in _WANTS and len(errs) == 1 else ""
        parts.append(f"{arg} {problem}{got}{wants}")
    return f"{tool}: " + "; ".join(parts) + ". Call it again with that fixed."
