"""`memsync watch` as a real process on a real vault: every file operation a human, an editor, a
sync tool or git performs ends with the index holding exactly the live cards.

Each test keeps `live` (path -> the unique marker written into that card) and waits, with a
deadline, until the index holds exactly those paths with exactly those markers; markers of cards
that were removed must not be found by search.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bench.watch_latency import CATCH_UP_PEAK
from memsync import api, config, sync
from memsync.search.lexical import Query
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import MEMSYNC_BIN, WATCH_DEADLINE, Proc, dump_watcher_stacks

DEADLINE = WATCH_DEADLINE


def mark() -> str:
    return "mk" + secrets.token_hex(6)


def text(marker: str, extra: str = "") -> str:
    return f"---\ntitle: card {marker}\ntags: [watch]\n---\nThe body names {marker}. {extra}\n"


def put(vault: Path, rel: str, marker: str, extra: str = "") -> None:
    """An in-place write, as VS Code and most programs do it."""
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text(marker, extra), encoding="utf-8")


def atomic_put(vault: Path, rel: str, marker: str, temp: str) -> None:
    """Write a temp file beside the card and rename it over (Syncthing, write-file-atomic)."""
    path = vault / rel
    tmp = path.with_name(temp)
    tmp.write_text(text(marker), encoding="utf-8")
    os.replace(tmp, path)


def vim_put(vault: Path, rel: str, marker: str) -> None:
    """vim 9's default save: probe file, rename to a backup, write anew, drop the backup."""
    path = vault / rel
    probe = path.with_name("4913")
    probe.write_bytes(b"")
    probe.unlink()
    backup = path.with_name(path.name + "~")
    os.rename(path, backup)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text(marker))
        handle.flush()
        os.fsync(handle.fileno())
    backup.unlink()


def cfg() -> config.Config:
    return config.load()


def view(c: config.Config) -> dict[str, str]:
    """path -> title + body of every card in the index (empty if there is no index yet)."""
    if not c.db.path.exists():
        return {}
    with api.open_index(c) as index:
        rows = index._conn.execute("SELECT path, title, body FROM cards WHERE source = 'vault'")
        return {r[0]: r[1] + "\n" + r[2] for r in rows}


def converge(live: dict[str, str], gone: set[str] = frozenset(), timeout: float = DEADLINE) -> None:
    """Wait until the index holds exactly `live`; then prove it through search as well."""
    c = cfg()
    deadline = time.monotonic() + timeout
    while True:
        got = view(c)
        if got.keys() == live.keys() and all(live[p] in got[p] for p in live):
            break
        if time.monotonic() > deadline:
            dump_watcher_stacks()
            missing = sorted(p for p in live if live[p] not in got.get(p, ""))[:10]
            extra = sorted(set(got) - set(live))[:10]
            pytest.fail(f"index did not converge: missing/stale {missing}, phantom {extra}")
        time.sleep(0.02)
    sample = list(live.items())[:25]
    for path, marker in sample:
        hits = api.search(c, Query(marker))["hits"]
        assert [h["path"] for h in hits] == [path], marker
    for marker in list(gone)[:25]:
        assert api.search(c, Query(marker))["hits"] == [], marker


def card_id(rel: str) -> int:
    with api.open_index(cfg()) as index:
        row = index.card_by_path("vault", rel)
        assert row is not None, rel
        return row["id"]


@pytest.fixture
def live_watcher(watcher):
    proc = watcher()
    yield proc
    assert proc.stop() == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


# --- everyday edits -----------------------------------------------------------------------------


def test_create_modify_delete(vault, live_watcher):
    a, b = mark(), mark()
    put(vault, "a.md", a)
    converge({"a.md": a})
    put(vault, "a.md", b)
    converge({"a.md": b}, gone={a})
    (vault / "a.md").unlink()
    converge({}, gone={b})


def test_vim_style_save(vault, live_watcher):
    first, second = mark(), mark()
    put(vault, "notes/v.md", first)
    converge({"notes/v.md": first})
    before = card_id("notes/v.md")
    vim_put(vault, "notes/v.md", second)
    converge({"notes/v.md": second}, gone={first})
    assert card_id("notes/v.md") == before
    assert not (vault / "notes/v.md~").exists()


