"""Lines from an MCP client that the SDK's stdio transport cannot read, answered.

The SDK (2.x) parses each line strictly and drops one that fails, with a debug log: a request
whose text holds a lone UTF-16 surrogate (`"\\ud83d"`, half an emoji a client cut in two) then
gets no reply, and the agent waits for its client's timeout. This sits between the transport and
the server: such a request is answered with a JSON-RPC error naming the problem, under its own
id when a lenient parse can still read one (else id null, as JSON-RPC prescribes for a line
that is not JSON), and logged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

log = logging.getLogger("memsync.mcp")


@asynccontextmanager
async def answered(read_stream: Any, write_stream: Any) -> AsyncIterator[Any]:
    """The transport's read stream with its unreadable lines taken out and answered on
    `write_stream`; everything else passes through in order."""
    send, receive = anyio.create_memory_object_stream[Any](0)

    async def forward() -> None:
        async with send:
            async for item in read_stream:
                if not isinstance(item, Exception):
                    await send.send(item)
                elif (reply := reply_to(item)) is not None:
                    await write_stream.send(SessionMessage(reply))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(forward)
        async with receive:
            yield receive
        tasks.cancel_scope.cancel()


def reply_to(exc: Exception) -> JSONRPCError | None:
    """The error reply to a line the transport refused (`exc` holds the line as its input), or
    None for one that asked for no reply (a notification, a response). Logged without its
    text, which may hold what the secrets scanner would have kept out of the log."""
    message = _message_of(exc)
    if message is None:
        log.warning("a line from the client is not JSON (%s)", _first_error(exc))
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message="the line is not JSON; send one JSON-RPC message a line"))
    ident = message.get("id") if isinstance(message, dict) else None
    method = message.get("method") if isinstance(message, dict) else None
    log.warning("a message from the client could not be read (id %r, method %r): %s",
                ident, method, _first_error(exc))
    if isinstance(ident, bool) or not isinstance(ident, (int, str)) or not isinstance(method, str):
        return None  # not a request: nothing waits for a reply
    if _has_lone_surrogate(message):
        text = ("the request holds a lone UTF-16 surrogate (half of a character such as an "
                "emoji, e.g. \\ud83d), which is not text; send whole characters and call again")
        return JSONRPCError(jsonrpc="2.0", id=ident, error=ErrorData(code=INVALID_PARAMS, message=text))
    return JSONRPCError(jsonrpc="2.0", id=ident, error=ErrorData(
        code=INVALID_REQUEST, message=f"not a valid JSON-RPC request: {_first_error(exc)}"))


def _message_of(exc: Exception) -> Any:
    """What the refused line held, as far as a lenient reading gets (None: not JSON at all).
    The strict parser's report carries the line (bad JSON) or the object (a bad message)."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors() if callable(errors) else []
    except Exception:  # not pydantic's: nothing to recover
        found = []
    for error in found:
        given = error.get("input")
        if isinstance(given, dict):
            return given
        if isinstance(given, str):
            try:
                return json.loads(given)  # lenient: takes lone surrogates, which strict JSON refuses
            except ValueError:
                return None
    return None


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            return str(errors()[0].get("msg", exc))
        except Exception:
            pass
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value) if not value.isascii() else False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False
