"""`memsync mcp --http [HOST:]PORT`: the same server over the SDK's Streamable HTTP transport.

One process serves every client that connects, with one watcher for all of them. It listens on
127.0.0.1 unless told otherwise, and a bind that other machines can reach needs `--allow-remote`
and a bearer token: memory holds what the user would not put on a network by accident. The
transport (Starlette app, uvicorn) comes with the SDK; nothing here is a new dependency.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from memsync.config import Config
from memsync.errors import BadArgument

log = logging.getLogger("memsync.mcp")

DEFAULT_HOST = "127.0.0.1"
PATH = "/mcp"
TOKEN_ENV = "MEMSYNC_MCP_TOKEN"
GRACE_SECONDS = 5  # how long a SIGTERM waits for open streams before they are closed


def parse_bind(text: str) -> tuple[str, int]:
    """`8765`, `127.0.0.1:8765`, `[::1]:8765` -> (host, port); bad input says what to write."""
    if text.count(":") > 1 and not text.startswith("["):  # ::1 or ::1:8765 cannot be told apart
        raise BadArgument(f"--http: write an IPv6 address in brackets, with the port: [::1]:8765; got {text!r}")
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = DEFAULT_HOST, text
    host = canonical_host(host.strip("[]") or DEFAULT_HOST)
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise BadArgument(f"--http wants [HOST:]PORT with a port from 0 to 65535, e.g. 8765 or "
                          f"127.0.0.1:8765; got {text!r}")
    return host, int(port)


def canonical_host(host: str) -> str:
    """The host as it is bound and checked: names in lower case (LOCALHOST is localhost) and
    without the root's trailing dot (`localhost.` is the fully qualified form of localhost), and
    an IPv4 address in one of the short forms the system also reads (127.1, 0x7f.1, 2130706433)
    written out in full, so the loopback check and the rebinding guard see the address the
    socket gets."""
    host = _without_root_dot(host.lower())
    if _IPV4_SHORT.fullmatch(host):
        with suppress(OSError):  # not an address after all (999.1): a name, left as it is
            return socket.inet_ntoa(socket.inet_aton(host))
    return host


_IPV4_SHORT = re.compile(r"[0-9a-fx.]+")  # inet_aton's alphabet; it reads past a blank, so no blanks


def _without_root_dot(name: str) -> str:
    """One trailing dot off (`localhost.` -> localhost): the same name in DNS. Only one: a name
    ending in two (`localhost..`) is no name at all, and stays as written to be refused, as does
    the root alone (`.`, which would be left empty: every address, to a bind)."""
    return name[:-1] if name.endswith(".") and name != "." else name


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def check_bind(host: str, allow_remote: bool, token: str | None) -> None:
    """A bind other machines can reach only with --allow-remote and a token; a token given must
    be one a client can send: HTTP trims a header's blanks, so a blank token never matches."""
    if token is not None and not token.strip():
        raise BadArgument(f"the token is blank (--token or {TOKEN_ENV}); give a secret clients "
                          "will send as 'Authorization: Bearer <token>', e.g. the output of "
                          "`openssl rand -hex 32`")
    if token is not None and not _sendable(token):
        raise BadArgument(f"the token (--token or {TOKEN_ENV}) holds a character clients cannot "
                          "send in a header (HTTP clients send ASCII: the Python SDK refuses "
                          "anything else, browsers and Node send it as Latin-1); use letters, "
                          "digits and punctuation, e.g. the output of `openssl rand -hex 32`")
    if is_loopback(host):
        return
    if not allow_remote and not _is_address(host):
        raise BadArgument(f"{host} is a name, and memsync cannot know that it resolves only to "
                          "this machine; memsync mcp --http binds to a loopback address "
                          "(127.0.0.1, ::1, localhost) unless you add --allow-remote and a token "
                          f"(--token or {TOKEN_ENV})")
    if not allow_remote:
        raise BadArgument(f"{host} can be reached from other machines; memsync mcp --http binds "
                          f"to a loopback address (127.0.0.1, ::1) unless you add --allow-remote "
                          f"and a token (--token or {TOKEN_ENV})")
    if not token:
        raise BadArgument(f"--allow-remote needs a token: pass --token or set {TOKEN_ENV}; "
                          "clients then send it as 'Authorization: Bearer <token>'")


def _sendable(token: str) -> bool:
    """Printable ASCII (a blank inside is sent as it is): what every client can put in a header."""
    return all(" " <= char <= "~" for char in token)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def rebinding_guard(host: str):
    """On a loopback bind, requests must name a loopback host and come from no other origin: a
    web page the browser was led to through a name that resolves to this machine (DNS
    rebinding) is refused. The SDK does so by itself only for 127.0.0.1, localhost and ::1 as
    written; 127.0.0.2 or [0:0:0:0:0:0:0:1] served any site. Elsewhere the token guards."""
    from mcp.server.transport_security import TransportSecuritySettings

    if not is_loopback(host):
        return None
    named = list(dict.fromkeys([f"[{host}]" if ":" in host else host, "127.0.0.1", "localhost", "[::1]"]))
    # A name alone too: a client of a server on port 80 leaves the port out (`Host: localhost`).
    hosts = [*named, *(f"{name}:*" for name in named)]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[f"http://{h}" for h in hosts])


