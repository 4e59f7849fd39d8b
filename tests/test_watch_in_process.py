"""The watcher in process, as the MCP server runs it: the lock, a lost inotify queue and a
misfiled watch made good by a reconcile, a clean stop, no thread left behind, new folders seen."""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path

import pytest

from memsync.store.index import Index
from memsync.sync import Indexer

from .watching import (
    DEADLINE,
    card_id,
    cfg,
    converge,
    mark,
    put,
    settled_watcher,
    view,
)

# --- in process: the library API the MCP server uses -------------------------------------------


def test_in_process_watcher_is_refused_while_a_process_holds_the_lock(watcher):
    from memsync.watch import Watcher, WatcherLocked

    proc = watcher()
    with pytest.raises(WatcherLocked, match=f"pid {proc.proc.pid}"):
        Watcher(cfg()).start()
    assert proc.stop() == 0


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