@pytest.mark.parametrize("temp", [".v.md.tmp123", ".syncthing.v.md.tmp", "v.md.tmp", "v.md___jb_tmp___"])
def test_temp_file_and_rename_save(vault, live_watcher, temp):
    first, second = mark(), mark()
    put(vault, "v.md", first)
    converge({"v.md": first})
    atomic_put(vault, "v.md", second, temp)
    converge({"v.md": second}, gone={first})


def test_rename_keeps_id_and_read_stats(vault, live_watcher):
    m = mark()
    put(vault, "old.md", m)
    converge({"old.md": m})
    before = card_id("old.md")
    api.show(cfg(), before)  # one recorded read
    os.makedirs(vault / "elsewhere")
    os.rename(vault / "old.md", vault / "elsewhere/new.md")
    converge({"elsewhere/new.md": m})
    assert card_id("elsewhere/new.md") == before
    with api.open_index(cfg()) as index:
        assert index.read_stats(before)[0] == 1


def test_case_only_rename(vault, live_watcher):
    m = mark()
    put(vault, "note.md", m)
    converge({"note.md": m})
    before = card_id("note.md")
    os.rename(vault / "note.md", vault / "Note.md")
    converge({"Note.md": m})
    assert card_id("Note.md") == before


def test_trash_and_back_keeps_id_and_stats(vault, live_watcher):
    m, other = mark(), mark()
    put(vault, "d/t.md", m)
    put(vault, "keep.md", other)
    converge({"d/t.md": m, "keep.md": other})
    before = card_id("d/t.md")
    api.show(cfg(), before)
    (vault / ".trash/d").mkdir(parents=True)
    os.rename(vault / "d/t.md", vault / ".trash/d/t.md")
    converge({"keep.md": other}, gone={m})
    os.rename(vault / ".trash/d/t.md", vault / "d/t.md")
    converge({"d/t.md": m, "keep.md": other})
    assert card_id("d/t.md") == before
    with api.open_index(cfg()) as index:
        assert index.read_stats(before)[0] == 1


def test_create_and_delete_inside_the_debounce_window(vault, live_watcher):
    keep, brief = mark(), mark()
    put(vault, "keep.md", keep)
    put(vault, "brief.md", brief)
    (vault / "brief.md").unlink()
    converge({"keep.md": keep}, gone={brief})


def test_twenty_rapid_saves_last_content_wins(vault, live_watcher):
    markers = [mark() for _ in range(20)]
    for m in markers:
        put(vault, "busy.md", m)
    converge({"busy.md": markers[-1]}, gone=set(markers[:-1]))


# --- folders ------------------------------------------------------------------------------------


def test_directory_rename_with_fifty_cards_keeps_ids(vault, live_watcher):
    live = {f"proj/sub{i % 3}/c{i}.md": mark() for i in range(50)}
    for rel, m in live.items():
        put(vault, rel, m)
    converge(live)
    ids = {rel: card_id(rel) for rel in live}
    os.rename(vault / "proj", vault / "archive")
    moved = {"archive/" + rel[len("proj/"):]: m for rel, m in live.items()}
    converge(moved)
    assert {rel: card_id("archive/" + rel[len("proj/"):]) for rel in live} == ids


def test_folder_moved_in_from_outside_and_out_again(vault, tmp_path, live_watcher):
    outside = tmp_path / "outside" / "box"
    stay = mark()
    put(vault, "stay.md", stay)
    inside = {f"c{i}.md": mark() for i in range(10)} | {"deep/er/x.md": mark()}
    for rel, m in inside.items():
        put(outside, rel, m)
    converge({"stay.md": stay})
    shutil.move(str(outside), str(vault / "box"))
    converge({"stay.md": stay} | {f"box/{rel}": m for rel, m in inside.items()})
    shutil.move(str(vault / "box"), str(tmp_path / "outside" / "box"))
    converge({"stay.md": stay}, gone=set(inside.values()))


def test_a_note_replaced_by_a_folder_of_its_name_leaves_no_row(vault, live_watcher):
    """The delete and the new folder land in one batch: the folder's reconcile looks below it,
    so the file of its own name must still be looked at."""
    note, child = mark(), mark()
    put(vault, "fd/Topic.md", note)
    converge({"fd/Topic.md": note})
    time.sleep(1.5)  # the watcher idle again: the next events start a batch of their own
    os.remove(vault / "fd/Topic.md")
    (vault / "fd/Topic.md").mkdir()
    put(vault, "fd/Topic.md/child.md", child)
    converge({"fd/Topic.md/child.md": child}, gone={note})


