"""Reindexes asked for at once run one after the other, so each changed file is read and written
once, not once per call: in one process (an MCP server's tool calls run on threads) and across
processes (`memsync index` beside an MCP server), by an flock beside the index."""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from contextlib import closing

import pytest

from memsync import api, config, reindexlock, session

from .conftest import MEMSYNC_BIN, write_card

NOTES = 600  # past sync.PARALLEL_FROM: read by reader processes, as a big reindex is
DEADLINE = 60


def _edited_twice(vault) -> None:
    """NOTES cards indexed, then every one of them changed on disk."""
    for i in range(NOTES):
        write_card(vault, f"notes/{i % 7}/n{i}.md", f"note {i}", f"first text {i}")
    api.reindex(config.load())
    for i in range(NOTES):
        write_card(vault, f"notes/{i % 7}/n{i}.md", f"note {i}", f"second text {i}")


def test_reindexes_at_once_write_each_changed_file_once(vault):
    _edited_twice(vault)
    together = threading.Barrier(3)
    reports: list[dict] = []

    def call() -> None:
        together.wait()
        reports.append(api.reindex(config.load()))

    calls = [threading.Thread(target=call) for _ in range(3)]
    for thread in calls:
        thread.start()
    for thread in calls:
        thread.join()
    assert sorted(r["updated"] for r in reports) == [0, 0, NOTES], reports


# A process that loads memsync, says so, and reindexes once told to go: two of them go together.
REINDEX_ON_GO = """
import json, sys
from memsync import api, config
cfg = config.load()
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps(api.reindex(cfg)), flush=True)
"""


def test_reindexes_in_two_processes_at_once_write_each_changed_file_once(vault, started):
    _edited_twice(vault)
    procs = [started(sys.executable, "-c", REINDEX_ON_GO) for _ in range(2)]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    for proc in procs:  # released together: both would survey before either writes
        proc.stdin.write("go\n")
        proc.stdin.flush()
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=DEADLINE)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    assert sorted(r["updated"] for r in reports) == [0, NOTES], reports


@pytest.fixture
def started():
    """Start processes; any still running at the end is killed, and every pipe closed."""
    procs: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        procs.append(subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=os.environ.copy()))
        return procs[-1]

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _waiting_index(started) -> subprocess.Popen:
    return started(MEMSYNC_BIN, "index", "--json")


def _said_waiting(proc: subprocess.Popen, within: float = DEADLINE / 2) -> str:
    """Its first line on stderr: said before it waits, so this returns while it still waits."""
    said, _, _ = select.select([proc.stderr], [], [], within)
    assert said, "nothing said on stderr: it waits without a word"
    line = proc.stderr.readline()
    assert proc.poll() is None, line
    return line


def test_an_index_waits_for_another_processs_and_says_so(vault, started):
    _edited_twice(vault)
    db = config.load().db.path
    with reindexlock.turn(db):  # this process reindexes, as far as the lock can tell
        proc = _waiting_index(started)
        line = _said_waiting(proc)
        assert (f"memsync: waiting for another reindex of {db} (pid {os.getpid()}) to end; "
                "this one then indexes what is left (Ctrl-C stops waiting)") in line
    out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert json.loads(out)["updated"] == NOTES
    lock = reindexlock.path_of(db)  # beside the index, private like it, naming its last holder
    assert lock.parent == db.parent and stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert lock.read_text().strip().isdigit()


# A reindex that stops for good once it has applied its first batch, its readers still running.
REINDEX_THEN_HANG = """
import sys, time
from memsync import api, config

def progress(done, total):
    if done:  # (0, 0) says it begins; then each report follows a batch written
        print("writing", flush=True)
        time.sleep(600)

api.reindex(config.load(), progress=progress)
"""


def test_a_reindex_killed_while_it_holds_its_turn_leaves_none_waiting(vault, started):
    """The kernel drops the flock of a killed holder (and of the readers it forked, which end
    with it): the one waiting goes on, and catches up what the killed one left."""
    _edited_twice(vault)
    holder = started(sys.executable, "-c", REINDEX_THEN_HANG)
    assert holder.stdout.readline().strip() == "writing", holder.stderr.read()
    proc = _waiting_index(started)
    assert f"(pid {holder.pid})" in _said_waiting(proc)
    holder.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert 0 < json.loads(out)["updated"] < NOTES  # the killed one had written a batch
    assert api.reindex(config.load())["updated"] == 0  # nothing was left behind


def test_a_watchers_catch_up_waits_for_a_reindex_and_finds_it_done(vault, watcher):
    """A watcher started while a reindex runs (a service started beside `memsync index`) caught
    up by reading every changed file again; in its turn it finds them written."""
    _edited_twice(vault)
    cfg = config.load()
    with reindexlock.turn(cfg.db.path):  # this process reindexes, the watcher's catch-up waits
        started = watcher(ready=False)
        started.wait_for(f"waiting for another process's reindex (pid {os.getpid()}) to end")
        with session.open_index(cfg) as index:
            assert session.indexer(cfg, index).reconcile().updated == NOTES
    started.wait_for("memsync: watching")
    assert f"catch-up reconcile: {NOTES} files, +0 ~0 -0, 0 read" in started.stderr()
    assert started.stop() == 0


def test_a_source_added_is_read_in_the_reindex_turn(vault, tmp_path, started):
    """`memsync sources --add` reads the new source at once, and a watcher following config.json
    reads it too: in turns, the later one finds its files indexed."""
    folder = tmp_path / "agent-notes"
    for i in range(3):
        write_card(folder, f"a{i}.md", f"agent note {i}", "kept by another agent")
    db = config.load().db.path
    with reindexlock.turn(db):
        proc = started(MEMSYNC_BIN, "sources", "--add", "agent", "--path", str(folder), "--json")
        assert f"waiting for another reindex of {db} (pid {os.getpid()})" in _said_waiting(proc)
    out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert json.loads(out)["indexed_files"] == 3


def test_consolidate_apply_catches_up_in_the_reindex_turn(vault, started):
    """`consolidate --apply` brings the index in line with the files before it plans: a reindex
    like any other, which beside `memsync index` read and wrote every changed file twice."""
    _edited_twice(vault)
    db = config.load().db.path
    with reindexlock.turn(db):
        proc = started(MEMSYNC_BIN, "consolidate", "--apply", "--json")
        assert f"waiting for another reindex of {db} (pid {os.getpid()})" in _said_waiting(proc)
    out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert json.loads(out)["applied"] is True
    assert api.reindex(config.load())["updated"] == 0  # its catch-up wrote every edit


def test_doctor_fix_says_it_waits_for_the_reindex_turn(vault, started):
    """A repair that reads every file again (here the rebuild of a damaged full-text index)
    waits its turn like `memsync index`, and says so as it does, never in silence."""
    for i in range(3):
        write_card(vault, f"n{i}.md", f"note {i}", f"text {i}")
    db = config.load().db.path
    api.reindex(config.load())
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE card_terms SET headings = 'words the index never saw'")
    with reindexlock.turn(db):
        proc = started(MEMSYNC_BIN, "doctor", "--fix", "--json")
        assert f"waiting for another reindex of {db} (pid {os.getpid()})" in _said_waiting(proc)
    out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert json.loads(out)["fixed"] == ["rebuilt the index from the files"]
