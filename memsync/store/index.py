"""The SQLite index: the typed operations over its connection (memsync.store.connection).

The connection is private to memsync.store: the store's modules (searchsql, vectors, tally,
health, ...) hold every SQL string, and everything else calls them or the methods here.

Every write batch is one BEGIN IMMEDIATE transaction (Index.transaction).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from memsync import cjk
from memsync.store import fts
from memsync.store.bulkload import UNFINISHED, BulkLoads
from memsync.store.cardids import CardIds
from memsync.store.cardreads import CARD_COLUMNS, CardReads
from memsync.store.connection import BUSY_TIMEOUT_MS, connect, open_existing
from memsync.store.fields import CardFields, note_name
from memsync.store.filerows import FileRows

if TYPE_CHECKING:  # indexing's records: a search process does not load them (memsync.model)
    from memsync.model.indexing import Card, Signature
    from memsync.store.backlinks import Carried

# A search maps the file instead of copying it page by page through read(): it touches a few
# hundred scattered pages (FTS doclists, the hits' bodies), and a one-shot CLI process starts
# with an empty page cache. Only searches ask for it (Index.map_for_search): a rebuild or its
# compaction reads every page, and mapped they would all count in the writer's memory.
MMAP_BYTES = 1 << 30
FTS_TABLES = tuple(fts.FTS_COLUMNS)


class Index(BulkLoads, CardIds, CardReads, FileRows):
    """Typed operations over one index file. Not thread-safe: one Index per thread. Its bulk
    loads (a rebuild, a first index) are memsync.store.bulkload's, its card ids
    memsync.store.cardids', its reads of single cards and rows memsync.store.cardreads', its
    `files` rows memsync.store.filerows'."""

    def __init__(self, path: Path | str, lean: bool = False):
        self._begin(Path(path), connect(path), lean)

    @classmethod
    def existing(cls, path: Path | str, wait: float = BUSY_TIMEOUT_MS / 1000) -> Index:
        """An index opened as it is, for `memsync doctor`: never created, never migrated."""
        index = cls.__new__(cls)
        index._begin(Path(path), open_existing(path, wait), lean=False)
        return index

    def _begin(self, path: Path, conn: sqlite3.Connection, lean: bool) -> None:
        self.path, self._conn = path, conn
        self._file = _identity(path)  # the file opened: another put at `path` later is not it
        # For a process that keeps running (a watcher), whose peak memory stays its size in the
        # system's eyes: a bulk load gathers full-text terms in FTS5's bounded bulk hash, never
        # one holding the whole load (loading()), and writes through at most LEAN_CACHE_KIB of
        # page cache (bulk()). The whole load's hash saved a first index of 10,000 notes 0.1 s
        # of 2 s and raised its peak RSS from 69 to 96 MB.
        self.lean = lean
        # (source, link name)s whose cards' links fields may have changed in this transaction:
        # refreshed just before it commits (memsync.store.backlinks).
        self.touched: set[tuple[str, str]] = set()
        # cards whose FTS rows a links refresh rewrote since the last compact_if_sparse()
        self.rewritten = 0
        self._reloading = False  # inside reload(): the derived tables were emptied in this transaction
        # inside reload(): the (source, name)s the links of the files it has written point at, and
        # those of the cards it gave back a links field: the only ones whose links can change
        self._linked: set[tuple[str, str]] = set()
        # inside reload(): (source, path) -> (links field, in-links) of the cards links pointed at
        self._before: dict[tuple[str, str], tuple[str, int]] = {}
        self._bulk_kib = 0  # inside bulk(): the page cache it set, in KiB
        self.waiting = fts.Waiting()  # full-text rows written when the transaction ends
        self._held: set[tuple[str, str]] = set()  # the (source, name)s of the cards waiting
        self._carried: Carried | None = None  # inside carrying_links()

    def close(self) -> None:
        self._conn.close()

    def replaced(self) -> bool:
        """Whether `path` names another file now, or none: a damaged index set aside and built
        anew (memsync.store.salvage), or the file moved or deleted. This connection still has
        the old one open, and what it writes there no search will read."""
        return _identity(self.path) != self._file

    def map_for_search(self) -> None:
        """Read this index through a memory map from now on (see MMAP_BYTES)."""
        self._conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}").fetchall()

    @property
    def in_transaction(self) -> bool:
        return self._conn.in_transaction

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        self.touched, rewritten = set(), 0
        try:
            yield self._conn
            rewritten = self._settle()
        except BaseException:
            self.touched, self._held = set(), set()
            self.waiting.forget()
            if self._conn.in_transaction:  # SQLite ends it by itself on some errors (a full disk):
                self._conn.execute("ROLLBACK")  # a ROLLBACK then would hide that error behind its own
            raise
        self._conn.execute("COMMIT")
        self.rewritten += rewritten

    def _settle(self) -> int:
        """Before a commit: the links fields of the cards whose names the transaction touched
        (memsync.store.backlinks), then the full-text rows left waiting for them. Returns how many
        cards had their full-text rows written again."""
        rewritten = 0
        if self.touched:
            from memsync.store import (
                backlinks,  # here and below: only writes need them, not a search
            )

            touched = self.touched
            if self._carried is not None:
                touched = self._carried.keep(self._conn, touched, self._held)
            rewritten = backlinks.refresh(self._conn, touched, self.waiting) if touched else 0
            self.touched = set()
        self._held = set()
        self.waiting.write(self._conn)
        return rewritten

    # --- writing cards --------------------------------------------------------------------

    def replace_file(
        self, source: str, file: str, cards: list[Card], fields: list[CardFields],
        sig: Signature, digest: str, indexed_ns: int,
    ) -> None:
        """Store the cards of one file (with their pre-tokenized fields), replacing the old."""
        from memsync.store import fieldstore

        # Always clear first, even when our snapshot said the file was new: another process
        # (a watcher, an MCP server) may have indexed it since. Not while reloading (a rebuild
        # that emptied the tables in this transaction): nothing can be there to clear.
        if not self._reloading:
            self._delete_cards(source, file)
        for card, card_fields in zip(cards, fields, strict=True):
            card_id = self.id_for(source, card.path)
            # A reload gives a card the links field it had before: the backlinks refresh at its
            # end leaves a card alone whose links still say the same (most of them).
            link_text, inlinks = self._before.get((source, card.path), ("", 0))
            # body: str, or its UTF-8 when the look crossed from a reader (memsync.reading), stored
            # as TEXT either way
            seq = self._conn.execute(
                f"INSERT INTO cards ({CARD_COLUMNS}, project, tag_set, name, link_text, inlinks) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,CAST(? AS TEXT),?,?,?,?,?,?,?)",
                (
                    card_id, source, card.path, file, card.title, card.kind,
                    fieldstore.json_list(list(card.tags)), fieldstore.json_list(list(card.aliases)),
                    card.created, card.updated, card.invalid_at, card.superseded_by,
                    card.supersedes, card.priority, card.ttl, card.body, card.problem,
                    card.summary,
                    card.project,
                    *fieldstore.card_columns(card_fields),
                    link_text, inlinks,
                ),
            ).lastrowid
            # A reload writes at once the rows of cards no link is known to point at (most of
            # them, in most vaults) and of those whose links field it could give back, so that
            # FTS5's work overlaps the reading of the files still to come. A card whose links
            # turn out otherwise is written again at its end.
            wait = not self._reloading or (
                not link_text and (source, card_fields.name) in self._linked)
            self.touched |= fieldstore.insert_rows(
                self._conn, seq, source, card_fields,  # type: ignore[arg-type]  # seq: set by INSERT
                self.waiting if wait else None, cjk.to_index_text(link_text) if link_text else "")
            if wait and card_fields.name:
                self._held.add((source, card_fields.name))
            if self._reloading:
                self._linked.update((source, name) for _, name, _ in card_fields.links)
                if link_text and card_fields.name:
                    self._linked.add((source, card_fields.name))
        self._conn.execute(
            "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
            (source, file, sig.size, sig.mtime_ns, sig.ctime_ns, sig.ino, digest, indexed_ns),
        )
        # The content is new (or read anew) now; an mtime ahead of this read is a clock set
        # wrong, not a time it changed (memsync.store.schema_lifecycle.m017_files_changed)
        self._conn.execute("INSERT OR REPLACE INTO file_changes VALUES (?,?,?)",
                           (source, file, min(sig.mtime_ns, indexed_ns)))
        problems = [c.problem for c in cards if c.problem]
        if problems or not self._reloading:  # a reload starts with no problems row to clear
            self.set_problem(source, file, "; ".join(dict.fromkeys(problems)) if problems else None)

    def _delete_cards(self, source: str, file: str) -> int:
        from memsync.store import fieldstore

        cards = self._conn.execute(
            "SELECT seq, name, body FROM cards WHERE source = ? AND file = ?", (source, file)
        ).fetchall()
        self.touched |= fieldstore.delete(self._conn, source, cards, self.waiting)
        for seq, _, _ in cards:
            self._conn.execute("DELETE FROM cards WHERE seq = ?", (seq,))
        return len(cards)

    def remove_file(self, source: str, file: str) -> int:
        """Drop a file's cards from the index. Their ids stay bound to their paths (a restore
        brings the same id back) and their read stats stay (only a purge clears them)."""
        removed = self._delete_cards(source, file)
        self._conn.execute("DELETE FROM files WHERE source = ? AND path = ?", (source, file))
        self._conn.execute("DELETE FROM file_changes WHERE source = ? AND path = ?", (source, file))
        self.set_problem(source, file, None)
        return removed

    def move_file(self, source: str, src: str, dst: str) -> bool:
        """Re-key an indexed file and its cards from src to dst, keeping ids and stats."""
        if src == dst or self.file_state(source, src) is None:
            return False
        if self.file_state(source, dst) is not None:
            self.remove_file(source, dst)
        rows = self._conn.execute(
            "SELECT id, path FROM cards WHERE source = ? AND file = ?", (source, src)
        ).fetchall()
        from memsync.store import fieldstore

        self.touched |= fieldstore.move(self._conn, source, src, note_name(dst))
        for card_id, path in rows:
            new_path = dst + path[len(src):]
            self._retire_path(source, new_path)
            self._conn.execute("UPDATE card_ids SET path = ? WHERE id = ?", (new_path, card_id))
            self._conn.execute(
                "UPDATE cards SET path = ?, file = ? WHERE id = ?", (new_path, dst, card_id)
            )
        # Title and kind may come from the path (file stem, folder): forget the hash so the
        # next look at dst parses it again instead of trusting the unchanged content.
        self._conn.execute(
            "UPDATE files SET path = ?, hash = '' WHERE source = ? AND path = ?", (dst, source, src)
        )
        # dst's time is written by its next look (the hash just forgotten makes it a read)
        self._conn.execute("DELETE FROM file_changes WHERE source = ? AND path = ?", (source, src))
        self._conn.execute(
            "UPDATE problems SET path = ? WHERE source = ? AND path = ?", (dst, source, src)
        )
        return True

    def exchange_files(self, source: str, a: str, b: str) -> int:
        """Two files swapped their paths in one step (renameat2's RENAME_EXCHANGE): each indexed
        one keeps its id and stats at the other's path. Through a hidden path, which no indexed
        file can have, so neither is taken for a file the other replaced. Returns how many
        indexed files moved."""
        if a == b:
            return 0
        if self.file_state(source, b) is None:  # b not indexed (yet): a plain rename of a
            return int(self.move_file(source, a, b))
        if self.file_state(source, a) is None:
            return int(self.move_file(source, b, a))
        aside = f".exchange/{a}"
        self.move_file(source, a, aside)
        self.move_file(source, b, a)
        self.move_file(source, aside, b)
        return 2

    def binds_under(self, source: str, folder: str) -> bool:
        """Whether any id of `source` is bound to a path below `folder` (one range lookup)."""
        low, high = self.folder_range(folder)
        return self._conn.execute("SELECT 1 FROM card_ids WHERE source = ? AND path >= ? AND path < ? "
                                  "LIMIT 1", (source, low, high)).fetchone() is not None

    def set_problem(self, source: str, path: str, message: str | None) -> None:
        if message:
            self._conn.execute(
                "INSERT OR REPLACE INTO problems VALUES (?, ?, ?)", (source, path, message)
            )
        else:
            self._conn.execute("DELETE FROM problems WHERE source = ? AND path = ?", (source, path))

    def end_upgrade_window(self) -> bool:
        """For the holder of the watcher lock (memsync.watch.watcher): no watcher of an older
        schema can still write this index, so the triggers kept for one go
        (memsync.store.schema_lifecycle.retire_file_change_triggers)."""
        from memsync.store.schema_lifecycle import retire_file_change_triggers

        return retire_file_change_triggers(self._conn)

    def mark_synced(self) -> None:
        """Record when the index last caught up with every file (a whole reconcile or rebuild),
        changed or not: search says how old that is when no watcher runs. A first index that
        stopped early (bulkload.UNFINISHED) is finished with it."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with nullcontext() if self._conn.in_transaction else self.transaction():
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('last_sync', ?)", (stamp,))
            self._conn.execute("DELETE FROM meta WHERE key = ?", (UNFINISHED,))

    def mark_changed(self) -> None:
        """Record when the index content last changed (shown by `stats`), and count the change:
        two edits in one second look alike by the time (memsync.store.vectors.fingerprint)."""
        self._conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('last_change', ?)",
            (time.strftime("%Y-%m-%dT%H:%M:%S%z"),),
        )
        self._conn.execute("INSERT INTO meta VALUES ('changes', '1') ON CONFLICT(key) "
                           "DO UPDATE SET value = CAST(value AS INTEGER) + 1")


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino
