"""The load the soak test puts on one data home, each part a bounded loop with its own ledger.

A live `memsync watch` process; two `memsync mcp` servers driven through the SDK's stdio client
(searches and reads, one of them also captures); a CLI writer running capture / update /
supersede / delete as real processes; an editor writing its own cards in place, through a temp
file renamed over, and vim's way. Every call's latency and outcome is recorded; an error is any
non-zero exit, any tool error, or "locked" in anything a caller is shown.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from .conftest import MEMSYNC_BIN
from .mcp_helpers import STRUCTURED, connected, text_of
from .watching import mark

WORDS = ("nginx", "postgres", "backup", "deploy", "latency", "cache", "queue", "部署", "数据库", "监控")


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@dataclass
class Ledger:
    """What one load part did and saw. Filled by one thread (or task) only."""

    name: str
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    calls: int = 0

    def timed(self, started: float, problem: str | None) -> None:
        self.calls += 1
        self.latencies.append(time.perf_counter() - started)
        if problem:
            self.errors.append(problem[:500])

    def figures(self, seconds: float) -> dict:
        return {"calls": self.calls, "per_second": round(self.calls / seconds, 2),
                "p50_ms": round(1000 * percentile(self.latencies, 0.5), 1),
                "p99_ms": round(1000 * percentile(self.latencies, 0.99), 1),
                "errors": len(self.errors)}


def complaint(code: int, *outputs: str) -> str | None:
    text = " ".join(outputs)
    if code != 0 or "locked" in text.lower() or "Traceback" in text:
        return f"exit {code}: {text.strip()}"
    return None


class CliWriter:
    """capture / update / supersede / delete through the installed command, keeping what each
    card should hold now: id -> (marker, path), plus the ids deleted and superseded."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.ledger = Ledger("cli_writes")
        self.live: dict[int, tuple[str, str]] = {}
        self.deleted: set[int] = set()
        self.superseded: set[int] = set()

    def run(self, deadline: float) -> None:
        while True:  # at least one call, however late this starts on a busy machine
            ops = ["capture"] * 4 + (["update"] * 3 + ["supersede", "delete"] if self.live else [])
            getattr(self, self.rng.choice(ops))()
            if time.monotonic() >= deadline:
                return

    def _call(self, *args: str) -> dict | None:
        started = time.perf_counter()
        proc = subprocess.run([MEMSYNC_BIN, *args, "--json"], capture_output=True, text=True,
                              timeout=120, env=os.environ.copy())
        problem = complaint(proc.returncode, proc.stdout, proc.stderr)
        self.ledger.timed(started, problem)
        return None if problem else json.loads(proc.stdout)

    def capture(self) -> None:
        m = mark()
        out = self._call("capture", "--title", f"soak {m}", "--body",
                         f"{self.rng.choice(WORDS)} fact written by the soak, marker {m}")
        if out:
            self.live[out["id"]] = (m, out["path"])

    def update(self) -> None:
        card = self.rng.choice(sorted(self.live))
        m = mark()
        out = self._call("update", str(card), "--body", f"corrected by the soak, marker {m}")
        if out:
            self.live[card] = (m, out["path"])

    def supersede(self) -> None:
        card = self.rng.choice(sorted(self.live))
        m = mark()
        out = self._call("supersede", str(card), "--title", f"soak {m}", "--body",
                         f"the fact as it is now, marker {m}")
        if out:
            self.superseded.add(card)
            del self.live[card]
            self.live[out["id"]] = (m, out["path"])

    def delete(self) -> None:
        card = self.rng.choice(sorted(self.live))
        if self._call("delete", str(card)):
            del self.live[card]
            self.deleted.add(card)


class Editor:
    """A person's editor on its own cards in editor/: rel path -> the marker it holds now."""

    def __init__(self, vault: Path, rng: random.Random, files: int = 20):
        self.vault, self.rng = vault, rng
        self.ledger = Ledger("editor_writes")
        self.now = {f"editor/e{i:02d}.md": "" for i in range(files)}

    def run(self, deadline: float) -> None:
        while True:
            rel = self.rng.choice(sorted(self.now))
            m = mark()
            started = time.perf_counter()
            problem = None
            try:
                self.save(self.vault / rel, f"# note {rel}\n\nedited by hand, marker {m}\n",
                          self.rng.choice(["in_place", "temp_rename", "vim"]))
                self.now[rel] = m
            except OSError as exc:
                problem = f"{rel}: {exc}"
            self.ledger.timed(started, problem)
            if time.monotonic() >= deadline:
                return
            time.sleep(0.1)

    @staticmethod
    def save(path: Path, text: str, how: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if how == "in_place" or not path.exists():
            path.write_text(text, encoding="utf-8")
        elif how == "temp_rename":
            tmp = path.with_name(f".{path.name}.{secrets.token_hex(3)}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        else:
            backup = path.with_name(path.name + "~")
            os.rename(path, backup)
            path.write_text(text, encoding="utf-8")
            backup.unlink()


class Agents:
    """Two MCP servers, each with one client searching and reading; the second also captures."""

    def __init__(self, server_log: Path, markers, rng: random.Random):
        self.server_log, self.markers, self.rng = server_log, markers, rng
        self.searches = Ledger("mcp_searches")
        self.reads = Ledger("mcp_reads")
        self.captures = Ledger("mcp_captures")
        self.captured: dict[int, str] = {}
        self.gone: list[int] = []  # a hit deleted between the search and the read

    def run(self, deadline: float) -> None:
        async def main():
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._agent, deadline, False)
                tg.start_soon(self._agent, deadline, True)

        anyio.run(main)

    async def _agent(self, deadline: float, writes: bool) -> None:
        async with connected(self.server_log, STRUCTURED) as session:
            turn = 0
            while turn == 0 or time.monotonic() < deadline:  # one search at least
                turn += 1
                if writes and turn % 10 == 0:
                    await self._capture(session)
                    continue
                hits = await self._call(session, self.searches, "memory_search",
                                        query=self._query(), limit=5)
                if hits and hits.get("hits") and turn % 3 == 0:
                    await self._call(session, self.reads, "memory_get", id=hits["hits"][0]["id"])

    def _query(self) -> str:
        known = self.markers()
        if known and self.rng.random() < 0.5:
            return self.rng.choice(known)
        return " ".join(self.rng.sample(WORDS, 2))

    async def _capture(self, session) -> None:
        m = mark()
        out = await self._call(session, self.captures, "memory_capture", title=f"agent {m}",
                               body=f"an agent remembered this, marker {m}")
        if out:
            self.captured[out["id"]] = m

    async def _call(self, session, ledger: Ledger, name: str, **arguments) -> dict | None:
        started = time.perf_counter()
        try:
            result = await session.call_tool(name, arguments)
        except Exception as exc:  # a broken connection is an error like any other
            ledger.timed(started, f"{name}: {exc!r}")
            return None
        text = text_of(result)
        gone = ("no card with id", f"card {arguments.get('id')} was deleted")  # (its id in the trash)
        if result.is_error and name == "memory_get" and text.startswith(gone):
            self.gone.append(arguments["id"])  # checked against the writers' deletions later
            ledger.timed(started, None)
            return None
        problem = f"{name}: {text}" if result.is_error or "locked" in text.lower() else None
        ledger.timed(started, problem)
        return None if problem else result.structured_content


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class RssSampler(threading.Thread):
    def __init__(self, pid: int, every: float = 2.0):
        super().__init__(name="rss", daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[int] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                self.samples.append(rss_kib(self.pid))
            except OSError:
                return
            self.stopped.wait(self.every)
