"""A card `consolidate` moves to its folder keeps its file and its id, with a watcher beside."""

from __future__ import annotations

import time

from memsync import config
from memsync.store.index import Index
from memsync.write import atomic

from .conftest import WATCH_DEADLINE
from .test_lifecycle_consolidate import _vault

OLD, NEW = "03-Knowledge/oops.md", "08-Mistakes/oops.md"


def _id_at(rel: str) -> int | None:
    index = Index(config.load().db.path)
    try:
        row = index.card_by_path("vault", rel)
        return row["id"] if row else None
    finally:
        index.close()


def _settled(watching, at: str, gone: str) -> int | None:
    """The id of the card at `at` once the index has it there, not at `gone`, and the watcher
    has logged nothing for a while (its late pairings done)."""
    deadline = time.monotonic() + WATCH_DEADLINE
    quiet_since, log = time.monotonic(), watching.stderr()
    while time.monotonic() < deadline:
        now = watching.stderr()
        if now != log:
            quiet_since, log = time.monotonic(), now
        if _id_at(at) is not None and _id_at(gone) is None and time.monotonic() - quiet_since > 2.5:
            return _id_at(at)
        time.sleep(0.05)
    raise AssertionError(f"the index did not settle with the card at {at}: {log}")


def test_a_move_and_its_undo_keep_the_file_itself(cli, vault, home):
    """Moved as `mv` moves a file, not copied and removed: a watcher (or any tool) that tells a
    rename from a new file by its inode sees a rename."""
    _vault(vault, cli, home)
    inode = (vault / OLD).stat().st_ino
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and (vault / NEW).stat().st_ino == inode
    assert cli("consolidate", "--undo", done["run"])[0] == 0
    assert (vault / OLD).stat().st_ino == inode


def test_a_watcher_beside_a_move_and_its_undo_keeps_the_cards_id(cli, vault, home, watcher, monkeypatch):
    """Each new name is made durable (a directory fsync) before the next step; on a busy disk
    that takes longer than the watcher's quiet window, so it must not fall between two names of
    one card, or the watcher indexes a copy and the old card goes with the old name."""
    _vault(vault, cli, home)
    card = _id_at(OLD)
    real_fsync_dir = atomic.fsync_dir

    def slow_disk(folder):
        time.sleep(0.3)
        real_fsync_dir(folder)

    monkeypatch.setattr(atomic, "fsync_dir", slow_disk)
    watching = watcher()
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["moves"]
    assert _settled(watching, NEW, OLD) == card
    assert cli("consolidate", "--undo", done["run"])[0] == 0
    assert _settled(watching, OLD, NEW) == card


def test_a_watcher_batch_between_the_move_and_its_sync_costs_the_card_no_id(cli, vault, home, monkeypatch):
    """A watcher's batch can hold the new name without the old one going (that deletion came
    with its folder's, in the next batch): it indexes the new name as a new card. The run's
    own sync right after, which finds the old name gone, must not drop the card that was
    there: its id goes to the new name, the watcher's new card gives way."""
    from contextlib import closing

    from memsync import session
    from memsync.write import runs

    _vault(vault, cli, home)
    card = _id_at(OLD)
    transition = runs.transition

    def then_a_watcher_batch(cfg, at, run, files, direction):
        transition(cfg, at, run, files, direction)
        with closing(Index(cfg.db.path)) as index:
            session.indexer(cfg, index).sync_paths("vault", [NEW if direction == "apply" else OLD])

    monkeypatch.setattr(runs, "transition", then_a_watcher_batch)
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and (_id_at(NEW), _id_at(OLD)) == (card, None)
    assert cli("consolidate", "--undo", done["run"])[0] == 0
    assert (_id_at(OLD), _id_at(NEW)) == (card, None)