def plain_host(value: bytes) -> bytes:
    """A Host header (`name[:port]`) as canonical_host writes its name: lower case, no trailing
    dot, the port kept."""
    value = value.lower()
    if value.startswith(b"["):  # an IPv6 address has no dot to drop
        return value
    name, colon, port = value.rpartition(b":") if b":" in value else (value, b"", b"")
    return _without_root_dot(name.decode("latin-1")).encode("latin-1") + colon + port


def plain_origin(value: bytes) -> bytes:
    """An Origin header (`scheme://host[:port]`, or `null`) with its host made plain."""
    scheme, sep, host = value.partition(b"://")
    return scheme.lower() + sep + plain_host(host) if sep else value.lower()


class PlainHost:
    """ASGI middleware: the Host and Origin headers made plain before the rebinding guard reads
    them, as memsync reads a bind. The SDK's guard compares them as written, so a loopback name
    in another form got 421: `Host: LOCALHOST:8765` (names have no case), `Host: localhost.:8765`
    (the fully qualified name, which a browser sends as typed). Only the form changes: a name
    the guard does not allow (`localhost.evil.example`, `evil.example.`) stays refused."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            plain = {b"host": plain_host, b"origin": plain_origin}
            headers = [(name, plain[name](value) if name in plain else value)
                       for name, value in scope.get("headers") or []]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)


class Calls:
    """ASGI middleware counting the POSTs in progress: the tool calls whose replies are still to
    come (a client's long-lived GET stream is no call)."""

    def __init__(self, app):
        self.app = app
        self.running = 0
        self.cut_off = 0  # cancelled by a forced stop, their replies never sent

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        self.running += 1
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            self.cut_off += 1
            raise
        finally:
            self.running -= 1


def _drain_after_calls(calls: Calls) -> None:
    """On a thread, once the server is told to stop: wait for the calls in progress (at most
    GRACE_SECONDS), then close the event streams. sse_starlette closes every stream at once by
    default, which cut off replies on their way: the card was written, the client never told."""
    from sse_starlette.sse import AppStatus

    deadline = time.monotonic() + GRACE_SECONDS
    while calls.running and time.monotonic() < deadline:
        time.sleep(0.05)
    AppStatus.should_exit = True


def bearer(header: bytes) -> bytes | None:
    """The credentials of an `Authorization: Bearer <token>` header; the scheme's case does not
    count (RFC 7235: `bearer` and `BEARER` are Bearer). None for another scheme or none."""
    scheme, _, credentials = header.strip().partition(b" ")
    return credentials.strip() if scheme.lower() == b"bearer" else None


class RequireToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`, else 401."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = token.strip().encode()  # as it arrives: HTTP trims a header's blanks

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = bearer(dict(scope.get("headers") or []).get(b"authorization", b""))
            if given is None or not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"www-authenticate", b'Bearer realm="memsync"')]})
                await send({"type": "http.response.body",
                            "body": b"missing or wrong bearer token (Authorization: Bearer <token>)\n"})
                return
        await self.app(scope, receive, send)


def serve_http(cfg: Config, bind: str, allow_remote: bool = False, token: str | None = None,
               structured: bool = False) -> None:
    """Serve until SIGTERM/SIGINT: then stop taking requests, let running calls finish (a write
    is on disk and in the index before its reply), stop the watcher, exit 0."""
    import uvicorn

    from memsync.mcp import cutoff
    from memsync.mcp.live import LiveIndex
    from memsync.mcp.server import build, configure_logging

    host, port = parse_bind(bind)
    check_bind(host, allow_remote, token)
    configure_logging()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    except OSError as exc:
        raise BadArgument(f"cannot listen on {host}:{port}: {exc.strerror}; pick another port") from None
    live = LiveIndex(cfg)
    app = build(cfg, live, structured).streamable_http_app(
        streamable_http_path=PATH, host=host, transport_security=rebinding_guard(host))
    calls = Calls(cutoff.CancelledLifespan(PlainHost(app)))
    served: Callable[..., Any] = calls  # an ASGI app
    if token:
        served = RequireToken(calls, token)
    from sse_starlette.sse import AppStatus

    AppStatus.disable_automatic_graceful_drain()  # the streams close after the calls (_drain_after_calls)

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:  # SIGTERM/SIGINT while serving
            if not self.should_exit:
                threading.Thread(target=_drain_after_calls, args=(calls,), name="memsync-drain",
                                 daemon=True).start()
            super().handle_exit(sig, frame)

    server = Server(uvicorn.Config(served, log_level="warning", timeout_graceful_shutdown=GRACE_SECONDS,
                                   lifespan="on"))
    # uvicorn turns SIGTERM/SIGINT into a graceful shutdown, then puts back the handlers it found
    # and raises the signal again: ours lets the process finish below (watcher stopped, exit 0)
    # instead of dying by the signal's default action. In place before the line that says the
    # server is up: a SIGTERM sent on reading it killed the process by that default action.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda _signum, _frame: setattr(server, "should_exit", True))
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if family == socket.AF_INET6 else bound_host
    print(f"memsync mcp: serving http://{shown}:{bound_port}{PATH}"
          f"{' (bearer token required)' if token else ''}", file=sys.stderr, flush=True)
    cutoff.quiet_cancels(lambda: server.should_exit)
    live.start()  # one watcher for every client, from the start
    try:
        server.run(sockets=[sock])
    finally:
        cutoff.report(calls.cut_off)
        live.stop()
        sock.close()
        log.info("stopped")

