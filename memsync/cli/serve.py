"""`memsync mcp`: the stdio MCP server. The SDK is imported here, inside the command, and nowhere
on the read path."""

from __future__ import annotations

from . import Context, command, main


@command(main, "mcp")
def mcp(obj: Context, as_json: bool):
    """Serve the memory tools to an agent over MCP (stdio; logs go to stderr).

    Keeps the index live while it runs: an in-process watcher unless another watcher already
    holds the vault. Point the client at the absolute path of this executable.

    \b
    Example:
      claude mcp add memsync -- "$(command -v memsync)" mcp
    """
    from .. import mcp_server

    mcp_server.serve(obj.cfg)
