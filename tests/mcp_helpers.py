"""Helpers for the MCP tests: a live `memsync mcp` through the SDK's stdio client, as an agent's
client would drive it, and the checks every reply must pass."""

from __future__ import annotations

import json
import os
import re
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .conftest import MEMSYNC_BIN

DEADLINE = 60.0
TOOLS = {
    "memory_search", "memory_get", "memory_capture", "memory_update",
    "memory_supersede", "memory_delete", "memory_stats", "memory_reindex",
}
# The server option that adds structured content (the CLI's --json objects) to every reply; by
# default a reply is its compact text only. Tests that compare objects with the CLI use it.
STRUCTURED = "--structured"
# Text that would mean an implementation detail leaked to the model.
LEAKS = ("Traceback", "sqlite3", "OperationalError", "validation error for", "pydantic", "File \"")


@pytest.fixture
def server_log(tmp_path) -> Path:
    return tmp_path / "server.log"


@asynccontextmanager
async def connected(server_log: Path, *options: str):
    params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp", *options], env=os.environ.copy())
    with server_log.open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=DEADLINE) as session,
        ):
            await session.initialize()
            yield session


def scenario(fn, options: tuple[str, ...] = (STRUCTURED,)):
    """Run an async test body against a live `memsync mcp OPTIONS`, bounded by a deadline; by
    default with structured content, which `tool` and `hits` return."""

    def run(server_log, **fixtures):
        async def main():
            with anyio.fail_after(DEADLINE):
                async with connected(server_log, *options) as session:
                    await fn(session, **fixtures)

        anyio.run(main)
        log = server_log.read_text()
        assert "Traceback" not in log, log

    return run


def text_of(result) -> str:
    return "".join(c.text for c in result.content)


def holds_its_json_once(result) -> None:
    """The reply's text is a rendering, never the structured content serialized again."""
    text = text_of(result)
    with pytest.raises(ValueError):
        json.loads(text)
    data = result.structured_content
    if data:
        for dumped in (json.dumps(data, ensure_ascii=False), json.dumps(data)):
            assert dumped not in text
        assert '"' + next(iter(data)) + '":' not in text  # not even a piece of it


async def tool(session, name: str, **arguments) -> dict:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    holds_its_json_once(result)
    return result.structured_content


async def refused(session, name: str, **arguments) -> str:
    result = await session.call_tool(name, arguments)
    assert result.is_error, result
    text = text_of(result)
    assert text and not any(leak in text for leak in LEAKS), text
    return text


async def eventually(check, deadline: float = 20.0):
    """Poll an async check until it returns something truthy."""
    end = anyio.current_time() + deadline
    while not (value := await check()):
        assert anyio.current_time() < end, "condition not met before the deadline"
        await anyio.sleep(0.05)
    return value


async def hits(session, query: str, **filters) -> list[dict]:
    """A search's hits: the structured ones, or read from the text of a text-only reply."""
    result = await session.call_tool("memory_search", {"query": query, **filters})
    assert not result.is_error, text_of(result)
    holds_its_json_once(result)
    return result.structured_content["hits"] if result.structured_content else read_hits(text_of(result))


HIT_LINE = re.compile(r"(\d+) (.+) \(([^()]+)\)(?: \[(.*)\])?$")


def read_hits(text: str) -> list[dict]:
    """A search reply's text read back the way a model would: each hit's id, title, full path
    (its `in FOLDER` line plus the file), notes and snippet (the line after the hit's)."""
    found, folder = [], None
    for line in text.splitlines()[1:]:
        if not line:
            break  # the tail: notes after the last hit
        if line.startswith("in ") and line.endswith(("/", ":")):
            folder = "" if line == "in ./" else line[3:]
        elif (hit := HIT_LINE.match(line)) and folder is not None:
            found.append({"id": int(hit[1]), "title": hit[2], "path": folder + hit[3],
                          "notes": hit[4] or "", "snippet": ""})
        else:
            assert found and not found[-1]["snippet"], f"a line out of place: {line!r}"
            found[-1]["snippet"] = line
    return found


def indexed_herons(vault: Path, cli, count: int, text: str) -> None:
    """`count` heron cards in 03-Knowledge, `text` formatted with each one's number, indexed."""
    from .conftest import write_card

    for n in range(count):
        write_card(vault, f"03-Knowledge/heron {n}.md", f"heron {n}", text.format(n=n))
    cli("index")
