"""Load and soak: a live watcher, two MCP servers, CLI writers and an editor on one data home
for MEMSYNC_SOAK_SECONDS (600 in `make stress`; a 4-second run in `make test`). Zero errors,
"database is locked" never shown to a caller, the watcher's memory flat, every write accounted
for, and the index equal to a rebuild at the end. Figures go to bench/results/soak.json.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from memsync import config, dates
from memsync.store.index import Index

from .conftest import MEMSYNC_BIN, write_card
from .helpers import settle_to_rebuild
from .soak_load import WORDS, Agents, CliWriter, Editor, RssSampler, mark

SECONDS = float(os.environ.get("MEMSYNC_SOAK_SECONDS", "600"))
RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results" / "soak.json"
SETTLE = 120.0  # after the load stops, the watcher must reach a rebuild's index within this
RSS_GROWTH_KIB = 30 * 1024  # more than this from the first sample to the last is a leak


def start_watcher(log: Path) -> subprocess.Popen:
    with log.open("w") as err:  # the watcher has its own copy of the descriptor
        proc = subprocess.Popen([MEMSYNC_BIN, "watch"], stderr=err,
                                stdout=subprocess.DEVNULL, env=os.environ.copy())
    deadline = time.monotonic() + 60
    while "memsync: watching" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    return proc


def accounted_for(cfg, writer: CliWriter, editor: Editor, agents: Agents) -> int:
    """Every write is in the index as it was last written; deleted cards are in the trash only."""
    checked = 0
    index = Index(cfg.db.path)
    try:
        bodies = {row["id"]: (row["path"], row["body"], row["invalid_at"]) for row in index.cards()}
        for card, (marker, path) in writer.live.items():
            assert card in bodies and marker in bodies[card][1] and bodies[card][0] == path, card
            checked += 1
        for card in writer.superseded:
            assert card in bodies and bodies[card][2], f"{card} should be kept, marked invalid"
            checked += 1
        for card in writer.deleted:
            assert card not in bodies, f"{card} was deleted"
            checked += 1
        by_path = {path: body for path, body, _ in bodies.values()}
        for rel, marker in editor.now.items():
            assert marker in by_path.get(rel, ""), rel
            checked += 1
        for card, marker in agents.captured.items():
            assert card in bodies and marker in bodies[card][1], card
            checked += 1
    finally:
        index.close()
    assert set(agents.gone) <= writer.deleted, "a read found no card that was never deleted"
    trash = cfg.vault.path / ".trash"
    assert len([p for p in trash.rglob("*.md")]) >= len(writer.deleted)
    return checked


@pytest.mark.stress
@pytest.mark.timeout(SECONDS + 900)
def test_soak(vault, tmp_path):
    figures = soak(SECONDS, vault, tmp_path)
    if SECONDS >= 60:  # a short run's figures say little; keep the long run's
        RESULTS.write_text(json.dumps(figures, indent=2) + "\n")


def test_a_short_soak(vault, tmp_path):
    soak(4.0, vault, tmp_path)


def soak(seconds: float, vault: Path, tmp_path: Path) -> dict:
    rng = random.Random(int(os.environ.get("MEMSYNC_SOAK_SEED", "13")))
    for i in range(300):  # something to search from the start
        write_card(vault, f"seed/s{i:03d}.md", f"seed {i}",
                   f"{' '.join(rng.sample(WORDS, 3))} seed card {i}, marker {mark()}")
    writer, editor = CliWriter(random.Random(rng.random())), Editor(vault, random.Random(rng.random()))
    markers: list[str] = []
    agents = Agents(tmp_path / "mcp.log", lambda: markers, random.Random(rng.random()))
    watcher_log = tmp_path / "watch.log"
    watcher = start_watcher(watcher_log)
    rss = RssSampler(watcher.pid)
    try:
        subprocess.run([MEMSYNC_BIN, "index"], check=True, capture_output=True, timeout=120)
        rss.start()
        started = time.monotonic()
        deadline = started + seconds
        writer_markers = threading.Thread(target=_follow_markers, args=(writer, markers, deadline))
        parts = [threading.Thread(target=part.run, args=(deadline,), name=part.ledger.name)
                 for part in (writer, editor)]
        for thread in (*parts, writer_markers):
            thread.start()
        agents.run(deadline)
        for thread in (*parts, writer_markers):
            thread.join(timeout=300)
            assert not thread.is_alive(), f"{thread.name} did not stop"
        elapsed = time.monotonic() - started
        cfg = config.load()
        settle_to_rebuild(cfg, tmp_path, timeout=SETTLE)
        checked = accounted_for(cfg, writer, editor, agents)
        rss.stopped.set()
        rss.join()
    finally:
        watcher.send_signal(signal.SIGTERM)
        code = watcher.wait(timeout=60)
    log = watcher_log.read_text()
    ledgers = [writer.ledger, editor.ledger, agents.searches, agents.reads, agents.captures]
    errors = [e for ledger in ledgers for e in ledger.errors]
    writes = writer.ledger.calls + editor.ledger.calls + agents.captures.calls
    figures = {
        "at": dates.now_iso(), "seconds": round(elapsed, 1), "seed_cards": 300,
        "writes_per_second": round(writes / elapsed, 2),
        "searches_per_second": round(agents.searches.calls / elapsed, 2),
        **{ledger.name: ledger.figures(elapsed) for ledger in ledgers},
        "writes_checked": checked, "errors": len(errors),
        "watcher_rss_mib": {"start": round(rss.samples[0] / 1024, 1),
                            "end": round(rss.samples[-1] / 1024, 1),
                            "max": round(max(rss.samples) / 1024, 1)},
        "watcher_exit": code,
    }
    print("\nsoak:", json.dumps(figures, indent=2))
    assert errors == []
    assert code == 0 and "Traceback" not in log and "locked" not in log.lower(), log[-3000:]
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()
    assert rss.samples[-1] - rss.samples[0] < RSS_GROWTH_KIB, figures["watcher_rss_mib"]
    assert writer.ledger.calls and editor.ledger.calls and agents.searches.calls
    return figures


def _follow_markers(writer: CliWriter, markers: list[str], deadline: float) -> None:
    """Hand the agents markers of cards written meanwhile, so some searches find fresh cards."""
    while time.monotonic() < deadline:
        markers[:] = [marker for marker, _path in list(writer.live.values())][-200:]
        time.sleep(0.5)
