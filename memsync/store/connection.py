"""Connections to the index file: opening one (made private, in WAL mode, migrated), opening one
that must exist already or must never write, and a database failure said as the error a user
can act on. memsync.store.index builds its typed operations on connect().

WAL mode so readers never wait for the writer (but for a load into an empty index:
memsync.store.journal, and a connection that must wait for one says so); a busy timeout so
concurrent writers (a watcher, MCP servers, CLI writes) queue instead of failing.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import urllib.parse
from pathlib import Path

from memsync import private
from memsync.errors import BadEnvironment, Damaged
from memsync.store import journal, migrations

BUSY_TIMEOUT_MS = 60_000
# What a caller outside this module may catch when the database fails (locked past the busy
# timeout, disk I/O error), without importing sqlite3 itself.
DB_ERRORS = (sqlite3.Error,)
# SQLite's primary result codes that say what a failure means for the user (failure_kind).
_BUSY, _LOCKED, _READONLY, _CORRUPT, _FULL, _CANTOPEN, _NOTADB, _PERM = 5, 6, 8, 11, 13, 14, 26, 3


def connect(path: Path | str) -> sqlite3.Connection:
    """The index at `path`, made (0600; missing folders 0700) if it is not there yet, in WAL mode
    and migrated to this version's schema; BadEnvironment, said for the user, if it cannot be."""
    path = Path(path)
    try:
        private.create(private.mkdir(path.parent) / path.name)  # 0600 before SQLite opens it
        conn = sqlite3.connect(
            str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )
    except (OSError, sqlite3.Error) as exc:
        raise BadEnvironment(f"cannot open the index at {path}: {exc}; check --db / MEMSYNC_DB") from None
    conn.row_factory = sqlite3.Row
    try:
        if _pages(conn, path) == 0:  # a new file: before WAL fixes it
            conn.execute(f"PRAGMA page_size = {migrations.PAGE_SIZE}")
        # Not in WAL mode: a new file, an older index, or a load through a rollback journal that
        # is under way (memsync.store.journal), which switches it back when it ends: this
        # connection then reads and writes through that journal until it does, and waits, where
        # it must, within the busy timeout.
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            journal.to_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA journal_size_limit = {journal.LIMIT_BYTES}").fetchall()
        migrations.migrate(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise as_error(exc, path) from None
    except migrations.NewerSchema as newer:
        conn.close()
        raise BadEnvironment(
            f"the index at {path} was written by a newer memsync (schema {newer.found}, this one "
            f"knows {newer.known}); upgrade memsync again to go on with it as it is. Moving the "
            "index aside and running `memsync index` to rebuild it for this version gives back "
            "the cards, but not the read counts, feedback and retrieval log it holds: they are "
            "kept only in the index, never in the Markdown"
        ) from None
    except migrations.Unversioned as found:
        conn.close()
        raise unversioned_error(found, path) from None
    return conn


def unversioned_error(found: migrations.Unversioned, path: Path) -> BadEnvironment:
    """A file with tables and no schema version, said with what to do about it."""
    if found.ours:
        return Damaged(f"the index at {path} has lost its schema version (SQLite's user_version is 0, "
                       "yet it holds memsync's tables); run `memsync doctor --fix` to rebuild it "
                       "from the files (ids and read counts are kept)")
    shown = ", ".join(found.tables[:5]) + (" ..." if len(found.tables) > 5 else "")
    return BadEnvironment(f"{path} is not a memsync index: it is an SQLite database of another "
                          f"program (tables {shown}), which memsync leaves alone; point --db / "
                          "MEMSYNC_DB at another file, or move it away and run `memsync index`")


# Whether a connection kept waiting says so on stderr (_pages); a session-start hook, which says
# at most one line there, turns it off (`memsync brief --hook`, memsync.cli.brief).
SAY_WAITS = True
QUIET_WAIT_MS = 500  # a wait this short goes unsaid (_pages)


def _pages(conn: sqlite3.Connection, path: Path) -> int:
    """The file's page count, the connection's first read, and its busy timeout set. Only a load
    through a rollback journal (memsync.store.journal) keeps a reader out, until it commits:
    half a minute at 100,000 cards. A connection that must wait for one says so first, so that
    a person at a search knows why it is slow. Not for a moment's wait (QUIET_WAIT_MS): other
    processes opening a new index at once hold it for that long while one of them makes it
    (its switch to the WAL), and each of the others was told of a load that was not there."""
    conn.execute(f"PRAGMA busy_timeout = {QUIET_WAIT_MS}")
    try:
        return conn.execute("PRAGMA page_count").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if failure_kind(exc) != "busy":
            raise
        if SAY_WAITS:  # "being loaded", not "another process": an MCP server's own rebuild too
            print(f"memsync: the index {path} is being loaded (a rebuild?); waiting for it to "
                  f"finish, up to {BUSY_TIMEOUT_MS // 1000} s", file=sys.stderr, flush=True)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn.execute("PRAGMA page_count").fetchone()[0]


def open_existing(path: Path | str, wait: float = BUSY_TIMEOUT_MS / 1000) -> sqlite3.Connection:
    """Open an index that must exist; nothing is created or migrated (DB_ERRORS if it cannot).
    `wait`: how long a statement waits for another process's write lock before it fails busy."""
    uri = "file:" + urllib.parse.quote(str(Path(path).absolute())) + "?mode=rw"
    conn = sqlite3.connect(uri, uri=True, timeout=wait, isolation_level=None,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def open_read_only(path: Path | str, lenient: bool = False) -> sqlite3.Connection:
    """A connection that can never write (memsync.store.salvage reads a damaged file with it)."""
    uri = "file:" + urllib.parse.quote(str(Path(path).absolute())) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    if lenient:  # a truncated file is refused whole (its header counts more pages than it
        # holds) unless the schema is taken as written; read-only, so nothing is ever written
        conn.execute("PRAGMA writable_schema = ON")
    return conn


# --- failures said in the user's words -----------------------------------------------------

def failure_kind(exc: BaseException) -> str:
    """What a database error means: busy | read_only | damaged | full | cannot_open | other."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # Python 3.10's sqlite3 gives no code: its message is all there is
        text = str(exc).lower()
        code = (_BUSY if "locked" in text or "busy" in text else _READONLY if "readonly" in text
                else _CORRUPT if "malformed" in text or "not a database" in text
                else _FULL if "disk is full" in text
                else _CANTOPEN if "unable to open" in text else 0)
    primary = code & 0xFF
    if primary in (_BUSY, _LOCKED):
        return "busy"
    if primary in (_READONLY, _PERM):
        return "read_only"
    if primary in (_CORRUPT, _NOTADB):
        return "damaged"
    if primary == _FULL:
        return "full"
    if primary == _CANTOPEN:
        return "cannot_open"
    return "other"


def as_error(exc: BaseException, path: Path | str) -> BadEnvironment:
    """A database failure as the error a user can act on."""
    kind = failure_kind(exc)
    if kind == "damaged":
        return Damaged(f"the index is damaged; run `memsync doctor --fix` to rebuild it from the "
                       f"files (ids and read counts are kept; SQLite said: {exc})")
    if kind == "busy":
        return BadEnvironment(f"the index {path} is busy (another process is writing); try again "
                              "in a moment")
    if kind == "full":
        return BadEnvironment(f"the disk holding the index {path} is full ({exc}): free space on "
                              "it, then try again")
    if kind in ("read_only", "cannot_open"):
        both = [Path(path), Path(path).parent]
        shut = [p for p in both if p.exists() and not os.access(p, os.W_OK)] or both
        return BadEnvironment(f"the index {path} cannot be written ({exc}): make it writable by you "
                              f"({private.writable_command(shut)})")
    return BadEnvironment(f"the index {path} failed ({exc}); run `memsync doctor`")
