"""Counts over the index: what `memsync stats`, `memsync sources`, doctor and the bench report."""

from __future__ import annotations

from dataclasses import dataclass

from memsync.store.index import Index
from memsync.store.searchsql import VALID_ON, on_day


@dataclass(frozen=True)
class Tally:
    cards: int
    valid: int  # on the day asked about
    by_kind: dict[str, int]  # most cards first; a card without a kind counts as "(none)"
    by_source: dict[str, int]  # most cards first
    reads: int  # every `show` / memory_get of every card


def tally(index: Index, today: str) -> Tally:
    conn = index._conn
    return Tally(
        cards=conn.execute("SELECT count(*) FROM cards").fetchone()[0],
        valid=conn.execute(f"SELECT count(*) FROM cards c WHERE {VALID_ON}", on_day(today)).fetchone()[0],
        by_kind=dict(conn.execute(
            "SELECT coalesce(kind, '(none)'), count(*) FROM cards GROUP BY 1 ORDER BY 2 DESC").fetchall()),
        by_source=by_source(index),
        reads=conn.execute("SELECT coalesce(sum(read_count), 0) FROM card_stats").fetchone()[0],
    )


def by_source(index: Index) -> dict[str, int]:
    """Cards per source, most first."""
    return dict(index._conn.execute(
        "SELECT source, count(*) FROM cards GROUP BY 1 ORDER BY 2 DESC").fetchall())


def rows(index: Index, table: str) -> int:
    """Rows of `cards` or `files`."""
    if table not in ("cards", "files"):
        raise ValueError(table)
    return index._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def has_path(index: Index, path: str) -> bool:
    """Whether any source has a card at `path` (the bench's truth sets name cards by path)."""
    return index._conn.execute("SELECT 1 FROM cards WHERE path = ?", (path,)).fetchone() is not None
