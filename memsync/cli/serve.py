"""`memsync mcp`: the MCP server, on stdio or Streamable HTTP. The SDK is imported here, inside the
command, and nowhere on the read path."""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource

from ..errors import BadArgument, MemsyncError
from . import Context, fail, main, warn_empty_vault

# Said when a person starts the stdio server by hand: it waits for JSON-RPC, not for typing.
ON_A_TERMINAL = (
    "memsync mcp speaks the Model Context Protocol on stdin/stdout: it is started by an MCP "
    "client, not used by hand. `memsync init` prints the set-up for Claude Code, Claude Desktop "
    "and Cursor (e.g. claude mcp add -s user memsync -- \"$(command -v memsync)\" mcp). "
    "Ctrl-C or Ctrl-D stops it."
)

# Any user of the machine can read another's command line (ps, /proc/PID/cmdline); the
# environment of a process only its owner can.
TOKEN_ON_COMMAND_LINE = (
    "memsync mcp: warning: a --token on the command line can be read by every user of this "
    "machine (ps); set MEMSYNC_MCP_TOKEN in the server's environment instead"
)


@main.command("mcp")
@click.option("--http", "bind", metavar="[HOST:]PORT",
              help="Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults to 127.0.0.1).")
@click.option("--allow-remote", is_flag=True,
              help="Allow --http on an address other machines can reach (needs --token).")
@click.option("--token", envvar="MEMSYNC_MCP_TOKEN", metavar="TOKEN",
              help="With --http: require 'Authorization: Bearer TOKEN' on every request (env MEMSYNC_MCP_TOKEN).")
@click.option("--structured", is_flag=True,
              help="Replies also carry structured content (the objects of the CLI's --json), for "
                   "programs; models read the compact text, which every reply has.")
@click.option("--text-only", "text_only", is_flag=True, hidden=True)  # the default now; kept so old set-ups start
@click.pass_obj
def mcp(obj: Context, bind, allow_remote, token, structured, text_only):
    """Serve the memory tools to an agent over MCP (stdio by default; logs go to stderr).

    Keeps the index live while it runs: an in-process watcher unless another watcher already
    holds the vault. Point the client at the absolute path of this executable. With --http, one
    process serves many clients (one watcher for all of them); SIGTERM stops it cleanly.

    \b
    Example:
      claude mcp add memsync -- "$(command -v memsync)" mcp
      memsync mcp --http 8765        # then connect clients to http://127.0.0.1:8765/mcp
    """
    if text_only:
        click.echo("memsync mcp: --text-only is the default now and will go; remove it from the "
                   "client's set-up", err=True)
        if structured:
            raise click.UsageError("--text-only and --structured contradict each other; keep one")
    token_source = click.get_current_context().get_parameter_source("token")
    from_env = token_source == ParameterSource.ENVIRONMENT
    if bind is None and (allow_remote or (token and not from_env)):  # the env's token is for --http
        fail(BadArgument("--allow-remote and --token only go with --http [HOST:]PORT"), as_json=False)
    try:
        cfg = obj.cfg
        if bind is not None:
            from memsync.mcp import http as mcp_http

            host, _port = mcp_http.parse_bind(bind)
            mcp_http.check_bind(host, allow_remote, token)
    except MemsyncError as err:
        fail(err, as_json=False)  # before serving, stderr and an exit code are all we have
    warn_empty_vault(cfg)
    if bind is None and sys.stdin.isatty():
        click.echo(ON_A_TERMINAL, err=True)
    if bind is None:
        from memsync.mcp import server as mcp_server

        mcp_server.serve(cfg, structured=structured)
        return
    if token and token_source == ParameterSource.COMMANDLINE:
        click.echo(TOKEN_ON_COMMAND_LINE, err=True)
    try:
        mcp_http.serve_http(cfg, bind, allow_remote, token, structured=structured)
    except MemsyncError as err:
        fail(err, as_json=False)
