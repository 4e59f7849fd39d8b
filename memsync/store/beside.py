"""The bodies' full-text table of a parallel rebuild, built beside the index by a thread.

A rebuild's writer is its critical path, and most of its work is FTS5 tokenizing and indexing
the bodies into cards_fts (memsync.store.fts.BODIES): at 10,000 cards, 0.94 of its 1.61 s. That
work runs in SQLite, which lets go of the GIL, but one connection runs one statement at a time
and one file takes one writer. So while the writer fills every other table, a thread fills a
cards_fts of its own in a scratch file beside the index; at the end of the load its rows (FTS5
keeps an index in four ordinary tables) are copied into the index's, inside the rebuild's
transaction. A rebuild killed meanwhile leaves the old index whole and a scratch file that
`memsync doctor --fix` removes (memsync.doctor.leftovers: it is named after the process).

The rows arrive in the order the writer gives them, so the table holds what the writer would
have built itself, merged the same way (fts.defer_merges, then FTS5's optimize).
"""

from __future__ import annotations

import contextlib
import os
import queue
import sqlite3
import threading
from pathlib import Path

from memsync.store import fts

# Rows handed over at a time: a queue operation per card was a tenth of the thread's time.
BATCH_ROWS = 64
# Batches the writer may run ahead of the thread: the bodies they hold (some MiB) are all the
# memory a slower thread can cost. A writer that runs into the limit waits for the thread.
AHEAD_BATCHES = 64
# The scratch file's page cache: FTS5 writes segments out whole and reads them back only to
# merge them at the end.
CACHE_KIB = 16 * 1024
_DONE, _DROP = "done", "drop"


def scratch_path(index_path: Path) -> Path:
    """`.<index file>.bodies.<pid>.tmp` beside the index (memsync.doctor.leftovers knows it)."""
    return index_path.with_name(f".{index_path.name}.bodies.{os.getpid()}.tmp")


class Beside:
    """cards_fts being built in a thread (start) from the rows the writer puts (put), until
    copy_into() hands it to the index, or abandon() drops it."""

    def __init__(self, index_path: Path, hash_bytes: int, page_size: int, threaded: bool = True,
                 cache_kib: int = CACHE_KIB):
        self.path = scratch_path(index_path)
        # Without a thread (one core), the writer fills the scratch table itself, so that a
        # rebuild on one core and one on many give the very same index (see the module's doc).
        self.threaded = threaded
        self._hash_bytes, self._page_size, self._cache_kib = hash_bytes, page_size, cache_kib
        self._rows: list[tuple] = []
        self._queue: queue.Queue = queue.Queue(maxsize=AHEAD_BATCHES)
        self._error: BaseException | None = None
        self._was_one = False
        self._finished = False
        self._conn: sqlite3.Connection | None = None
        self._thread = threading.Thread(target=self._run, name="memsync-bodies", daemon=True)

    def start(self) -> Beside:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # this process's own, from a rebuild that failed to remove it
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", f"page_size = {self._page_size}",
                       f"cache_size = -{self._cache_kib}"):
            self._conn.execute(f"PRAGMA {pragma}")
        if not self.threaded:
            self._begin(self._conn)
        return self

    @property
    def connection(self) -> sqlite3.Connection:
        """The scratch file's connection, which the thread uses while it runs."""
        assert self._conn is not None
        return self._conn

    def put(self, command: str | None, seq: int, row: list) -> None:
        """A row to insert (command None) or to delete ('delete'), as fts._write gives it."""
        self._rows.append((command, seq, *row))
        if len(self._rows) >= BATCH_ROWS:
            self._hand_over()

    def _hand_over(self, last: str | None = None) -> None:
        if self._error is not None:
            raise self._error
        if not self.threaded:
            assert self._conn is not None
            self._write(self._conn, self._rows)
            self._rows = []
            if last == _DONE:
                self._end(self._conn)
            return
        if not self._thread.is_alive() and self._thread.ident is None:
            # Started with the first rows, not before: by then the load's reader processes are
            # forked, as they may be only while this process runs one thread (memsync.readers).
            self._thread.start()
        if self._rows:
            self._queue.put(self._rows)
            self._rows = []
        if last is not None:
            self._queue.put(last)

    def _begin(self, conn: sqlite3.Connection) -> None:
        conn.execute(fts.table_sql(fts.BODIES))
        conn.execute("BEGIN")
        fts.defer_bodies(conn, self._hash_bytes)

    def _end(self, conn: sqlite3.Connection) -> None:
        self._was_one = fts.optimize_bodies(conn)
        conn.execute("COMMIT")

    def _run(self) -> None:
        conn = self._conn
        assert conn is not None
        batch: object = None
        try:
            self._begin(conn)
            while (batch := self._queue.get()) not in (_DONE, _DROP):
                self._write(conn, batch)  # type: ignore[arg-type]  # a batch of rows
            if batch == _DONE:
                self._end(conn)
        except BaseException as error:  # handed to the writer at its next put, or at the end
            self._error = error
            while batch not in (_DONE, _DROP):  # the writer may be waiting to put more
                batch = self._queue.get()

    @staticmethod
    def _write(conn: sqlite3.Connection, batch: list[tuple]) -> None:
        if not batch:
            return
        inserts = [row[1:] for row in batch if row[0] is None]
        if len(inserts) == len(batch):  # a load writes, and deletes only links it rewrites
            conn.executemany(fts.bodies_insert(), inserts)
            return
        for row in batch:
            if row[0] is None:
                conn.execute(fts.bodies_insert(), row[1:])
            else:
                conn.execute(fts.bodies_command(), row)

    def copy_into(self, conn: sqlite3.Connection) -> bool:
        """Wait for the thread to finish the table, then make the index's cards_fts hold what it
        holds (inside the writer's transaction). Returns whether it was one segment already
        before its optimize, as fts.merge tells of its own tables."""
        self.finish()
        if self.threaded:
            self._thread.join()
        if self._error is not None:
            self.abandon()
            raise self._error
        scratch = self.connection
        try:
            # A table made anew, left untouched until its rows are in: FTS5 keeps no state of it
            # in this connection that could be stale.
            conn.execute(f"DROP TABLE {fts.BODIES}")
            conn.execute(fts.table_sql(fts.BODIES))
            for shadow in fts.shadow_tables(scratch, fts.BODIES):
                width = len(scratch.execute(f"SELECT * FROM {shadow} LIMIT 0").description)
                conn.execute(f"DELETE FROM {shadow}")
                conn.executemany(f"INSERT INTO {shadow} VALUES ({', '.join('?' * width)})",
                                 scratch.execute(f"SELECT * FROM {shadow}"))
        finally:
            self._close()
        return self._was_one

    def finish(self) -> None:
        """No more rows: the table is merged (by the thread, meanwhile) and committed."""
        if not self._finished:
            self._finished = True
            self._hand_over(_DONE)

    def abandon(self) -> None:
        """Stop the thread (a rollback, a failure) and remove the scratch file."""
        if self._thread.is_alive():
            self._rows = []
            while True:
                try:
                    self._queue.put_nowait(_DROP)
                    break
                except queue.Full:  # the thread is busy or gone: make room
                    with contextlib.suppress(queue.Empty):
                        self._queue.get_nowait()
            self._thread.join()
        self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
