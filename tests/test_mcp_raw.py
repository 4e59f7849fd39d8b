"""`memsync mcp` spoken to in raw JSON-RPC lines, without the SDK: what any client sees on stdout."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from .conftest import MEMSYNC_BIN, write_card

DEADLINE = 30.0
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"},
    },
}


class RawServer:
    """A `memsync mcp` subprocess; every stdout line is collected for later inspection."""

    def __init__(self, *options: str, command: list[str] | None = None):
        self.proc = subprocess.Popen(
            command or [MEMSYNC_BIN, "mcp", *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=os.environ.copy(),
        )
        self.lines: list[bytes] = []
        self._replies: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            self._replies.put(line)
        self._replies.put(None)

    def send(self, message) -> None:
        raw = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(raw.encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id) -> dict:
        """The response to `request_id`, waiting at most DEADLINE seconds."""
        return json.loads(self.reply_line(request_id))

    def reply_line(self, request_id) -> bytes:
        """The response to `request_id` as the server wrote it."""
        end = time.monotonic() + DEADLINE
        while (left := end - time.monotonic()) > 0:
            try:
                line = self._replies.get(timeout=left)
            except queue.Empty:
                break
            assert line is not None, "the server closed stdout: " + self.stderr()
            if json.loads(line).get("id") == request_id:
                return line.rstrip(b"\n")
        raise AssertionError(f"no reply to {request_id} within {DEADLINE}s")

    def close(self) -> int:
        self.proc.stdin.close()
        try:
            return self.proc.wait(DEADLINE)
        finally:
            self._reader.join(DEADLINE)

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self):
        """End the server if it still runs, and close its pipes (once the reader saw stdout end)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(DEADLINE)
        self._reader.join(DEADLINE)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if not stream.closed:
                stream.close()


@pytest.fixture
def server():
    srv = RawServer()
    yield srv
    srv.kill()


