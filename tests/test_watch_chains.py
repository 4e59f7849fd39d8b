"""Folder renames in a chain keep card ids, however the chain is split across batches.

The sequence `make stress` found (tests/test_watch_props.py): a card in f1/g; rename f1 -> f2;
create a.md; create f1/g/a.md; rename a.md -> f1/g/b.md; rename f2 -> f4; move f1/g/b.md out of
the vault. watchdog reports the second folder rename late (it holds every event behind the
unpaired half of a.md's rename, and a busy machine adds more), so the worker can look at the card
in f2 after f2 has gone and before it hears where it went. The card must keep its id, and the
index must equal a rebuild.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time

from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
)

from memsync.store.index import Index
from memsync.watch import plan
from memsync.watch.observing import _Handler
from memsync.watch.pairing import VANISH_GRACE

from .helpers import settle_to_rebuild
from .watching import DEADLINE, cfg, converge, put, settled_watcher


def paths_and_ids(db) -> dict[str, int]:
    index = Index(db)
    try:
        return {row["path"]: row["id"] for row in index.cards()}
    finally:
        index.close()


def settled(w, tmp) -> dict[str, int]:
    """The watcher's index once it equals a rebuild, as path -> id."""
    settle_to_rebuild(cfg(), tmp, w, DEADLINE)
    return paths_and_ids(cfg().db.path)


@contextlib.contextmanager
def watchdog_lagging(w, vault):
    """Hold watchdog's reading of the vault's events: the kernel queues them meanwhile, and
    they are reported (in order) once this ends, as on a machine too busy to read them."""
    group = next(e for e in w._observer.emitters if e.watch.path == str(vault))._inotify
    with group._lock:
        yield


def the_chain(vault, outside):
    os.rename(vault / "f1", vault / "f2")
    put(vault, "a.md", "mkaaaa")
    put(vault, "f1/g/a.md", "mkbbbb")
    os.rename(vault / "a.md", vault / "f1/g/b.md")
    os.rename(vault / "f2", vault / "f4")
    shutil.move(str(vault / "f1/g/b.md"), str(outside / "b.md"))


def check_the_chain(vault, perform) -> None:
    """A card in f1/g, settled; `perform(watcher, outside)` runs the chain; then the index must
    equal a rebuild, with the card at f4/g under the id it had."""
    outside = vault.parent / "outside"
    outside.mkdir()
    put(vault, "f1/g/note.md", "mknote")
    with settled_watcher() as w:
        before = paths_and_ids(cfg().db.path)["f1/g/note.md"]
        perform(w, outside)
        got = settled(w, vault.parent)
    assert set(got) == {"f4/g/note.md", "f1/g/a.md"}
    assert got["f4/g/note.md"] == before


def test_the_chain_as_it_happens(vault):
    check_the_chain(vault, lambda _w, outside: the_chain(vault, outside))


def test_the_chain_with_every_event_reported_at_once(vault):
    # The disk is in its final state before watchdog reads any event of the chain.
    def perform(w, outside):
        with watchdog_lagging(w, vault):
            the_chain(vault, outside)

    check_the_chain(vault, perform)


def test_the_chain_with_the_second_folder_rename_reported_late(vault):
    # watchdog is kept from reading the vault's events; the chain's events are handed to the
    # watcher's own handler as watchdog reported them when it failed, the second folder rename
    # late enough for the worker to have looked at the card in f2 after f2 had gone.
    def at(rel):
        return str(vault / rel)

    def perform(w, outside):
        handler = _Handler(w, "vault", str(vault), w._wants["vault"])
        with watchdog_lagging(w, vault):
            the_chain(vault, outside)
            for event in (DirMovedEvent(at("f1"), at("f2")), FileCreatedEvent(at("a.md")),
                          DirCreatedEvent(at("f1")), DirCreatedEvent(at("f1/g")),
                          FileCreatedEvent(at("f1/g/a.md")), FileDeletedEvent(at("a.md"))):
                handler.dispatch(event)
            # Past the wait for a rename whose target vanished (plan.HOLD) and past a vanished
            # card's grace: the card has been dropped from f2 by now.
            time.sleep(plan.HOLD + VANISH_GRACE + 0.2)
            handler.dispatch(DirMovedEvent(at("f2"), at("f4")))
            handler.dispatch(FileDeletedEvent(at("f1/g/b.md")))

    check_the_chain(vault, perform)


def test_a_folder_made_renamed_and_made_again_faster_than_watchdog_reads_is_watched(vault):
    # mkdir f1; mv f1 f2; mkdir f1, all before watchdog reads an event: it watches the new f1
    # while handling the first one's creation, then files that watch under f2 with the rename,
    # and the second f1's creation returns the same watch. The real f2 has no watch at all.
    with settled_watcher() as w:
        with watchdog_lagging(w, vault):
            (vault / "f1").mkdir()
            os.rename(vault / "f1", vault / "f2")
            (vault / "f1").mkdir()
        assert w.wait_idle(DEADLINE)
        time.sleep(plan.RECHECK + 0.2)  # the second look at the new folders
        assert w.wait_idle(DEADLINE)
        put(vault, "f2/x.md", "mkxxxx")
        put(vault, "f1/y.md", "mkyyyy")
        converge({"f2/x.md": "mkxxxx", "f1/y.md": "mkyyyy"}, timeout=10)


def test_a_rename_reported_after_its_card_was_dropped_and_found_anew_keeps_the_id(vault):
    # A card's file is renamed into a new folder. The worker first hears of it vanishing (and
    # drops it), then of the new folder (whose scan finds the file and gives it a new id), and
    # only then of the rename itself. The rename must give the file its old id back.
    def at(rel):
        return str(vault / rel)

    put(vault, "f1/note.md", "mknote")
    with settled_watcher() as w:
        before = paths_and_ids(cfg().db.path)["f1/note.md"]
        handler = _Handler(w, "vault", str(vault), w._wants["vault"])
        with watchdog_lagging(w, vault):
            (vault / "f2").mkdir()
            os.rename(vault / "f1/note.md", vault / "f2/note.md")
            handler.dispatch(FileDeletedEvent(at("f1/note.md")))
            time.sleep(plan.HOLD + VANISH_GRACE + 0.5)  # dropped by now
            handler.dispatch(DirCreatedEvent(at("f2")))
            time.sleep(plan.RECHECK + 0.5)  # the new folder scanned by now
            handler.dispatch(FileMovedEvent(at("f1/note.md"), at("f2/note.md")))
        got = settled(w, vault.parent)
    assert got == {"f2/note.md": before}
