"""A live `memsync mcp --http` on a free loopback port, and the SDK's HTTP client to it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
from contextlib import AsyncExitStack, asynccontextmanager

import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from .conftest import MEMSYNC_BIN
from .mcp_helpers import DEADLINE


class HttpServer:
    """`memsync mcp --http 127.0.0.1:0 ...` as a subprocess; `url` once it listens."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([MEMSYNC_BIN, "mcp", "--http", "127.0.0.1:0", *args],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        self.log: list[str] = []
        lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._reader.start()
        while True:
            line = lines.get(timeout=DEADLINE)
            assert line is not None, "the server stopped before listening:\n" + "".join(self.log)
            if "serving http://" in line:
                self.url = line.split("serving ", 1)[1].split()[0]
                return

    def _read(self, lines: queue.Queue) -> None:
        for line in self.proc.stderr:
            self.log.append(line)
            lines.put(line)
        lines.put(None)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(DEADLINE)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def http_server():
    started: list[HttpServer] = []

    def start(*args: str) -> HttpServer:
        started.append(HttpServer(*args))
        return started[-1]

    yield start
    for server in started:
        server.stop()
        server._reader.join(DEADLINE)  # stderr ended with the server: its pipes can close
        server.proc.stdout.close()
        server.proc.stderr.close()


@asynccontextmanager
async def client(url: str, token: str | None = None, scheme: str = "Bearer"):
    headers = {"Authorization": f"{scheme} {token}"} if token else None
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=DEADLINE))
        await session.initialize()
        yield session
