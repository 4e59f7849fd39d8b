"""A card whose file vanishes waits a short grace before it leaves the index, since editors and
sync tools save by delete and create: also when the file vanishes after the watcher's check and
before its read, and when something other than a file takes its place for a moment."""

from __future__ import annotations

import os
import threading
import time

from memsync import reading
from memsync.watch import pairing

from .helpers import settle_to_rebuild
from .watching import DEADLINE, card_id, cfg, mark, put, settled_watcher


def wait_for_batches(w, more_than: int) -> None:
    deadline = time.monotonic() + DEADLINE
    while w.batches <= more_than:
        assert time.monotonic() < deadline, "the watcher took no batch"
        time.sleep(0.005)


def test_a_card_gone_between_the_check_and_the_read_is_not_dropped(vault, tmp_path, monkeypatch):
    """The watcher's next read of a.md finds it deleted, after the batch found it there; the
    file is back when the watcher reads it again (a save by delete and create)."""
    put(vault, "a.md", mark())
    with settled_watcher() as w:
        kept = card_id("a.md")
        real_look = reading.look
        reads: list[str] = []
        saved = (vault / "a.md").read_bytes()

        def look_meanwhile(root, adapter, max_bytes, rel, stored):
            if rel == "a.md" and threading.current_thread().name == "memsync-watch":
                reads.append(rel)
                if len(reads) == 1:
                    os.unlink(vault / "a.md")
                elif len(reads) == 2:
                    (vault / "a.md").write_bytes(saved)
            return real_look(root, adapter, max_bytes, rel, stored)

        monkeypatch.setattr(reading, "look", look_meanwhile)
        before = (w.totals.added, w.totals.removed)
        os.utime(vault / "a.md")  # a touch, which has the watcher read a.md
        deadline = time.monotonic() + DEADLINE
        while len(reads) < 2:  # gone, then back
            assert time.monotonic() < deadline, f"a.md read {len(reads)} times"
            time.sleep(0.005)
        settle_to_rebuild(cfg(), tmp_path, w, DEADLINE)
        assert (w.totals.added, w.totals.removed) == before  # never dropped, so never added again
        assert card_id("a.md") == kept


def test_a_card_replaced_by_a_symlink_for_a_moment_is_not_dropped(vault, tmp_path, monkeypatch):
    """A symlink is never read as a card: one in the card's place is a file gone, which waits
    out its grace (made long here, to put the file back within it)."""
    monkeypatch.setattr(pairing, "VANISH_GRACE", 2.0)
    put(vault, "a.md", mark())
    (tmp_path / "elsewhere.md").write_text("outside the vault\n")
    with settled_watcher() as w:
        kept = card_id("a.md")
        data = (vault / "a.md").read_bytes()
        before = (w.totals.added, w.totals.removed, w.batches)
        os.symlink(tmp_path / "elsewhere.md", vault / ".link")
        os.replace(vault / ".link", vault / "a.md")
        wait_for_batches(w, before[2])
        assert card_id("a.md") == kept  # looked at, and still there
        (vault / ".save").write_bytes(data)
        os.replace(vault / ".save", vault / "a.md")
        settle_to_rebuild(cfg(), tmp_path, w, DEADLINE)
        assert (w.totals.added, w.totals.removed) == before[:2]
        assert card_id("a.md") == kept
