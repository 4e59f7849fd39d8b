"""Sources added to or removed from config.json while a watcher runs (or while none ran): read
and watched, or dropped for good; a broken or overlapping config leaves the watcher going."""

from __future__ import annotations

import json

import pytest

from memsync import api
from memsync.search.lexical import Query

from .watching import (
    DEADLINE,
    cfg,
    converge,
    mark,
    put,
    source_view,
    wait_until,
)

# --- sources added and removed while a watcher runs ------------------------------------------------


def test_a_source_added_while_watching_is_read_and_then_watched(tmp_path, live_watcher, run_cli):
    extra = tmp_path / "extra"
    first, second = mark(), mark()
    put(extra, "one.md", first)
    code, out, _err = run_cli("sources", "--add", "extra", "--path", extra, "--json")
    assert code == 0 and "running `memsync watch`" in out["note"]
    wait_until(lambda: first in source_view("extra").get("one.md", ""), "the new source is read")
    put(extra, "sub/two.md", second)
    wait_until(lambda: second in source_view("extra").get("sub/two.md", ""), "it is watched")
    assert [h["path"] for h in api.search(cfg(), Query(second, source="extra"))["hits"]] == ["sub/two.md"]


def test_a_source_removed_while_watching_is_dropped_and_stays_dropped(vault, tmp_path, watcher, run_cli):
    extra = tmp_path / "extra"
    old = mark()
    put(extra, "one.md", old)
    run_cli("sources", "--add", "extra", "--path", extra)
    proc = watcher()
    assert f"watching vault {vault}, extra {extra}" in proc.stderr()
    wait_until(lambda: "one.md" in source_view("extra"), "the source is read at start-up")
    code, out, _err = run_cli("sources", "--remove", "extra", "--json")
    assert code == 0 and out["removed"] == 1
    assert source_view("extra") == {}  # at once, not when the watcher gets to it
    proc.wait_for("config.json changed")
    put(extra, "one.md", mark())  # the removed source's folder is not watched any more
    put(extra, "late.md", mark())
    after = mark()
    put(vault, "after.md", after)
    converge({"after.md": after}, gone={old})
    assert source_view("extra") == {}
    assert proc.stop() == 0  # its final look at every source does not bring it back
    assert source_view("extra") == {}
    assert "Traceback" not in proc.stderr()


def test_a_source_removed_while_no_watcher_ran_is_dropped_at_start(home, tmp_path, watcher, run_cli):
    extra = tmp_path / "extra"
    put(extra, "one.md", mark())
    run_cli("sources", "--add", "extra", "--path", extra)
    run_cli("index")
    (home / "config.json").write_text(json.dumps({"sources": []}))  # edited by hand
    proc = watcher()
    assert source_view("extra") == {}
    assert proc.stop() == 0


def test_a_broken_config_json_keeps_the_watcher_going(home, tmp_path, live_watcher, run_cli):
    (home / "config.json").write_text('{"sources": [{"name": "x"')
    live_watcher.wait_for("still watching the sources it named before")
    extra = tmp_path / "extra"
    m = mark()
    put(extra, "one.md", m)
    (home / "config.json").unlink()
    assert run_cli("sources", "--add", "extra", "--path", extra)[0] == 0
    wait_until(lambda: m in source_view("extra").get("one.md", ""), "the fixed config is read")


def test_an_in_process_watcher_reads_the_config_as_it_is_when_it_starts(tmp_path, run_cli):
    """The MCP server starts its watcher long after it loaded the config."""
    from memsync.watch import Watcher

    stale = cfg()
    extra = tmp_path / "extra"
    put(extra, "one.md", mark())
    run_cli("sources", "--add", "extra", "--path", extra)
    w = Watcher(stale)
    w.start()
    try:
        assert w.wait_idle(DEADLINE)
        assert "one.md" in source_view("extra")
    finally:
        w.stop()


def test_an_overlapping_source_written_into_config_json_is_left_out(vault, home, live_watcher):
    inside = mark()
    put(vault, "sub/one.md", inside)
    converge({"sub/one.md": inside})
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(
        {"sources": [{"name": "inner", "adapter": "markdown", "path": str(vault / "sub")}]}))
    live_watcher.wait_for("source inner is ignored")
    after = mark()
    put(vault, "sub/two.md", after)
    converge({"sub/one.md": inside, "sub/two.md": after})
    assert source_view("inner") == {}  # each card once, under the vault


def test_a_left_out_source_is_said_once_not_at_every_reread(vault, home, watcher):
    """Said when the watcher starts and again only when its reason changes: an edit of
    config.json that leaves it as it was says nothing more of it."""
    put(vault, "sub/one.md", mark())
    entry = {"name": "inner", "adapter": "markdown", "path": str(vault / "sub")}
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"sources": [entry]}))
    running = watcher()
    assert running.stderr().count("source inner is ignored") == 1
    (home / "config.json").write_text(json.dumps({"sources": [entry], "colour": "blue"}))
    running.wait_for("'colour' is not a setting")  # read again
    (home / "config.json").write_text(json.dumps({"sources": [entry], "colour": "red", "shade": 1}))
    running.wait_for("'shade' is not a setting")  # and again
    assert running.stderr().count("source inner is ignored") == 1
    moved = {**entry, "path": str(vault / "sub" / "deeper")}  # another reason: said anew
    (home / "config.json").write_text(json.dumps({"sources": [moved]}))
    running.wait_for("deeper is inside the vault")
    assert running.stderr().count("source inner is ignored") == 2
    assert running.stop() == 0


def test_a_watcher_refused_the_lock_says_nothing_of_the_sources(vault, home, live_watcher, caplog):
    """An MCP server beside `memsync watch` tries to start its own watcher every few seconds
    (memsync.mcp.live): each refused start must not log the left-out sources again."""
    from memsync.watch import Watcher, WatcherLocked

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(
        {"sources": [{"name": "inner", "adapter": "markdown", "path": str(vault / "sub")}]}))
    live_watcher.wait_for("source inner is ignored")
    for _ in range(3):
        with pytest.raises(WatcherLocked):
            Watcher(cfg()).start()
    assert "source inner is ignored" not in caplog.text
