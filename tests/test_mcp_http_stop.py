"""`memsync mcp --http` told to stop: at any moment, it stops cleanly and says so."""

from __future__ import annotations

import signal

from .mcp_http_helpers import http_server

__all__ = ["http_server"]  # a fixture, imported for the tests below


def test_sigterm_as_soon_as_it_says_it_serves_stops_it_cleanly(http_server):
    """The line that says the server is up came before its signal handlers: a SIGTERM sent on
    reading it killed the process by the signal (exit -15), its watcher never stopped."""
    for _ in range(3):
        server = http_server()  # returns on reading "serving http://..."
        server.proc.send_signal(signal.SIGTERM)
        assert server.stop() == 0, "".join(server.log)
        assert "stopped" in "".join(server.log)
