"""The rows of the `files` table: each indexed file's signature (size, times, inode), hash and
when it was read, as a reconcile, a watcher's batch and the hard-link and rename checks ask for
them, by path, by folder range or by inode.

FileRows is part of memsync.store.index.Index, over its connection.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # indexing's records: a search process does not load them (memsync.model)
    from memsync.model.indexing import Signature


class FileRows:
    """The `files` rows of an Index (memsync.store.index)."""

    _conn: sqlite3.Connection  # Index's own

    @staticmethod
    def folder_range(under: str | None) -> tuple[str, str | None]:
        """The paths below folder `under` as a (from, before) range of `files.path`: "f/" to
        just before "f0" ('0' sorts right after '/'); the whole source when `under` is None."""
        if not under:
            return "", None
        folder = under.rstrip("/")
        return folder + "/", folder + "0"

    def _in_range(self, low: str, high: str | None) -> tuple[str, list]:
        """The clause and parameters that keep `files.path` within (from, before)."""
        where, args = "", []  # type: tuple[str, list[object]]
        if low:
            where, args = " AND path >= ?", [low]
        if high is not None:
            where, args = where + " AND path < ?", [*args, high]
        return where, args

    def file_states(self, source: str, under: str | None = None) -> dict[str, tuple]:
        """path -> (Signature, hash, indexed_ns) for every indexed file (below `under`)."""
        from memsync.model.indexing import Signature

        where, args = self._in_range(*self.folder_range(under))
        sql = "SELECT path, size, mtime_ns, ctime_ns, ino, hash, indexed_ns FROM files WHERE source = ?" + where
        args = [source, *args]
        return {
            r[0]: (Signature(r[1], r[2], r[3], r[4]), r[5], r[6])
            for r in self._conn.execute(sql, args)
        }

    def file_stamps(self, source: str, racy_ns: int, under: str | None = None) -> dict[str, tuple]:
        """path -> (size, mtime_ns, ctime_ns, ino) of every indexed file (below `under`), the
        inode None where that signature cannot vouch for the content (read again: no hash, or
        read within `racy_ns` of its last write). A reconcile compares these with lstat tuples
        as they are: equal means unchanged. No hash is fetched, and no Signature built."""
        return self.file_stamps_in(source, racy_ns, [self.folder_range(under)])

    def file_stamps_in(self, source: str, racy_ns: int,
                       ranges: list[tuple[str, str | None]]) -> dict[str, tuple]:
        """file_stamps of the paths in each (from, before) range; a None end: no end."""
        cursor = self._conn.cursor()
        cursor.row_factory = None
        sql = ("SELECT path, size, mtime_ns, ctime_ns, CASE WHEN hash != '' AND indexed_ns - mtime_ns "
               ">= ? THEN ino END FROM files WHERE source = ?")
        stamps: dict[str, tuple] = {}
        for low, high in ranges:
            where, args = self._in_range(low, high)
            stamps.update((r[0], r[1:]) for r in cursor.execute(sql + where, [racy_ns, source, *args]))
        return stamps

    def file_rows_of(self, source: str, paths: list[str]) -> dict[str, tuple]:
        """path -> (size, mtime_ns, ctime_ns, ino, hash, indexed_ns) of those of `paths` the
        index holds: what a reconcile needs of the files it reads again or drops."""
        cursor = self._conn.cursor()
        cursor.row_factory = None
        return {r[0]: r[1:] for r in cursor.execute(
            "SELECT path, size, mtime_ns, ctime_ns, ino, hash, indexed_ns FROM files "
            "WHERE source = ? AND path IN (SELECT value FROM json_each(?))",
            (source, json.dumps(paths, ensure_ascii=False)))}

    def paths_of_inodes(self, source: str, inodes: list[int]) -> list[str]:
        """The indexed files of `source` whose stored inode is one of `inodes` (the names of
        hard-linked files). One scan of the source's rows: asked only for files with more than
        one name."""
        return [r[0] for r in self._conn.execute(
            "SELECT path FROM files WHERE source = ? AND ino IN (SELECT value FROM json_each(?))",
            (source, json.dumps(inodes)))]

    def count_files(self, source: str, under: str | None = None, upto: int | None = None) -> int:
        """How many files of `source` (below `under`) the index holds, counted no further than
        `upto` when given."""
        where, args = self._in_range(*self.folder_range(under))
        sql, args = "SELECT 1 FROM files WHERE source = ?" + where, [source, *args]
        if upto is not None:
            sql, args = sql + " LIMIT ?", [*args, upto]
        return self._conn.execute(f"SELECT count(*) FROM ({sql})", args).fetchone()[0]

    def file_state(self, source: str, path: str) -> tuple | None:
        from memsync.model.indexing import Signature

        r = self._conn.execute(
            "SELECT size, mtime_ns, ctime_ns, ino, hash, indexed_ns FROM files "
            "WHERE source = ? AND path = ?", (source, path),
        ).fetchone()
        return None if r is None else (Signature(r[0], r[1], r[2], r[3]), r[4], r[5])

    def touch_signature(self, source: str, path: str, sig: Signature, indexed_ns: int) -> None:
        self._conn.execute(
            "UPDATE files SET size=?, mtime_ns=?, ctime_ns=?, ino=?, indexed_ns=? "
            "WHERE source=? AND path=?",
            (sig.size, sig.mtime_ns, sig.ctime_ns, sig.ino, indexed_ns, source, path),
        )
