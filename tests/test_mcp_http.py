"""`memsync mcp --http`: the same tools over Streamable HTTP, through the SDK's HTTP client.
Only loopback addresses are ever bound here."""

from __future__ import annotations

import signal

import anyio
import httpx2
import pytest

from memsync import config
from memsync.errors import BadArgument
from memsync.mcp.http import check_bind, is_loopback, parse_bind
from memsync.store.index import Index

from .mcp_helpers import DEADLINE, eventually, text_of
from .mcp_http_helpers import client, http_server

__all__ = ["http_server"]  # a fixture, imported for the tests below

WRITES = 12


def test_two_clients_share_one_server_and_one_watcher_and_sigterm_loses_nothing(http_server, vault):
    server = http_server("--structured")
    written: list[dict] = []

    async def main():
        with anyio.fail_after(DEADLINE):
            async with client(server.url) as writer, client(server.url) as reader:
                async def write_all():
                    for n in range(WRITES):
                        result = await writer.call_tool("memory_capture", {
                            "title": f"heron sighting {n}", "body": f"a grey heron seen at the pond, number {n}"})
                        assert not result.is_error, text_of(result)
                        written.append(result.structured_content)

                async def read_until_all_seen():
                    async def all_seen():
                        found = await reader.call_tool("memory_search", {"query": "heron", "limit": 20})
                        assert not found.is_error, text_of(found)
                        return len(found.structured_content["hits"]) == WRITES

                    await eventually(all_seen, deadline=DEADLINE / 2)

                async with anyio.create_task_group() as group:
                    group.start_soon(write_all)
                    group.start_soon(read_until_all_seen)
                one = (await writer.call_tool("memory_stats", {})).structured_content["watcher"]
                other = (await reader.call_tool("memory_stats", {})).structured_content["watcher"]
                assert one["live"] and one["pid"] == other["pid"] == server.proc.pid

    anyio.run(main)
    assert server.stop() == 0, "".join(server.log)
    assert "Traceback" not in "".join(server.log)
    index = Index(config.load().db.path)
    try:
        for result in written:  # every reply's card is on disk and in the index, with no reindex
            assert (vault / result["path"]).is_file()
            assert index.card(result["id"])["path"] == result["path"]
    finally:
        index.close()
    assert len(written) == WRITES


def test_a_token_is_required_on_every_request_when_given(http_server, monkeypatch):
    monkeypatch.setenv("MEMSYNC_MCP_TOKEN", "s3cret-token")
    server = http_server()  # the token comes from the environment
    assert "bearer token required" in "".join(server.log)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
        reply = httpx2.post(server.url, json=ping, headers=headers, timeout=DEADLINE)
        assert reply.status_code == 401, headers
        assert "bearer token" in reply.text and "s3cret" not in reply.text

    async def main():
        with anyio.fail_after(DEADLINE):
            async with client(server.url, token="s3cret-token") as session:
                result = await session.call_tool("memory_stats", {})
                assert not result.is_error and result.structured_content is None  # the default: text only
                assert "cards: 0" in text_of(result).splitlines()

    anyio.run(main)
    assert server.stop() == 0


def test_the_bearer_scheme_is_case_insensitive(http_server):
    server = http_server("--token", "s3cret-token")  # RFC 7235: the scheme's case does not count

    async def main():
        for scheme in ("bearer", "BEARER"):
            with anyio.fail_after(DEADLINE):
                async with client(server.url, token="s3cret-token", scheme=scheme) as session:
                    assert not (await session.call_tool("memory_stats", {})).is_error

    anyio.run(main)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for wrong in ("Basic s3cret-token", "bearer s3cret-tokenx", "bearers3cret-token"):
        assert httpx2.post(server.url, json=ping, headers={"Authorization": wrong},
                           timeout=DEADLINE).status_code == 401, wrong
    assert server.stop() == 0


@pytest.mark.parametrize("bind", [[], ["--http", "127.0.0.2:0"], ["--http", "[0:0:0:0:0:0:0:1]:0"],
                                  ["--http", "LOCALHOST:0"], ["--http", "127.1:0"],
                                  ["--http", "localhost.:0"]])
def test_on_loopback_a_request_naming_another_host_is_refused(http_server, bind):
    """DNS rebinding: a web page's request reaching this machine by another name. The SDK guards
    127.0.0.1, localhost and ::1 as written; every other loopback bind once served any site."""
    server = http_server(*bind)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    reply = httpx2.post(server.url, json=ping, headers={"Host": "evil.example", **accept}, timeout=DEADLINE)
    assert reply.status_code == 421
    reply = httpx2.post(server.url, json=ping, headers={"Origin": "http://evil.example", **accept}, timeout=DEADLINE)
    assert reply.status_code == 403
    reply = httpx2.post(server.url, json=ping, headers=accept, timeout=DEADLINE)  # its own name
    assert reply.status_code not in (403, 421)
    assert server.stop() == 0


