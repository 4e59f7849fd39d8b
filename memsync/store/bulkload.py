"""Bulk loads into the index: a rebuild (Index.reload), a source's first index (Index.loading),
a big change in many transactions (Index.carrying_links), and what they need around them: a
larger page cache, a rollback journal for an empty index, FTS5's merges deferred to the end,
the secondary indexes set aside, and the file compacted after.

BulkLoads is part of memsync.store.index.Index, which holds the connection and the state these
methods share with its ordinary writes (the links a transaction touched, the full-text rows
waiting for its end); the methods are here so that index.py keeps the rows' operations.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from memsync.store import fts, journal, migrations

if TYPE_CHECKING:
    from memsync.store.backlinks import Carried

# SQLite's page cache while a bulk load writes (Index.bulk); its default is 2 MiB. At 100,000
# cards the B-trees a load writes into (cards, card_ids, the FTS tables' pages) outgrow that
# many times over, and every insert read its pages back from the OS and spilled dirty ones.
# The cache grows with the tree loaded, to BULK_CACHE_KIB at BULK_FULL_FILES files. At 10,000
# the size of the cache moves a rebuild by a few per cent at most (3 to 32 MiB), while 32 MiB
# took a watcher's cold start from 62 to 97 MiB, which the process then keeps (freed pages stay
# in the C heap); 8 MiB: 70 MiB.
BULK_CACHE_KIB = 32 * 1024
BULK_FULL_FILES = 40_000
# The most a lean Index (a watcher's) takes: a watcher's first index of 100,000 notes peaked at
# 135 MiB with it against 161 MiB with 32, in 30.1 against 31.4 s.
LEAN_CACHE_KIB = 8 * 1024
DEFAULT_CACHE_KIB = 2_000  # SQLite's own default (cache_size = -2000)
# What a rebuild empties and writes again (Index.reload), besides the FTS tables
RELOADED_TABLES = ("cards", "files", "file_changes", "problems", "links", "exact_keys", "folder_stamps")
# meta: an index that holds only some of its files (fts.UNFINISHED)
UNFINISHED = fts.UNFINISHED


def bulk_cache_kib(files: int) -> int:
    """The page cache for a bulk load into a tree of `files` files: in proportion, from
    SQLite's default to BULK_CACHE_KIB."""
    return max(DEFAULT_CACHE_KIB, BULK_CACHE_KIB * min(files, BULK_FULL_FILES) // BULK_FULL_FILES)


class BulkLoads:
    """The bulk-load operations of an Index (memsync.store.index), over its connection."""

    # Index's own, set in Index._begin
    _conn: sqlite3.Connection
    lean: bool
    touched: set[tuple[str, str]]
    rewritten: int
    waiting: fts.Waiting
    _reloading: bool
    _linked: set[tuple[str, str]]
    _before: dict[tuple[str, str], tuple[str, int]]
    _bulk_kib: int
    _carried: Carried | None

    if TYPE_CHECKING:  # Index's own methods
        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _settle(self) -> int: ...
        def mark_changed(self) -> None: ...
        def meta(self, key: str) -> str | None: ...

    @contextmanager
    def carrying_links(self) -> Iterator[None]:
        """A bulk load of many transactions (a first index past sync.ONE_LOAD_FILES, a big
        change): FTS5 merges nothing until its end (fts.defer_merges), when each full-text index
        is merged once, and the links fields of cards an earlier transaction wrote are refreshed
        once (memsync.store.backlinks.Carried). Merging as it went, a first index of 100,000
        notes in 500-file transactions took 51-52 s against 41 s. Searches meanwhile read one
        segment more for each transaction committed. A load that ends early (killed, failed)
        leaves marks in meta for the next reconcile or rebuild to settle (settle_links). Not
        around a transaction: its start and its end are transactions of their own. The WAL is
        checkpointed meanwhile only every journal.BULK_CHECKPOINT_BYTES (sparse_checkpoints)."""
        from memsync.store import backlinks

        assert not self._conn.in_transaction, "carrying spans transactions"
        with self.transaction():
            fts.defer_merges_marked(self._conn)
        self._carried = carried = backlinks.Carried()
        with journal.sparse_checkpoints(self._conn):
            try:
                yield
            finally:
                self._carried = None
            with self.transaction():
                if carried.names:
                    self.rewritten += carried.settle(self._conn, self.waiting)
                fts.end_deferral(self._conn)

    def mark_first_index(self) -> None:
        """A first index of many transactions begins (UNFINISHED); the earliest start is kept."""
        import time

        with self.transaction():
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                               (UNFINISHED, time.strftime("%Y-%m-%dT%H:%M:%S%z")))

    def unfinished_since(self) -> str | None:
        """When a first index that has not ended yet began (UNFINISHED); None when none."""
        return self.meta(UNFINISHED)

    def settle_links(self) -> bool:
        """Settle what a bulk load that ended early left (carrying_links): the links it had not
        refreshed (backlinks.UNSETTLED), the merges it deferred (fts.DEFERRED); returns whether
        there was any."""
        from memsync.store import backlinks

        if self.meta(backlinks.UNSETTLED) is None and self.meta(fts.DEFERRED) is None:
            return False
        with self.transaction():
            self.rewritten += backlinks.settle_unsettled(self._conn) or 0
            if self.meta(fts.DEFERRED) is not None:
                fts.end_deferral(self._conn)
        return True

    @contextmanager
    def bulk(self, files: int) -> Iterator[None]:
        """A larger page cache (bulk_cache_kib) while the rows of `files` files are written (or
        of a tree that size changed); the usual one after. Inside a bulk load at least as large
        (a rebuild's, of every source, around one source's), that one's cache stays."""
        kib = min(bulk_cache_kib(files), LEAN_CACHE_KIB if self.lean else BULK_CACHE_KIB)
        if kib <= self._bulk_kib:
            yield
            return
        before = self._conn.execute("PRAGMA cache_size").fetchone()[0]
        outer, self._bulk_kib = self._bulk_kib, kib
        self._conn.execute(f"PRAGMA cache_size = -{kib}")
        try:
            yield
        finally:
            self._conn.execute(f"PRAGMA cache_size = {before}")
            self._bulk_kib = outer

    @contextmanager
    def reload(self, load_bytes: int = 0) -> Iterator[None]:
        """Inside a transaction: empty everything a rebuild recomputes (ids and read stats are
        kept on purpose), then let the caller write every row again as one bulk load (loading()).
        The emptied tables' secondary indexes, all but those in setaside.LIVE, are set aside
        meanwhile and made again once the rows are in (memsync.store.setaside)."""
        assert self._conn.in_transaction, "a reload runs inside a transaction"
        # from card_terms first: its rows are short, while cards.link_text lies past the body
        self._before = {(r[0], r[1]): (r[2], r[3]) for r in self._conn.execute(
            "SELECT c.source, c.path, c.link_text, c.inlinks FROM card_terms t "
            "JOIN cards c ON c.seq = t.seq WHERE t.links != ''")}
        from memsync.store import backlinks, setaside

        with self._freed_pages_kept():
            # set aside before the tables are emptied and refilled, made again after (setaside.make)
            indexes = setaside.drop(self._conn, RELOADED_TABLES)
            for table in RELOADED_TABLES:
                self._conn.execute(f"DELETE FROM {table}")
            # all are made anew, and merged at the end
            self._conn.execute("DELETE FROM meta WHERE key IN (?, ?)", (backlinks.UNSETTLED, fts.DEFERRED))
            fts.recreate(self._conn)
            with self.loading(load_bytes, indexes):
                yield

    @contextmanager
    def loading(self, load_bytes: int = 0, set_aside: Sequence[str] = ()) -> Iterator[None]:
        """Inside a transaction: the caller writes the rows of files none of which has rows in
        the index (a reload emptied them; a source indexed for the first time has none), then
        the full-text indexes are merged once (memsync.store.fts.defer_merges, whose hash the
        size of the files to load, `load_bytes`, decides). Meanwhile a file's rows are written
        without first looking for old ones to clear: the transaction holds the write lock, so no
        other process can have written any since. A card is written at once (with the links
        field a reload had for it); one without, that links in the files written so far point
        at, waits for the load's links to be known (fts.Waiting). `set_aside`: the indexes a
        reload dropped, made again once the rows are in."""
        assert self._conn.in_transaction, "a load runs inside a transaction"
        from memsync.store import setaside

        fts.defer_merges(self._conn, load_bytes,
                         fts.BULK_HASH_BYTES if self.lean else fts.WHOLE_LOAD_HASH_BYTES)
        self.mark_changed()
        self._reloading = True
        try:
            yield
            # Any other card was written with no links field, and no link points at it: the
            # refresh would find it as it is, after reading it again (at 100,000 cards with no
            # links, 0.84 s of a rebuild's serial end).
            self.touched &= self._linked
        finally:
            self._reloading, self._linked, self._before = False, set(), {}
        setaside.make(self._conn, list(set_aside))  # the links settled next look cards up by name
        # Links first, while FTS5 still defers its merges: the rows they write again are merged
        # with the rest at once (and not counted in `rewritten`, which asks for a later merge).
        self._settle()
        fts.merge_all(self._conn)

    def filling(self) -> AbstractContextManager[bool]:
        """Around the transaction of a bulk load (a rebuild, a first index): when the index holds
        no card yet, through a rollback journal, not the WAL (memsync.store.journal)."""
        return journal.filling(self._conn)

    def holds_nothing(self, source: str | None = None) -> bool:
        """Whether the index has no file (of `source`, or of any), indexed or refused (a problem)."""
        where, args = (" WHERE source = ?", (source,)) if source is not None else ("", ())
        return not any(self._conn.execute(f"SELECT 1 FROM {table}{where} LIMIT 1", args).fetchone()
                       for table in ("files", "problems"))

    @contextmanager
    def _freed_pages_kept(self) -> Iterator[None]:
        """secure_delete FAST meanwhile: deleted content is still cleared from the pages a write
        rewrites anyway, but a freed page is not written again as zeros. Emptying the tables frees
        every page of the old index, and an SQLite built with secure_delete on (Debian's and
        Ubuntu's are) zeroed each one in the WAL before the new rows took it back: a rebuild over
        a 100,000-card index wrote 3.0 GiB instead of 2.1 and took 47-60 s instead of 43-45.
        The pages are refilled in the same transaction, and a file left a tenth free is vacuumed
        after (compact_if_sparse)."""
        before = self._conn.execute("PRAGMA secure_delete").fetchone()[0]
        self._conn.execute("PRAGMA secure_delete = FAST")
        try:
            yield
        finally:
            self._conn.execute(f"PRAGMA secure_delete = {int(before)}")

    def compact_if_sparse(self, resize: bool = False, changed: int = 0) -> bool:
        """After bulk work: shrink the file (memsync.store.fts.compact) when much of it is free pages,
        or when the links fields of a tenth of the cards or more were rewritten since the last
        look. A rewrite leaves the card's old full-text rows inside FTS5's segments until they
        are merged, which frees no page yet: a first index of a linked vault can hold each
        linked body twice (the Korean help vault's full-text index was 1.9x its merged size).
        With `resize` (a rebuild), also when the file's pages are not migrations.PAGE_SIZE
        ones, to move it to them: an upgrade that found another process holding the file
        could not. Otherwise, when `changed` cards are a third of the index or more, the
        full-text indexes are merged into one segment each (searches read one, not dozens:
        a quarter less time in SQLite on the 10,000-card bench index), without the VACUUM."""
        if self._conn.in_transaction:
            return False
        rewritten, self.rewritten = self.rewritten, 0
        resize = resize and self._conn.execute(
            "PRAGMA page_size").fetchone()[0] != migrations.PAGE_SIZE
        if resize or fts.sparse(self._conn) or (rewritten and rewritten * 10 >= self._card_count()):
            fts.compact(self._conn, migrations.PAGE_SIZE if resize else None)
            return True
        if changed and changed * 3 >= self._card_count() > 0:  # a first index, a bulk import
            with self.transaction():
                fts.merge(self._conn)
        return False

    def _card_count(self) -> int:
        return self._conn.execute("SELECT count(*) FROM cards").fetchone()[0]

    def settle_segments(self) -> bool:
        """Idle work for the watcher (memsync.watch.idle): one slice of merging up a bulk load's
        full-text segment while fts.UNSETTLED marks it; True while more remains. The mark stays
        until saves have put segments beside it and a merge of them has run to its end."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (fts.UNSETTLED,)).fetchone()
        if row is None:
            return False
        with self.transaction():
            merged = fts.settle_step(self._conn)
            if merged:
                self._conn.execute("UPDATE meta SET value = 'merging' WHERE key = ?", (fts.UNSETTLED,))
            elif row[0] == "merging":
                self._conn.execute("DELETE FROM meta WHERE key = ?", (fts.UNSETTLED,))
        return merged