def test_a_vault_folder_renamed_away_and_back_loses_no_card(vault, live_watcher, tmp_path):
    """Obsidian's "rename vault": the watches follow the folder, so an edit made meanwhile is
    reported under the old name, where nothing is. It must wait, not drop the card."""
    a, b, edited = mark(), mark(), mark()
    put(vault, "notes/a.md", a)
    put(vault, "b.md", b)
    converge({"notes/a.md": a, "b.md": b})
    away = tmp_path / "renamed"
    os.rename(vault, away)
    put(away, "notes/a.md", edited)
    time.sleep(1.5)  # the edit's batch comes due while the folder is away
    os.rename(away, vault)
    converge({"notes/a.md": edited, "b.md": b}, gone={a})
    live_watcher.wait_for("has moved or gone; its changes wait until it is back")


def test_files_written_into_a_brand_new_folder_tree(vault, live_watcher):
    # Files created before watchdog has put a watch on their new folder are found by the
    # reconcile of that folder, not lost.
    live = {}
    for i in range(20):
        rel = f"n{i}/n2/n3/f.md"
        live[rel] = mark()
        put(vault, rel, live[rel])
    converge(live)


def test_git_checkout_like_burst(vault, live_watcher):
    live = {f"notes/r{i}.md": mark() for i in range(500)}
    doomed = {f"notes/d{i}.md": mark() for i in range(200)}
    for rel, m in {**live, **doomed}.items():
        put(vault, rel, m)
    converge({**live, **doomed})
    old = set(live.values()) | set(doomed.values())
    # git: unlink + create for every changed file, unlink for deleted ones, create new ones
    for rel in live:
        (vault / rel).unlink()
        live[rel] = mark()
        put(vault, rel, live[rel])
    for rel in doomed:
        (vault / rel).unlink()
    for i in range(200):
        live[f"notes/new/a{i}.md"] = mark()
        put(vault, f"notes/new/a{i}.md", live[f"notes/new/a{i}.md"])
    converge(live, gone=old)


# --- awkward files ------------------------------------------------------------------------------


def test_malformed_yaml_is_indexed_by_its_body_and_reported(vault, live_watcher, run_cli):
    m = mark()
    (vault / "broken.md").write_text(f"---\ntitle: [unclosed\n---\nstill findable {m}\n")
    converge({"broken.md": m})
    rc, stats, _ = run_cli("stats", "--json")
    assert rc == 0
    assert any(p["path"] == "broken.md" for p in stats["problems"])
    live_watcher.wait_for("broken.md: frontmatter")  # a warning on stderr


def test_non_utf8_content_and_names_do_not_stop_the_watcher(vault, live_watcher):
    m, after = mark(), mark()
    (vault / "latin1.md").write_bytes(f"caf\xe9 {m}\n".encode("latin-1"))
    os.mkdir(os.path.join(os.fsencode(vault), b"bad\xffdir"))
    for name in (b"bad\xffname.md", b"bad\xffdir/inner.md"):
        with open(os.path.join(os.fsencode(vault), name), "wb") as handle:
            handle.write(b"a card whose name is not UTF-8\n")
    os.rename(os.path.join(os.fsencode(vault), b"bad\xffdir"),
              os.path.join(os.fsencode(vault), b"bad\xfedir"))
    put(vault, "after.md", after)
    converge({"latin1.md": m, "after.md": after})
    with api.open_index(cfg()) as index:
        messages = {p["message"] for p in index.problems()}
    assert any("not valid UTF-8" in msg for msg in messages)


def _problem_paths() -> set[str]:
    with api.open_index(cfg()) as index:
        return {p["path"] for p in index.problems()}


def _until(check, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"still {_problem_paths()}")
        time.sleep(0.05)


def test_a_bad_name_renamed_or_deleted_takes_its_problem_along(vault, live_watcher):
    raw = os.fsencode(vault)
    marks = {name: mark() for name in (b"r\xe9sum\xe9.md", b"gone\xff.md", b"bad\xffdir/inner.md")}
    for name, m in marks.items():
        os.makedirs(os.path.dirname(os.path.join(raw, name)), exist_ok=True)
        with open(os.path.join(raw, name), "wb") as handle:
            handle.write(text(m).encode())
    _until(lambda: len(_problem_paths()) == 3)
    os.rename(os.path.join(raw, b"r\xe9sum\xe9.md"), vault / "résumé.md")
    os.unlink(os.path.join(raw, b"gone\xff.md"))
    os.rename(os.path.join(raw, b"bad\xffdir"), vault / "gooddir")  # its parent is reconciled
    _until(lambda: not _problem_paths())
    converge({"résumé.md": marks[b"r\xe9sum\xe9.md"], "gooddir/inner.md": marks[b"bad\xffdir/inner.md"]},
             gone={marks[b"gone\xff.md"]})