@pytest.mark.parametrize("args, says", [
    (["--http", "0.0.0.0:0"], "loopback"),
    (["--http", "0.0.0.0:0", "--allow-remote"], "needs a token"),
    (["--token", "t"], "only go with --http"),
    (["--allow-remote"], "only go with --http"),
    (["--http", "not-a-port"], "[HOST:]PORT"),
    (["--http", "myhost.example:0"], "is a name"),  # not "can be reached": memsync cannot know
    # a blank token can never be sent (HTTP trims a header's blanks): refused, on any bind
    (["--http", "0.0.0.0:0", "--allow-remote", "--token", "  "], "the token is blank"),
    (["--http", "127.0.0.1:0", "--token", " "], "the token is blank"),
    # clients send headers in ASCII (the SDK's refuses the rest), Node and browsers as Latin-1:
    # a token beyond ASCII, or with a control character, was taken and then never matched
    (["--http", "127.0.0.1:0", "--token", "pässwort"], "clients cannot send"),
    (["--http", "127.0.0.1:0", "--token", "tab\there"], "clients cannot send"),
])
def test_a_bind_others_can_reach_needs_allow_remote_and_a_token(args, says, run_cli):
    code, out, err = run_cli("mcp", *args, timeout=DEADLINE)
    assert code == 2 and out == "" and says in err and "Traceback" not in err


def test_loopback_is_the_default_and_remote_needs_both_flags():
    assert parse_bind("8765") == ("127.0.0.1", 8765)
    assert parse_bind("[::1]:0") == ("::1", 0)
    assert parse_bind("localhost:80") == ("localhost", 80)
    # names have no case, and the system reads IPv4 short forms: bound and checked in full
    assert parse_bind("LOCALHOST:80") == ("localhost", 80)
    # the fully qualified name is the same name; a name of two dots, or the root alone, is none
    assert parse_bind("localhost.:80") == ("localhost", 80)
    assert parse_bind("127.0.0.1.:80") == ("127.0.0.1", 80)
    assert parse_bind("localhost..:80") == ("localhost.", 80)
    assert parse_bind(".:80") == (".", 80)
    assert not any(is_loopback(h) for h in ("localhost.", "."))
    for short in ("127.1", "0x7f.1", "2130706433"):
        assert parse_bind(f"{short}:80") == ("127.0.0.1", 80)
    assert parse_bind("10.1:80") == ("10.0.0.1", 80)
    assert parse_bind("0:80") == ("0.0.0.0", 80)  # all addresses: still needs --allow-remote
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.5", "::", "example.org"))
    check_bind("192.168.1.5", allow_remote=True, token="t")  # allowed: both given (nothing is bound here)
    for allow, token in ((False, "t"), (True, None), (True, "")):
        with pytest.raises(BadArgument):
            check_bind("192.168.1.5", allow_remote=allow, token=token)
    with pytest.raises(BadArgument):
        parse_bind("127.0.0.1:99999")
    for unbracketed in ("::1", "::1:8765"):
        with pytest.raises(BadArgument, match=r"in brackets, with the port: \[::1\]:8765"):
            parse_bind(unbracketed)


def test_sigterm_while_a_client_writes_keeps_every_write_it_answered(http_server, vault):
    server = http_server("--structured")
    answered: list[dict] = []

    async def main():
        with anyio.fail_after(DEADLINE):
            try:
                async with client(server.url) as writer:
                    for n in range(200):  # bounded: the server stops long before
                        if n == 5:
                            server.proc.send_signal(signal.SIGTERM)  # mid-stream, a write may be running
                        result = await writer.call_tool("memory_capture", {
                            "title": f"egret {n}", "body": f"a little egret wading in the shallows, number {n}"})
                        if result.is_error:
                            break
                        answered.append(result.structured_content)
            except Exception:  # the server went away under the client: expected once it stops
                pass

    anyio.run(main)
    assert server.stop() == 0, "".join(server.log)
    assert len(answered) >= 5 and "Traceback" not in "".join(server.log)
    index = Index(config.load().db.path)
    try:
        for result in answered:  # every write that got its reply survived the shutdown
            assert (vault / result["path"]).is_file()
            assert index.card(result["id"])["path"] == result["path"]
    finally:
        index.close()


