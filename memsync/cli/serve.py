"""`memsync mcp`: the stdio MCP server. The SDK is imported here, inside the command, and nowhere
on the read path."""

from __future__ import annotations

import click

from ..errors import MemsyncError
from . import Context, fail, main


@main.command("mcp")
@click.pass_obj
def mcp(obj: Context):
    """Serve the memory tools to an agent over MCP (stdio; logs go to stderr).

    Keeps the index live while it runs: an in-process watcher unless another watcher already
    holds the vault. Point the client at the absolute path of this executable.

    \b
    Example:
      claude mcp add memsync -- "$(command -v memsync)" mcp
    """
    from .. import mcp_server

    try:
        cfg = obj.cfg
    except MemsyncError as err:
        fail(err, as_json=False)  # before serving, stderr and an exit code are all we have
    mcp_server.serve(cfg)
