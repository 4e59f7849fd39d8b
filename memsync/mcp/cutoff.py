"""A forced stop said in one line instead of uvicorn's tracebacks.

A stop waits for the calls in progress, up to the grace period; a second Ctrl-C, or a call still
running when the grace is over, has uvicorn cancel what is left. Each cancelled request then
logged "Exception in ASGI application" with a CancelledError traceback, and the SDK's lifespan
another: alarming, and silent on what the user needs to know (that replies never went out, and
where to look). `Calls` counts the calls cut off; `report` tells them once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger("memsync.mcp")


class QuietCancel(logging.Filter):
    """On uvicorn's logger: a CancelledError raised while the server stops is the stop itself,
    not a fault. Anything else, or any error while serving, passes as it came."""

    def __init__(self, stopping: Callable[[], bool]):
        super().__init__()
        self.stopping = stopping

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, asyncio.CancelledError) and self.stopping())


class CancelledLifespan:
    """ASGI middleware: the app's lifespan cancelled by a forced stop is not reported as a failed
    shutdown. Starlette sends the traceback as the failure's text, which uvicorn logs as it is;
    left out, uvicorn logs the CancelledError itself, and QuietCancel knows it by its type."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "lifespan":
            return await self.app(scope, receive, send)
        cancelled = False

        async def receiving():
            nonlocal cancelled
            try:
                return await receive()
            except asyncio.CancelledError:
                cancelled = True
                raise

        async def sending(message):
            if not (cancelled and message["type"] == "lifespan.shutdown.failed"):
                await send(message)

        await self.app(scope, receiving, sending)


def quiet_cancels(stopping: Callable[[], bool], logger_name: str = "uvicorn.error") -> None:
    logging.getLogger(logger_name).addFilter(QuietCancel(stopping))


def report(cut_off: int) -> None:
    if cut_off:
        log.warning("stopped before %d call(s) had their replies: their clients were not told the "
                    "outcome; a write may have landed all the same (memory_search shows it)", cut_off)
