"""How the index file journals its writes: through the WAL, except while one transaction fills
an index that holds no card yet.

The WAL lets searches read while a writer writes, which the index needs nearly all the time. A
bulk load pays for it twice, though: each page it writes goes into the WAL first and is copied
into the file again at the checkpoint after the commit, on one core, once every file has been
read. An index that holds nothing yet (a first index, a rebuild into a new file) has nothing
for a WAL to keep readable meanwhile, so its load goes through a rollback journal instead:
SQLite journals only the pages the file had when the transaction began, a handful, and writes
every new page once, into the file itself. A load killed on the way is rolled back from that
journal by the next connection, to the empty index, as it would have been from the WAL.

The cost: a search that starts meanwhile reads the empty index only until the load first writes
to the file (its page cache full), and from then on waits for the commit (within the busy
timeout), where through the WAL it would have found the index empty at once. So the callers
(memsync.sync) ask for it only for a load a search can wait for: a first index of
sync.ONE_LOAD_FILES files or fewer, a few seconds' work, for which it holds other writers off
too (a larger one commits as it goes, and searches see it grow), and a rebuild of up to
sync.JOURNALED_REBUILD_FILES, which commits only at its end anyway. SQLite leaves the WAL only
while no other connection has the file open, so that is tried once and not waited for: with a
watcher, a server or a search connected, the load goes through the WAL as any other write. One
that connects during the load finds the file out of WAL mode and cannot switch it back
(memsync.store.connection.connect lets it in as it is, and says that it waits), so at its end
the load retries its own switch back until they are done.

LIMIT_BYTES: the WAL a connection leaves on disk after a checkpoint. SQLite keeps the file as
large as the largest transaction it ever held, unless told otherwise: a rebuild of 100,000
cards left a 598 MB WAL beside the 591 MB index, until its connection closed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from memsync.sizes import MIB

LIMIT_BYTES = 8 * MIB
RETRY_S = 0.01
# How much WAL a bulk load of many transactions gathers before it is checkpointed (sparse_checkpoints).
BULK_CHECKPOINT_BYTES = 64 * MIB


def leave_wal(conn) -> bool:
    """Switch to a rollback journal, at once or not at all: SQLite refuses while another
    connection has the file open, and waiting for them would hold this one up for nothing."""
    wait = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        return conn.execute("PRAGMA journal_mode = DELETE").fetchall()[0][0] == "delete"
    except conn.OperationalError:  # "database is locked": another connection is open
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {wait}")


def to_wal(conn) -> bool:
    """Switch to the WAL if no other connection is reading or writing the file this instant;
    returns whether the file is in WAL mode now. SQLite does not wait for them (the busy
    timeout does not apply to this switch)."""
    try:
        return conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0] == "wal"
    except conn.OperationalError:  # "database is locked"
        return False


def back_to_wal(conn) -> None:
    """The WAL again after a load (or fts.compact's VACUUM), retried for up to the connection's
    busy timeout while connections that came meanwhile (memsync.store.connection.connect lets them in)
    read or write. Should that time run out, the file keeps its rollback journal until the next
    connection switches it."""
    deadline = time.monotonic() + conn.execute("PRAGMA busy_timeout").fetchone()[0] / 1000
    while not to_wal(conn) and time.monotonic() < deadline:
        time.sleep(RETRY_S)


@contextmanager
def filling(conn) -> Iterator[bool]:
    """Around the transaction of a bulk load: through a rollback journal when the index holds
    no card and no other connection has it open; yields whether it does. Meanwhile synchronous
    is FULL: the WAL's NORMAL never corrupts a file on a power cut, while a rollback journal's
    may; FULL syncs the journal, a few pages here, before the file is written."""
    empty = not conn.in_transaction and conn.execute("SELECT 1 FROM cards LIMIT 1").fetchone() is None
    journaled = empty and leave_wal(conn)
    if journaled:
        conn.execute("PRAGMA synchronous = FULL")
    try:
        yield journaled
    finally:
        if journaled:
            conn.execute("PRAGMA synchronous = NORMAL")
            back_to_wal(conn)


@contextmanager
def sparse_checkpoints(conn) -> Iterator[None]:
    """Around a bulk load of many transactions (memsync.store.index.Index.carrying_links): the
    WAL is checkpointed once it holds BULK_CHECKPOINT_BYTES, not SQLite's 1,000 pages, and its
    file is not cut back to LIMIT_BYTES after each checkpoint but kept for the next ones (up to
    twice that: the threshold, and the transaction that crossed it). Each of the load's
    transactions writes more than 1,000 pages, so each of its commits checkpointed, syncing the
    WAL and the file every time, and the WAL grew again from the size it had just been cut to.
    A first index of 100,000 notes in 204 transactions spent 10.9 s in its commits against
    7.0-7.3 s, and took 31.9-32.4 s against 26.8-27.8 s (3 alternating rounds). The settings
    belong to the connection, so a load killed meanwhile leaves nothing behind; after it, the
    next commit checkpoints and cuts the WAL back to LIMIT_BYTES, as after any large write."""
    every = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    limit = conn.execute("PRAGMA journal_size_limit").fetchone()[0]
    pages = BULK_CHECKPOINT_BYTES // conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute(f"PRAGMA wal_autocheckpoint = {max(every, pages)}").fetchall()
    conn.execute(f"PRAGMA journal_size_limit = {max(limit, 2 * BULK_CHECKPOINT_BYTES)}").fetchall()
    try:
        yield
    finally:
        conn.execute(f"PRAGMA wal_autocheckpoint = {every}").fetchall()
        conn.execute(f"PRAGMA journal_size_limit = {limit}").fetchall()
