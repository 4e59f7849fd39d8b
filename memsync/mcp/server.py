"""`memsync mcp`: the eight memory tools on the official MCP SDK (2.x), over stdio.

Only the mcp_* modules import the SDK, and only `memsync mcp` imports them: this one builds the
server (instructions, compact schemas, argument errors in tool words) and serves it on stdio;
mcp_tools holds the tools, mcp_replies turns results into tool results, mcp_http serves the same
server over Streamable HTTP, mcp_unreadable answers the lines the SDK's stdio transport cannot
read. stdout carries protocol only; logs go to stderr.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult
from pydantic import ValidationError

from memsync.config import Config
from memsync.mcp import brief as mcp_brief
from memsync.mcp import tools as mcp_tools
from memsync.mcp import unreadable
from memsync.mcp.live import CurrentConfig, LiveIndex, StartAfterHandshake
from memsync.mcp.replies import INTERNAL_ERROR, describe_invalid, error

log = logging.getLogger("memsync.mcp")

__all__ = ["INTERNAL_ERROR", "INSTRUCTIONS", "LiveIndex", "build", "serve"]

# What holds for every tool; each tool's description adds only its own rules.
INSTRUCTIONS = (
    "memsync is the user's long-term memory: Markdown cards in a local vault (plus read-only "
    "memories of other agents). Before answering about past decisions, conventions, projects, "
    "hosts or earlier mistakes, call memory_search, then memory_get for a whole card. Tools name a "
    "card by its numeric id. kind is one of system, project, knowledge, content, prompt, business, "
    "tool, mistake. A card that is wrong: memory_update. A fact that changed: memory_supersede "
    "(the old card stays findable with as_of). A card that should not exist: memory_delete (soft "
    "and restorable). Replies are compact text; an error names the argument to fix."
)


def compact(schema):
    """A published JSON schema without what costs bytes and tells a model nothing: pydantic's
    titles (the property name says it), the null branch of an optional argument (leaving it out
    is how it is not given), `default: null`, and a maximum no id can reach. The SDK validates
    arguments with the full model, so validation is unchanged."""
    if isinstance(schema, list):
        return [compact(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key == "maximum" and value >= mcp_tools.MAX_ID:
            continue
        if key == "properties":
            out[key] = {name: compact(prop) for name, prop in value.items()}
        else:
            out[key] = compact(value)
    branches = out.get("anyOf")
    if branches and {"type": "null"} in branches:
        rest = [b for b in branches if b != {"type": "null"}]
        del out["anyOf"]
        out = {**(rest[0] if len(rest) == 1 else {"anyOf": rest}), **out}
    return out


def lowlevel_server(server: MCPServer) -> Server | None:
    """The SDK's low-level server inside `server`: the one that serves a connection over streams
    it is given, which memsync.mcp.unreadable filters. mcp 2.x has no public way to it (its own
    in-memory Client reads this private attribute, with a TODO to make it public), so a release
    may move it: then None, and tests/test_mcp_raw.py fails saying so."""
    low = getattr(server, "_lowlevel_server", None)
    return low if isinstance(low, Server) else None


class _Server(MCPServer):
    structured = False  # True: replies also carry the result objects (`memsync mcp --structured`)

    async def run_stdio_async(self) -> None:
        """As the SDK runs stdio, with the lines it cannot read answered, not dropped
        (memsync.mcp.unreadable). The low-level server is the SDK's own, as its method uses it."""
        low = lowlevel_server(self)
        if low is None:
            log.warning("this mcp SDK keeps its low-level server elsewhere: serving with the SDK's "
                        "own stdio loop, which leaves lines it cannot read unanswered")
            await super().run_stdio_async()
            return
        async with stdio_server() as (read_stream, write_stream), \
                unreadable.answered(read_stream, write_stream) as readable:
            await low.run(readable, write_stream, low.create_initialization_options())

    async def list_tools(self):
        return [t.model_copy(update={"input_schema": compact(t.input_schema)})
                for t in await super().list_tools()]

    async def call_tool(self, name, arguments, context=None):
        # Argument validation happens inside the SDK, before our tool runs; its default error text
        # is pydantic's report. Reword it into something a model can act on.
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return error(describe_invalid(name, exc.__cause__))
            raise
        if not self.structured and isinstance(result, CallToolResult):
            result.structured_content = None
        return result


def build(cfg: Config, live: LiveIndex | None = None, structured: bool = False) -> MCPServer:
    """The server with its eight tools. Replies are the compact text only: clients hand the model
    either a reply's text or its structured content, never both (Claude Code prefers structured
    content when there is any), so a reply without it reaches every model as the same compact
    text. `structured=True` adds the result objects (the CLI's `--json`) for programs."""
    server = _Server(
        "memsync",
        instructions=INSTRUCTIONS,
        version=_version(),
        middleware=[StartAfterHandshake(live)] if live else None,
    )
    server.structured = structured
    current = CurrentConfig(cfg)
    mcp_tools.register(server, current, live)
    mcp_brief.register(server, current)  # a resource, a template and a prompt: not in tools/list
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memsync")
    except PackageNotFoundError:
        return "0"


def configure_logging() -> None:
    # Before the SDK configures logging: its basicConfig is then a no-op, and every record goes to
    # stderr. The SDK's per-request INFO lines are noise for a client's log pane.
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("memsync mcp %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("memsync").setLevel(logging.INFO)


def serve(cfg: Config, structured: bool = False) -> None:
    """Serve over stdio until the client closes stdin, or until SIGTERM/SIGINT."""
    configure_logging()
    live = LiveIndex(cfg)
    server = build(cfg, live, structured)
    stop_on_signals(live)
    try:
        server.run("stdio")
    finally:
        live.stop()


def stop_on_signals(live: LiveIndex) -> None:
    """Stop the watcher, then leave at once. A graceful unwind would wait forever: the SDK reads
    stdin on a worker thread that only returns when the client closes the pipe. Leaving mid-call is
    safe: card files are replaced atomically and index writes are single transactions."""

    def stop(signum, _frame):
        log.info("%s: stopping", signal.Signals(signum).name)
        live.stop(timeout=2.0)
        logging.shutdown()
        os._exit(0)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
