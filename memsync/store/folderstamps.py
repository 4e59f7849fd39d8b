"""The stored folder stamps (memsync.folders): read for a subtree, replaced after a reconcile."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import nullcontext

from memsync.folders import FolderStamp
from memsync.store.index import Index

COLUMNS = "mtime_ns, ctime_ns, ino, files, folders, rules"


def load(index: Index, source: str, folder: str) -> dict[str, FolderStamp]:
    """folder ("a/b/", "" for the root) -> its stamp, for `folder` and every folder below it."""
    where, args = index._in_range(*Index.folder_range(folder))
    cursor = index._conn.cursor()
    cursor.row_factory = None
    return {r[0]: FolderStamp(*r[1:]) for r in cursor.execute(
        f"SELECT path, {COLUMNS} FROM folder_stamps WHERE source = ?" + where, [source, *args])}


def count(index: Index, source: str, folder: str) -> int:
    """How many stamps there are for `folder` and below."""
    where, args = index._in_range(*Index.folder_range(folder))
    return index._conn.execute("SELECT count(*) FROM folder_stamps WHERE source = ?" + where,
                               [source, *args]).fetchone()[0]


def replace(index: Index, source: str, subtrees: Iterable[str], stamps: dict[str, FolderStamp]) -> None:
    """The stamps of each subtree (a folder and all below it) become those of `stamps` in it:
    a folder visited keeps or renews its stamp, one gone or listed too soon to stamp has none."""
    conn = index._conn
    with nullcontext() if index.in_transaction else index.transaction():
        for folder in subtrees:
            where, args = index._in_range(*Index.folder_range(folder))
            conn.execute("DELETE FROM folder_stamps WHERE source = ?" + where, [source, *args])
            conn.executemany(
                f"INSERT INTO folder_stamps (source, path, {COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(source, path, *stamp) for path, stamp in stamps.items() if path.startswith(folder)])


def forget(index: Index, source: str) -> None:
    """A source no longer indexed keeps no stamps."""
    index._conn.execute("DELETE FROM folder_stamps WHERE source = ?", (source,))