def test_a_token_in_the_environment_does_not_stop_the_stdio_server(run_cli, monkeypatch):
    """MEMSYNC_MCP_TOKEN is for --http; exported in a shell, it once kept every stdio client's
    server from starting."""
    monkeypatch.setenv("MEMSYNC_MCP_TOKEN", "abc")
    code, _out, err = run_cli("mcp", stdin="", timeout=DEADLINE)  # stdin at its end: it stops
    assert code == 0 and "only go with --http" not in err


def test_sigterm_during_a_call_still_sends_its_reply(http_server, vault):
    """The call in progress when the server is told to stop finishes and its reply arrives: the
    event streams used to be closed at once, the work done and the client never told."""
    for n in range(6000):
        (vault / f"n{n // 500}" ).mkdir(exist_ok=True)
        (vault / f"n{n // 500}" / f"card {n}.md").write_text(f"note {n} about the shrike number {n}\n")
    server = http_server()
    got: dict = {}

    async def main():
        with anyio.fail_after(DEADLINE):
            try:
                async with client(server.url) as session, anyio.create_task_group() as group:
                    await session.list_tools()  # the SDK's client lists them once to check replies
                    async def call():
                        got["result"] = await session.call_tool("memory_reindex", {"rebuild": True})
                    group.start_soon(call)
                    await anyio.sleep(0.3)  # the rebuild of 6,000 notes is under way
                    server.proc.send_signal(signal.SIGTERM)
            except Exception:  # closing the session once the server has gone
                if "result" not in got:
                    raise

    anyio.run(main)
    assert server.stop() == 0, "".join(server.log)
    assert not got["result"].is_error and "added: 6000" in text_of(got["result"])


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "0"}}}


@pytest.mark.parametrize("name", ["LOCALHOST", "LocalHost", "127.0.0.1"])
def test_a_loopback_host_is_accepted_in_any_case_and_without_a_port(http_server, name):
    """Host names have no case: `Host: LOCALHOST:PORT` once got 421 from the rebinding guard,
    which compared the header as written; a name alone (a server on port 80) did too."""
    server = http_server()
    port = server.url.split(":")[2].split("/")[0]
    accept = {"Accept": "application/json, text/event-stream"}
    for host in (f"{name}:{port}", name):
        for origin in ({}, {"Origin": f"http://{host}"}):
            reply = httpx2.post(server.url, json=INITIALIZE, headers={"Host": host, **origin, **accept},
                                timeout=DEADLINE)
            assert reply.status_code == 200, (host, origin, reply.status_code, reply.text)
            assert '"memsync"' in reply.text  # the server's own initialize reply
    for evil in ("EVIL.example", f"Evil.Example:{port}", f"LOCALHOST.evil.example:{port}"):
        reply = httpx2.post(server.url, json=INITIALIZE, headers={"Host": evil, **accept}, timeout=DEADLINE)
        assert reply.status_code == 421, evil
    assert server.stop() == 0


@pytest.mark.parametrize("name", ["localhost.", "LocalHost.", "127.0.0.1."])
def test_a_loopback_name_with_its_trailing_dot_is_the_same_name(http_server, name):
    """`localhost.` is the fully qualified form of localhost (a browser sends it as typed), once
    refused with 421; a name that only starts or ends like it stays refused."""
    server = http_server()
    port = server.url.split(":")[2].split("/")[0]
    accept = {"Accept": "application/json, text/event-stream"}
    for host in (f"{name}:{port}", name):
        for origin in ({}, {"Origin": f"http://{host}"}, {"Origin": f"http://localhost.:{port}"}):
            reply = httpx2.post(server.url, json=INITIALIZE, headers={"Host": host, **origin, **accept},
                                timeout=DEADLINE)
            assert reply.status_code == 200, (host, origin, reply.status_code, reply.text)
            assert '"memsync"' in reply.text
    for evil in ("evil.example.", f"evil.example.:{port}", f"localhost.evil.example:{port}",
                 f"localhost.evil.example.:{port}", f"localhost..:{port}", f".:{port}", "."):
        reply = httpx2.post(server.url, json=INITIALIZE, headers={"Host": evil, **accept}, timeout=DEADLINE)
        assert reply.status_code == 421, evil
    for evil in (f"http://evil.example.:{port}", f"http://localhost.evil.example.:{port}",
                 "http://localhost..", "null"):
        reply = httpx2.post(server.url, json=INITIALIZE, headers={"Origin": evil, **accept}, timeout=DEADLINE)
        assert reply.status_code == 403, evil
    assert server.stop() == 0
