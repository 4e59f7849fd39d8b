"""`memsync mcp --http` told to stop: at any moment, it stops cleanly and says so."""

from __future__ import annotations

import signal

import anyio

from .mcp_helpers import DEADLINE
from .mcp_http_helpers import client, http_server

__all__ = ["http_server"]  # a fixture, imported for the tests below


def test_sigterm_as_soon_as_it_says_it_serves_stops_it_cleanly(http_server):
    """The line that says the server is up came before its signal handlers: a SIGTERM sent on
    reading it killed the process by the signal (exit -15), its watcher never stopped."""
    for _ in range(3):
        server = http_server()  # returns on reading "serving http://..."
        server.proc.send_signal(signal.SIGTERM)
        assert server.stop() == 0, "".join(server.log)
        assert "stopped" in "".join(server.log)


def test_a_second_ctrl_c_during_a_call_stops_at_once_and_says_so_without_tracebacks(http_server, vault):
    """A second Ctrl-C has uvicorn cancel the calls still running. Each cancelled request logged
    "Exception in ASGI application" with a CancelledError traceback, and the app's lifespan
    another; now one line says which replies never went out and where to look."""
    for n in range(6000):
        (vault / f"n{n // 500}").mkdir(exist_ok=True)
        (vault / f"n{n // 500}" / f"card {n}.md").write_text(f"note {n} about the shrike number {n}\n")
    server = http_server()

    async def main():
        with anyio.fail_after(DEADLINE):
            try:
                async with client(server.url) as session, anyio.create_task_group() as group:
                    await session.list_tools()
                    group.start_soon(session.call_tool, "memory_reindex", {"rebuild": True})
                    await anyio.sleep(0.3)  # the rebuild of 6,000 notes is under way
                    server.proc.send_signal(signal.SIGINT)
                    await anyio.sleep(0.2)
                    server.proc.send_signal(signal.SIGINT)  # the impatient second Ctrl-C
            except Exception:  # the server went away under the client, its reply unsent
                pass

    anyio.run(main)
    assert server.stop() == 0
    log = "".join(server.log)
    assert "Traceback" not in log and "CancelledError" not in log, log
    assert "stopped before 1 call(s) had their replies" in log and "memsync.mcp: stopped" in log