def test_empty_file_is_a_card(vault, live_watcher):
    m = mark()
    (vault / f"{m}.md").write_bytes(b"")
    converge({f"{m}.md": m})  # its title is its file name


def test_large_files_are_indexed_only_when_complete(vault, live_watcher):
    """A card written in 1 MiB chunks is indexed whole once it is stable; one over the size
    limit (20 MB) is reported and not indexed, and never leaves a half-written card behind."""
    line = ("lorem ipsum dolor sit amet " * 40 + "\n").encode()
    chunk = line * ((1 << 20) // len(line))  # ~1 MiB
    big, huge = mark(), mark()
    with open(vault / "big.md", "wb") as handle:
        handle.write(b"# big\n")
        for _ in range(2):
            handle.write(chunk)
            handle.flush()
        handle.write(f"the end {big}\n".encode())
    with open(vault / "huge.md", "wb") as handle:
        handle.write(f"# huge {huge}\n".encode())
        while handle.tell() < 20 * 1024 * 1024:
            handle.write(chunk)
            handle.flush()
    after = mark()
    put(vault, "after.md", after)
    converge({"big.md": big, "after.md": after}, gone={huge})
    with api.open_index(cfg()) as index:
        assert any(p["path"] == "huge.md" and "limit" in p["message"] for p in index.problems())


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
    assert "stale watcher lock" in second.stderr()
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


# --- in process: the library API the MCP server uses -------------------------------------------


def test_in_process_watcher_is_refused_while_a_process_holds_the_lock(watcher):
    from memsync.watch import Watcher, WatcherLocked

    proc = watcher()
    with pytest.raises(WatcherLocked, match=f"pid {proc.proc.pid}"):
        Watcher(cfg()).start()
    assert proc.stop() == 0


@contextlib.contextmanager
def settled_watcher():
    """An in-process watcher, past its start-up pass; stopped (lock released) on the way out."""
    from memsync.watch import Watcher

    w = Watcher(cfg())
    w.start()
    try:
        assert w.wait_idle(DEADLINE)
        yield w
    finally:
        w.stop()


def test_overflow_warning_from_watchdog_triggers_a_full_reconcile(vault):
    m = mark()
    put(vault, "o.md", m)
    with settled_watcher():
        # Make the index miss a change no event will report: drop the card behind its back.
        index = Index(cfg().db.path)
        with index.transaction():
            index.remove_file("vault", "o.md")
        index.close()
        assert "o.md" not in view(cfg())
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost"
        )
        converge({"o.md": m})
    assert not cfg().lock_file.exists()


def test_a_watch_filed_under_a_wrong_folder_is_noticed_and_renewed(vault):
    # watchdog can file a new folder's watch under the path of a folder renamed a moment before
    # (created, renamed, created again faster than it reads events); its files are then reported
    # under that wrong path. Put the observer in that state by hand: the next second look at any
    # new folder must notice it, re-watch, and catch up.
    a = mark()
    put(vault, "f1/g/a.md", a)
    with settled_watcher() as w:
        inotify = next(e for e in w._observer.emitters if e.watch.path == str(vault))._inotify
        real = os.fsencode(vault / "f1" / "g")
        wrong = os.fsencode(vault / "f3" / "g")
        wd = inotify._active_callbacks_by_path.pop(real)
        inotify._active_callbacks_by_path[wrong] = wd
        inotify._active_callbacks_by_watch[wd] = wrong
        b = mark()
        put(vault, "f1/g/b.md", b)  # reported as f3/g/b.md, which is not there
        (vault / "elsewhere").mkdir()  # a new folder: looked at again a second later
        converge({"f1/g/a.md": a, "f1/g/b.md": b})


