"""`memsync mcp --http --token`: where the token is read from, and who else can read it there."""

from __future__ import annotations

from .mcp_http_helpers import http_server

__all__ = ["http_server"]  # a fixture, imported for the tests below

SAYS = "set MEMSYNC_MCP_TOKEN in the server's environment instead"


def test_a_token_on_the_command_line_is_warned_about(http_server):
    """Every user of the machine can read a process's command line (ps); a token there was
    taken without a word, while its environment is the owner's alone."""
    server = http_server("--token", "s3cret-token")
    log = "".join(server.log)
    assert SAYS in log and "s3cret" not in log
    assert log.index(SAYS) < log.index("serving http://")  # said before anyone connects
    assert server.stop() == 0


def test_a_token_from_the_environment_is_not_warned_about(http_server, monkeypatch):
    monkeypatch.setenv("MEMSYNC_MCP_TOKEN", "s3cret-token")
    server = http_server()
    assert SAYS not in "".join(server.log) and "bearer token required" in "".join(server.log)
    assert server.stop() == 0
