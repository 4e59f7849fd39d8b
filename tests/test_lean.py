"""A process that keeps running stays small: a watcher's bulk loads gather full-text terms in a
bounded hash, and the memory a load freed goes back to the system (memsync.heap)."""

from __future__ import annotations

import sys
import threading

import pytest

from memsync import config, heap, sync
from memsync.store import bulkload, fts, setaside
from memsync.store.index import Index
from memsync.sync import Indexer

from .rebuilding import fill
from .watching import DEADLINE


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def at_end_of_first_load(db, monkeypatch, lean: bool) -> tuple[int, bool, int]:
    """A first index of the vault: the hash its load gathered terms in, whether the whole load
    was still in it at its end (cards_fts_data held only FTS5's records 1 and 10), and the page
    cache it wrote through (KiB)."""
    seen = []
    make = setaside.make

    def watched(conn, statements):
        seen.append((conn.execute("SELECT v FROM cards_fts_config WHERE k = 'hashsize'").fetchone()[0],
                     conn.execute("SELECT max(id) FROM cards_fts_data").fetchone()[0] == 10,
                     -conn.execute("PRAGMA cache_size").fetchone()[0]))
        make(conn, statements)

    monkeypatch.setattr(setaside, "make", watched)
    index = Index(db, lean=lean)
    try:
        report = Indexer(index, config.load().sources, workers=1).reconcile()
    finally:
        index.close()
    assert report.added >= 200
    return seen[0]


def test_a_lean_index_loads_through_the_bounded_hash_and_cache_and_a_command_holds_more(
        vault, tmp_path, monkeypatch):
    monkeypatch.setattr(sync, "PARALLEL_FROM", 60)  # 300 cards are a first load, one transaction
    fill(vault, linked=False)
    # The bounds made smaller than what this load (a few hundred KB) would take: the hash and
    # the cache a lean Index caps; the whole bulk cache at 300 files.
    monkeypatch.setattr(fts, "BULK_HASH_BYTES", 16 * 1024)
    monkeypatch.setattr(bulkload, "LEAN_CACHE_KIB", 3000)
    monkeypatch.setattr(bulkload, "BULK_FULL_FILES", 300)
    whole = at_end_of_first_load(tmp_path / "command.db", monkeypatch, lean=False)
    lean = at_end_of_first_load(tmp_path / "watcher.db", monkeypatch, lean=True)
    assert whole[0] > 100 * 1024 and whole[1] and whole[2] == bulkload.BULK_CACHE_KIB
    assert lean == (16 * 1024, False, 3000)  # written out in segments as it went


def test_a_watcher_indexes_a_new_vault_lean_and_gives_the_memory_back(vault, monkeypatch):
    from memsync.watch import Watcher

    monkeypatch.setattr(sync, "PARALLEL_FROM", 60)
    fill(vault, linked=False)
    monkeypatch.setattr(fts, "BULK_HASH_BYTES", 16 * 1024)  # below this load's few hundred KB
    hashes, given = [], []
    sized, give_back = fts.bulk_hash_bytes, heap.give_back

    def recorded(*args):
        hashes.append(sized(*args))
        return hashes[-1]

    monkeypatch.setattr(fts, "bulk_hash_bytes", recorded)
    monkeypatch.setattr(heap, "give_back", lambda: given.append(len(hashes)) or give_back())
    # Another thread running, as in an MCP server: the watcher indexes in its own process (with
    # no thread, a catch-up in a child of its own does it first: tests/test_watch_apart.py).
    other = threading.Event()
    threading.Thread(target=other.wait, daemon=True).start()
    w = Watcher(config.load())
    w.start()
    try:
        assert w.wait_started(DEADLINE)
    finally:
        w.stop()
        other.set()
    # every load it made (a first index; a second look at files written too recently to trust
    # their times is one more) gathered its terms in the bounded hash
    assert hashes and max(hashes) == 16 * 1024
    assert given and given[0] >= 1  # after the load, not only before it
    index = Index(config.load().db.path)
    try:
        assert sum(1 for _ in index.cards()) >= 300
    finally:
        index.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_heap_memory_goes_back_to_the_system():
    blocks = [bytes(2000) for _ in range(30_000)]  # 60 MB in blocks glibc's malloc serves
    keep = blocks[-1]  # the newest block holds the heap's top: free() alone cannot shrink it
    before = rss_kib()
    del blocks
    held = rss_kib()
    assert heap.give_back()
    after = rss_kib()
    assert keep
    assert held > before - 10_000  # glibc kept what was freed
    assert held - after > 30_000  # and handed most of the 60 MB back