def test_in_process_stop_drains_and_rebuild_agrees(vault):
    from memsync.watch import Watcher

    w = Watcher(cfg())
    w.start()
    live = {f"p/{i}.md": mark() for i in range(10)}
    for rel, m in live.items():
        put(vault, rel, m)
    w.stop()
    assert view(cfg()).keys() == live.keys()
    fresh = Index(vault.parent / "fresh.db")
    Indexer(fresh, cfg().sources).rebuild()
    rows = {r["path"]: r["body"] for r in fresh.cards()}
    fresh.close()
    assert rows == {p: b.split("\n", 1)[1] for p, b in view(cfg()).items()}


def test_in_process_watchers_leave_no_thread_behind(vault):
    from memsync.watch import Watcher

    for _ in range(3):
        w = Watcher(cfg())
        w.start()
        assert w.wait_idle(DEADLINE)
        w.stop()
    assert not [t for t in threading.enumerate() if t.name == "memsync-watch"]


@pytest.mark.stress
def test_inotify_overflow_is_followed_by_a_full_reconcile(vault, watcher):
    """Stop the watcher, create far more events than the kernel queue holds, resume it: the
    overflow warning turns into a full reconcile and nothing is missed."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    proc = watcher()
    live = {f"flood/{d}/seed.md": mark() for d in range(limit // 1000 + 1)}
    for rel, m in live.items():  # folders watched before the flood, so every write is an event
        put(vault, rel, m)
    converge(live)
    proc.proc.send_signal(signal.SIGSTOP)
    try:
        for i in range(limit // 2):  # created + modified + closed: ~1.5 events per file and more
            rel = f"flood/{i // 1000}/{i}.md"
            live[rel] = mark()
            put(vault, rel, live[rel])
    finally:
        proc.proc.send_signal(signal.SIGCONT)
    converge(live, timeout=300)
    # A reconcile for another reason may have caught up first; the overflow's own still comes.
    proc.wait_for("reconciling vault: inotify queue overflowed", timeout=120)
    after = mark()
    put(vault, "after.md", after)
    converge({**live, "after.md": after}, timeout=120)
    assert proc.stop() == 0


def test_a_new_folder_in_a_vault_of_many_folders_is_no_reason_to_rewatch(vault, caplog):
    """The kernel lists inotify watch descriptors in hex: read as decimal, every watch past
    the ninth looked misplaced, and each new folder in a vault of more than 15 folders made the
    watcher re-watch and reconcile the whole vault (and drop the events still queued)."""
    from memsync.watch import Watcher

    live = {f"f{n}/c.md": mark() for n in range(40)}
    for rel, m in live.items():
        put(vault, rel, m)
    caplog.set_level(logging.INFO, logger="memsync")
    w = Watcher(cfg())
    w.start()
    try:
        assert w.wait_idle(DEADLINE)
        for n in range(3):
            live[f"new{n}/c.md"] = mark()
            put(vault, f"new{n}/c.md", live[f"new{n}/c.md"])
            converge(live)
            assert w.wait_idle(DEADLINE)  # includes the second look at the new folder
    finally:
        w.stop()
    assert "re-watching" not in caplog.text
    assert "reconciling vault" not in caplog.text


def test_a_new_folder_tree_renamed_at_once_is_still_watched(vault):
    """watchdog may never watch `box/inner` when `box` is renamed right after both were made;
    the watcher's second look at new folders re-watches them, so later edits are seen."""
    from memsync.watch import Watcher

    w = Watcher(cfg())
    w.start()
    live = {}
    try:
        for round_ in range(5):  # the race does not lose the watch every time
            first, second = mark(), mark()
            put(vault, f"box{round_}/inner/n.md", first)
            os.rename(vault / f"box{round_}", vault / f"crate{round_}")
            old, new = f"crate{round_}/inner/n.md", f"crate{round_}/inner/m.md"
            converge({**live, old: first})
            assert w.wait_idle(DEADLINE)  # includes the second look at the new folders
            before = card_id(old)
            os.rename(vault / old, vault / new)
            put(vault, new, second)
            live[new] = second
            converge(live, gone={first})
            assert card_id(new) == before
    finally:
        w.stop()


# --- sources added and removed while a watcher runs ------------------------------------------------


def source_view(name: str) -> dict[str, str]:
    """path -> title + body of every card of one source."""
    with api.open_index(cfg()) as index:
        rows = index._conn.execute("SELECT path, title, body FROM cards WHERE source = ?", (name,))
        return {r[0]: r[1] + "\n" + r[2] for r in rows}


def wait_until(check, what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            dump_watcher_stacks()
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.02)


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
