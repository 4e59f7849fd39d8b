"""`memsync brief --hook CLIENT`, as a client's session-start hook runs it: the client's context
JSON on stdout, and exit 0 with one line on stderr when there is no index, a broken one, one
held by a load, or a brief slower than the time limit."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time

from . import briefing
from .conftest import MEMSYNC_BIN

two_projects, brief_home = briefing.two_projects, briefing.brief_home  # fixtures


def test_a_hook_run_prints_the_clients_context_json(brief_home, cli):
    code, out = cli("brief", "--hook", "claude-code",
                    stdin=json.dumps({"cwd": str(brief_home["shop"] / "sub"), "source": "startup"}))
    assert code == 0
    context = out["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart" and "Shop deploy" in context["additionalContext"]


def test_a_hook_that_briefs_says_nothing_on_stderr_and_doctor_names_the_setting(brief_home, home, run_cli):
    """On exit 0 the clients read the hook's stdout; a config.json warning on its stderr went to a
    log, or to the user's screen at every session start, where nothing can be done about it."""
    config = home / "config.json"
    config.write_text(json.dumps({**(json.loads(config.read_text()) if config.exists() else {}), "semantik": True}))
    for client in ("claude-code", "codex", "gemini"):
        proc = subprocess.run([MEMSYNC_BIN, "brief", "--hook", client], input=json.dumps({"cwd": str(brief_home["shop"])}),
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert "Shop deploy" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    code, out, _err = run_cli("doctor", "--json")
    assert any("'semantik' is not a setting memsync knows" in f["message"] for f in out["findings"]), out
    assert "'semantik' is not a setting" in run_cli("brief", "--project", brief_home["shop"])[2]  # not a hook: said


def test_a_hook_under_a_broken_index_exits_0_with_one_line_on_stderr(brief_home, home, tmp_path):
    (home / "memsync.db").write_bytes(b"this is not a database" * 100)
    for f in home.glob("memsync.db-*"):
        f.unlink()
    proc = subprocess.run([MEMSYNC_BIN, "brief", "--hook", "gemini"], input=json.dumps({"cwd": str(tmp_path)}),
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {}
    assert len(proc.stderr.strip().splitlines()) == 1 and "no brief this time" in proc.stderr


def test_a_hook_kept_out_by_a_load_says_one_line_and_exits_0(brief_home, home, tmp_path):
    """A load through a rollback journal holds the index: the wait notice a search would print is
    not the hook's to say; its own line is."""
    loader = sqlite3.connect(home / "memsync.db", isolation_level=None)
    try:
        assert loader.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        loader.execute("BEGIN EXCLUSIVE")
        proc = subprocess.run([MEMSYNC_BIN, "brief", "--hook", "gemini"], input=json.dumps({"cwd": str(tmp_path)}),
                              capture_output=True, text=True, timeout=30)
    finally:
        loader.execute("ROLLBACK")
        loader.close()
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}
    assert len(proc.stderr.strip().splitlines()) == 1 and "waiting for it to finish" not in proc.stderr


def test_a_hook_without_an_index_exits_0(tmp_path):
    proc = subprocess.run([MEMSYNC_BIN, "brief", "--hook", "codex"], input="not json",
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "{}" and "run `memsync index`" in proc.stderr


def test_a_slow_brief_is_given_up_at_the_time_limit():
    import io
    import threading

    from memsync.brief.hookrun import run

    release = threading.Event()
    started = time.monotonic()
    out, problem, stuck = run("claude-code", lambda where: release.wait(30) and "late",
                              io.StringIO('{"cwd": "/tmp"}'), limit=0.2)
    release.set()
    assert time.monotonic() - started < 5
    assert out == "{}" and stuck and "took longer than 0.2 s" in problem
