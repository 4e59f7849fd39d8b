"""The `memsync watch` process: its summary and log, one watcher per home, stats, stopping by
signal (every pending change applied), a restart after kill -9 and a catch-up before watching."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

from bench.watch_latency import CATCH_UP_PEAK
from memsync import sync

from .conftest import MEMSYNC_BIN, Proc
from .watching import (
    card_id,
    cfg,
    converge,
    mark,
    put,
    view,
)

# --- process life -------------------------------------------------------------------------------


def test_json_summary_on_stop(vault, watcher):
    proc = watcher("--json")
    m = mark()
    put(vault, "j.md", m)
    converge({"j.md": m})
    assert proc.stop() == 0
    summary = json.loads(proc.proc.stdout.read())
    assert summary["status"] == "stopped" and summary["added"] >= 1


def test_second_watcher_is_refused_and_names_the_holder(watcher, run_cli):
    first = watcher()
    rc, data, _err = run_cli("watch", "--json", timeout=30)
    assert rc == 2
    assert data["error"]["code"] == "watcher_locked"
    assert f"pid {first.proc.pid}" in data["error"]["message"]
    assert first.stop() == 0


def test_stats_shows_a_live_watcher_and_the_last_change(vault, watcher, run_cli):
    proc = watcher()
    m = mark()
    put(vault, "s.md", m)
    converge({"s.md": m})
    rc, stats, _ = run_cli("stats", "--json")
    assert rc == 0 and stats["watcher"]["live"] and stats["watcher"]["pid"] == proc.proc.pid
    assert stats["last_change"]
    assert proc.stop() == 0
    rc, stats, _ = run_cli("stats", "--json")
    assert stats["watcher"] == {"live": False}
    assert not cfg().lock_file.exists()


def test_sigterm_applies_every_pending_change(vault, watcher, home):
    proc = watcher()
    live = {f"late/{i}.md": mark() for i in range(30)}
    for rel, m in live.items():
        put(vault, rel, m)
    assert proc.stop(signal.SIGTERM) == 0
    # No watcher runs any more: the index already holds everything.
    assert view(cfg()).keys() == live.keys()


def test_sigint_stops_cleanly(vault, watcher):
    proc = watcher()
    m = mark()
    put(vault, "i.md", m)
    assert proc.stop(signal.SIGINT) == 0
    assert "i.md" in view(cfg())
    assert "stopped after" in proc.proc.stdout.read().decode()


def test_kill_9_then_100_changes_then_restart(vault, watcher):
    live = {f"k/{i}.md": mark() for i in range(100)}
    for rel, m in live.items():
        put(vault, rel, m)
    first = watcher()
    converge(live)
    ids = {rel: card_id(rel) for rel in live}
    first.stop(signal.SIGKILL)
    assert cfg().lock_file.exists()  # left behind, naming a dead pid
    old = set()
    for i in range(40):  # modified
        rel = f"k/{i}.md"
        old.add(live[rel])
        live[rel] = mark()
        put(vault, rel, live[rel])
    for i in range(40, 60):  # deleted
        old.add(live.pop(f"k/{i}.md"))
        (vault / f"k/{i}.md").unlink()
    for i in range(60, 80):  # renamed: same content, so the same card
        os.rename(vault / f"k/{i}.md", vault / f"k/moved{i}.md")
        live[f"k/moved{i}.md"] = live.pop(f"k/{i}.md")
    for i in range(20):  # created
        live[f"k/new{i}.md"] = mark()
        put(vault, f"k/new{i}.md", live[f"k/new{i}.md"])
    second = watcher()
    took = [line for line in second.stderr().splitlines() if "took over a stale watcher lock" in line]
    assert any(str(cfg().lock_file) in line for line in took)  # each line names its lock file
    assert len(set(took)) == len(took)
    converge(live, gone=old)
    assert all(card_id(f"k/moved{i}.md") == ids[f"k/{i}.md"] for i in range(60, 80))
    assert second.stop() == 0


def test_a_big_unwatched_vault_is_caught_up_before_watching_starts(vault, watcher):
    # Enough files for the indexer to fork readers, which it may only do before the observer's
    # threads exist; the start-up reconcile afterwards finds nothing left to do.
    live = {f"big/{i}.md": mark() for i in range(sync.PARALLEL_FROM + 20)}
    for rel, m in live.items():
        put(vault, rel, m)
    proc = watcher()
    log = proc.stderr()
    assert f"catch-up reconcile: {len(live)} files, +{len(live)} ~0 -0" in log
    if sys.platform.startswith("linux"):  # in a child of its own (memsync.watch.apart)
        found = re.search(r"the catch-up ran in a process of its own \((\d+)\), which peaked at (\d+) MB", log)
        assert found and int(found[1]) != proc.proc.pid and int(found[2]) > 0
        assert CATCH_UP_PEAK.search(log)[1] == found[2]  # what bench/watch_latency.py reads
    assert f"start-up reconcile: {len(live)} files, +0 ~0 -0" in log
    converge(live)
    assert proc.stop() == 0


def test_default_level_logs_nothing_per_event(vault, watcher, tmp_path):
    log = tmp_path / "quiet.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([MEMSYNC_BIN, "watch"], stderr=err, stdout=subprocess.DEVNULL,
                                env=os.environ.copy())
    running = Proc(proc, log)
    try:
        running.wait_for("memsync: watching")
        live = {f"q{i}.md": mark() for i in range(20)}
        for rel, m in live.items():
            put(vault, rel, m)
        converge(live)
    finally:
        assert running.stop() == 0
    assert running.stderr().count("\n") == 2  # "watching ..." and "stopping ..." only
