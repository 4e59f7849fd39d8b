"""One watcher per index file, whatever its home: two homes whose settings name the same index
(here MEMSYNC_DB), or an older memsync's watcher left running, never write one index at once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

from .conftest import WATCH_DEADLINE
from .watching import converge, mark, put


def second_home(tmp_path, monkeypatch, name: str = "other-home"):
    """Point what is started from now on at another data home (the same vault and index)."""
    home = tmp_path / name
    monkeypatch.setenv("MEMSYNC_HOME", str(home))
    return home


def refused(proc) -> dict:
    """The JSON error of a watcher that was refused, once it has exited."""
    out, _err = proc.proc.communicate(timeout=WATCH_DEADLINE)
    assert proc.proc.returncode == 2, proc.stderr()
    return json.loads(out)["error"]


def test_a_watcher_of_another_home_on_the_same_index_is_refused(vault, home, tmp_path, monkeypatch,
                                                                 watcher, run_cli):
    monkeypatch.setenv("MEMSYNC_DB", str(tmp_path / "shared.db"))
    first = watcher()
    other = second_home(tmp_path, monkeypatch)
    error = refused(watcher("--json", ready=False))
    assert error["code"] == "watcher_locked"
    assert f"pid {first.proc.pid}" in error["message"] and f"home {home}" in error["message"]
    assert f"index {tmp_path / 'shared.db'}" in error["message"]
    assert "kill" in error["message"] and "index of its own" in error["message"]
    # the other home sees that a watcher keeps its index live, and whose it is
    rc, stats, _ = run_cli("stats", "--json")
    assert rc == 0 and stats["watcher"]["live"] and stats["watcher"]["pid"] == first.proc.pid
    assert stats["watcher"]["home"] == str(home)
    assert not (other / "watch.lock").exists()  # its own lock went with the refusal
    assert first.stop() == 0


def test_a_killed_watchers_locks_never_keep_another_home_out(vault, tmp_path, monkeypatch, watcher):
    monkeypatch.setenv("MEMSYNC_DB", str(tmp_path / "shared.db"))
    first = watcher()
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait()
    assert (tmp_path / "shared.db.watch-lock").exists()  # left behind, but nobody holds it
    second_home(tmp_path, monkeypatch)
    after = watcher()
    m = mark()
    put(vault, "after.md", m)
    converge({"after.md": m})
    assert json.loads((tmp_path / "shared.db.watch-lock").read_text())["pid"] == after.proc.pid
    assert after.stop() == 0
    assert not (tmp_path / "shared.db.watch-lock").exists()


def test_doctor_fix_removes_both_locks_a_killed_watcher_left(vault, home, watcher, run_cli):
    first = watcher()
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait()
    beside = home / "memsync.db.watch-lock"
    assert (home / "watch.lock").exists() and beside.exists()
    _rc, result, _err = run_cli("doctor", "--fix", "--json")
    assert not (home / "watch.lock").exists() and not beside.exists(), result


# What a watcher of a memsync from before the lock beside the index holds while it runs: its
# home's lock (taken as it always was) and the index open. It never takes the lock beside the
# index, so only what the system says of it can tell.
OLDER_WATCHER = textwrap.dedent("""
    import sqlite3, sys, time
    from pathlib import Path
    from memsync.watch.lock import WatchLock

    home, index, vault = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    WatchLock(home / "watch.lock", vault).acquire()
    conn = sqlite3.connect(index)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    print("watching", flush=True)
    time.sleep(600)
""")


def test_a_watcher_of_an_older_memsync_on_the_same_index_is_refused(vault, home, tmp_path,
                                                                      monkeypatch, watcher):
    index = tmp_path / "shared.db"
    monkeypatch.setenv("MEMSYNC_DB", str(index))
    older_home = tmp_path / "older-home"
    older_home.mkdir()
    older = subprocess.Popen([sys.executable, "-c", OLDER_WATCHER, str(older_home), str(index), str(vault)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert older.stdout is not None and older.stdout.readline() == "watching\n"
        error = refused(watcher("--json", ready=False))
        assert error["code"] == "watcher_locked"
        assert f"older memsync (pid {older.pid}, home {older_home})" in error["message"]
        assert not (home / "watch.lock").exists() and not (tmp_path / "shared.db.watch-lock").exists()
    finally:
        older.kill()
        older.wait()
        assert older.stdout is not None
        older.stdout.close()
    after = watcher()  # once it is gone
    assert after.stop() == 0
