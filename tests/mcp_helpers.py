"""Helpers for the MCP tests: a live `memsync mcp` through the SDK's stdio client, as an agent's
client would drive it, and the checks every reply must pass."""

from __future__ import annotations

import json
import os
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


def scenario(fn):
    """Run an async test body against a live `memsync mcp`, bounded by a deadline."""

    def run(server_log, **fixtures):
        async def main():
            with anyio.fail_after(DEADLINE):
                async with connected(server_log) as session:
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
    return (await tool(session, "memory_search", query=query, **filters))["hits"]
