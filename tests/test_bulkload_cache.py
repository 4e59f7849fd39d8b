"""The page cache of a bulk load (memsync.store.bulkload): larger while a first index or a
rebuild writes, in proportion to the tree up to a cap, and given back after."""

from __future__ import annotations

from memsync import config
from memsync.store import bulkload
from memsync.store.index import Index
from memsync.sync import Indexer

from . import rebuilding
from .rebuilding import CARDS, fill

small_batches = rebuilding.small_batches  # autouse: the small thresholds for every test here


def test_a_bulk_load_writes_with_a_larger_page_cache_and_gives_it_back(vault, tmp_path, monkeypatch):
    fill(vault)
    monkeypatch.setattr(bulkload, "BULK_FULL_FILES", CARDS // 2)  # this vault gets it all
    index = Index(tmp_path / "bulk.db")
    usual = index._conn.execute("PRAGMA cache_size").fetchone()[0]
    seen = []

    def progress(done: int, total: int) -> None:  # called between the batches it writes
        if done < total:  # not the last call, made once the writing is over
            seen.append(index._conn.execute("PRAGMA cache_size").fetchone()[0])

    try:
        work = Indexer(index, config.load().sources, workers=1)
        work.reconcile(progress=progress)  # a first index: every file is work
        work.rebuild(progress=progress)
        assert seen and set(seen) == {-bulkload.BULK_CACHE_KIB}
        assert index._conn.execute("PRAGMA cache_size").fetchone()[0] == usual
        index._conn.execute("PRAGMA cache_size = -1234")  # a setting of the caller's own survives
        assert work.rebuild().added == CARDS + 1
        assert index._conn.execute("PRAGMA cache_size").fetchone()[0] == -1234
    finally:
        index.close()


def test_the_bulk_page_cache_grows_with_the_tree_up_to_its_cap():
    # a small tree (a watcher's first index of a small vault) keeps SQLite's own cache
    assert bulkload.bulk_cache_kib(0) == bulkload.bulk_cache_kib(100) == bulkload.DEFAULT_CACHE_KIB
    full, cap = bulkload.BULK_FULL_FILES, bulkload.BULK_CACHE_KIB
    assert bulkload.bulk_cache_kib(full // 2) == cap // 2
    assert bulkload.bulk_cache_kib(full) == bulkload.bulk_cache_kib(10 * full) == cap


def test_a_bulk_load_inside_a_larger_one_keeps_the_larger_cache(tmp_path):
    index = Index(tmp_path / "nested.db")
    full, cap = bulkload.BULK_FULL_FILES, bulkload.BULK_CACHE_KIB

    def cache() -> int:
        return index._conn.execute("PRAGMA cache_size").fetchone()[0]

    usual = cache()
    try:
        with index.bulk(full):  # a rebuild of every source, around one source's load
            with index.bulk(full // 4):
                assert cache() == -cap
            assert cache() == -cap
        with index.bulk(full // 4):
            with index.bulk(full):
                assert cache() == -cap
            assert cache() == -(cap // 4)
        assert cache() == usual
    finally:
        index.close()


def test_a_first_index_of_a_small_tree_writes_with_a_cache_in_proportion(vault, tmp_path, monkeypatch):
    fill(vault)
    monkeypatch.setattr(bulkload, "BULK_FULL_FILES", 100 * CARDS)
    monkeypatch.setattr(bulkload, "DEFAULT_CACHE_KIB", 1)
    index = Index(tmp_path / "bulk.db")
    seen = []

    def progress(done: int, total: int) -> None:
        if done < total:
            seen.append(index._conn.execute("PRAGMA cache_size").fetchone()[0])

    try:
        Indexer(index, config.load().sources, workers=1).reconcile(progress=progress)
        files = CARDS + 2  # and the broken and the too-large file
        assert seen and set(seen) == {-(bulkload.BULK_CACHE_KIB * files // (100 * CARDS))}
    finally:
        index.close()