def call(request_id: int, tool: str, arguments) -> dict:
    return {
        "jsonrpc": "2.0", "id": request_id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def assert_all_jsonrpc(lines: list[bytes]) -> None:
    assert lines, "nothing on stdout"
    for line in lines:
        message = json.loads(line)  # a banner or a stray print would fail here
        assert message["jsonrpc"] == "2.0", line
        assert ("id" in message) == ("result" in message or "error" in message), line


def test_stdout_carries_only_jsonrpc_and_bad_lines_do_not_kill_it(server):
    server.send(INITIALIZE)
    init = server.reply(1)
    assert init["result"]["serverInfo"]["name"] == "memsync"
    assert init["result"]["instructions"]
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert len(server.reply(2)["result"]["tools"]) == 8

    for garbage in ("this is not json", "{", "[1, 2]", '{"jsonrpc": "2.0", "id": 9}', "\x00\x01"):
        server.send(garbage)
    server.send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
    assert server.reply(3)["error"]["code"] == -32601
    server.send(call(4, "memory_get", {"id": "not a number"}))
    bad = server.reply(4)["result"]
    assert bad["isError"] is True and "id" in bad["content"][0]["text"]
    server.send({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert server.reply(5)["result"] == {}

    assert server.close() == 0
    assert_all_jsonrpc(server.lines)
    assert "Traceback" not in server.stderr()


def test_initialize_is_answered_before_any_indexing(server, vault, home):
    for n in range(5):
        write_card(vault, f"03-Knowledge/card-{n}.md", f"card {n}", f"the lighthouse keeper number {n}")
    server.send(INITIALIZE)
    server.reply(1)
    # Indexing starts only once the handshake is over: nothing has touched the index yet.
    assert not (home / "memsync.db").exists()

    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    end = time.monotonic() + DEADLINE
    request_id = 10
    while True:
        request_id += 1
        server.send(call(request_id, "memory_search", {"query": "lighthouse"}))
        head = server.reply(request_id)["result"]["content"][0]["text"].split("\n")[0]
        if head == "5 hits (matched: all)" or time.monotonic() > end:
            break
        time.sleep(0.05)
    assert head == "5 hits (matched: all)"
    assert server.close() == 0
    assert_all_jsonrpc(server.lines)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_cleanly(server, signum):
    server.send(INITIALIZE)
    server.reply(1)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    server.reply(2)
    server.proc.send_signal(signum)
    assert server.proc.wait(DEADLINE) == 0
    assert "Traceback" not in server.stderr()


def test_a_broken_config_stops_it_before_serving_with_a_message_on_stderr(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text("{ not json", encoding="utf-8")
    proc = subprocess.run(
        [MEMSYNC_BIN, "mcp"], input=json.dumps(INITIALIZE) + "\n", capture_output=True, text=True,
        timeout=DEADLINE, env=os.environ.copy(),
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "config.json" in proc.stderr and "Traceback" not in proc.stderr


def handshake(server) -> None:
    server.send(INITIALIZE)
    server.reply(1)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def full_page(server, first_id: int, query: str, limit: int) -> bytes:
    """The reply line to a search, once the watcher has indexed enough for `limit` hits."""
    end = time.monotonic() + DEADLINE
    for request_id in range(first_id, first_id + 10_000):
        server.send(call(request_id, "memory_search", {"query": query, "limit": limit}))
        line = server.reply_line(request_id)
        if json.loads(line)["result"]["content"][0]["text"].startswith(f"{limit}+ hits") or time.monotonic() > end:
            return line
        time.sleep(0.05)
    raise AssertionError("unreachable")


def test_a_ten_hit_search_is_under_2500_bytes_as_sent(vault):
    """The whole JSON-RPC message, as written on stdout, for the bench's vault (issue 12's budget):
    no structured content by default, and nothing escaped, so CJK costs its UTF-8 bytes."""
    for n in range(12):
        write_card(vault, f"03-Knowledge/deploy-{n}.md", f"nginx 部署 deploy {n}",
                   f"The nginx deploy for service {n} runs from the ops-{n:02d} host; its config lives in "
                   f"/etc/nginx/service-{n}.conf and the rollback notes sit beside it. Ask the platform "
                   f"team before changing the deploy schedule for service {n}, 部署前先问平台组。")
    for options, most in (((), 2500), (("--structured",), None)):
        server = RawServer(*options)
        try:
            handshake(server)
            line = full_page(server, 10, "deploy", 10)
            result = json.loads(line)["result"]
            if most:
                assert "structuredContent" not in result and len(line) <= most, len(line)
                assert "部署".encode() in line and b"\\u" not in line
            else:
                assert len(result["structuredContent"]["hits"]) == 10 and len(line) > 2500
            assert server.close() == 0
        finally:
            server.kill()


def test_the_old_text_only_flag_still_starts_the_server_and_says_to_drop_it(vault):
    """`--text-only` chose what is now the default; a client set up with it keeps working."""
    server = RawServer("--text-only")
    try:
        handshake(server)
        assert server.close() == 0
        assert "--text-only is the default now" in server.stderr()
    finally:
        server.kill()
    both = subprocess.run([MEMSYNC_BIN, "mcp", "--text-only", "--structured"], capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert both.returncode == 2 and b"contradict" in both.stderr and both.stdout == b""


def test_a_request_the_transport_cannot_read_is_answered_not_left_waiting(server, vault):
    """The SDK drops a line its strict parser refuses; memsync answers it (memsync.mcp.unreadable),
    under the request's own id when a lenient reading finds one, and keeps serving."""
    write_card(vault, "notes/heron.md", "heron", body="The grey heron waits at the pond at dawn.")
    server.send(INITIALIZE)
    server.reply(1)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    # half of an emoji, as a client that cut a string between its UTF-16 halves sends it
    server.send(call(2, "memory_search", {"query": "heron \ud83d"}))
    cut = server.reply(2)["error"]
    assert cut["code"] == -32602 and "lone UTF-16 surrogate" in cut["message"]
    server.send(call(3, "memory_capture", {"title": "t\udcff", "body": "a body long enough to be a card", "kind": "tool"}))
    assert server.reply(3)["error"]["code"] == -32602
    server.send({"id": 4, "method": "tools/list"})  # no "jsonrpc": not a JSON-RPC request
    assert server.reply(4)["error"]["code"] == -32600
    server.send("not json at all")
    assert server.reply(None)["error"]["code"] == -32700
    server.send(call(5, "memory_search", {"query": "heron"}))
    assert "heron" in server.reply(5)["result"]["content"][0]["text"]
    assert not list(vault.rglob("t*.md"))  # the refused capture wrote nothing
    assert server.close() == 0
    assert_all_jsonrpc(server.lines)
    assert "Traceback" not in server.stderr()


def test_the_sdks_low_level_server_is_where_memsync_reaches_for_it():
    """mcp 2.x has no public way to its low-level server, which memsync runs over the filtered
    stdio stream; memsync reads a private attribute, as the SDK's own Client does. An SDK release
    that moves it fails here, not silently in the field."""
    from mcp.server.lowlevel import Server

    from memsync import config
    from memsync.mcp import server as mcp_server

    built = mcp_server.build(config.load())
    assert isinstance(mcp_server.lowlevel_server(built), Server), (
        "this mcp SDK no longer keeps MCPServer._lowlevel_server: memsync.mcp.server.lowlevel_server "
        "must reach the low-level server another way (a public accessor, if the SDK added one); "
        "until then `memsync mcp` serves with the SDK's own stdio loop, which leaves a request it "
        "cannot read (a lone surrogate) unanswered and the agent waiting")


# `memsync mcp` as if the SDK had moved its low-level server
WITHOUT_LOWLEVEL = """
import sys
from memsync.cli import main
from memsync.mcp import server
server.lowlevel_server = lambda built: None
sys.exit(main(["mcp"]))
"""


def test_without_the_low_level_server_it_still_serves_and_says_what_it_lost(vault):
    write_card(vault, "notes/heron.md", "heron", body="The grey heron waits at the pond at dawn.")
    server = RawServer(command=[sys.executable, "-c", WITHOUT_LOWLEVEL])
    try:
        handshake(server)
        server.send(call(2, "memory_search", {"query": "heron \ud83d"}))  # the SDK drops it
        server.send(call(3, "memory_search", {"query": "heron"}))
        assert "heron" in server.reply(3)["result"]["content"][0]["text"]
        assert all(json.loads(line).get("id") != 2 for line in server.lines)
        assert server.close() == 0
        assert "serving with the SDK's own stdio loop" in server.stderr()
    finally:
        server.kill()
