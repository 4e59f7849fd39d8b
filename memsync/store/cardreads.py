"""Reads of cards and of the index's small tables, one card or one row at a time: what `show`,
the write side and the MCP tools ask for. Searches go through memsync.store.searchsql.

CardReads is part of memsync.store.index.Index, over its connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from memsync.errors import NotFound
from memsync.store.fields import all_tags
from memsync.store.searchsql import Statement

CARD_COLUMNS = (
    "id, source, path, file, title, kind, tags, aliases, created, updated, invalid_at, "
    "superseded_by, supersedes, priority, ttl, body, problem, summary"
)


class CardReads:
    """The single-card and small-table reads of an Index (memsync.store.index)."""

    _conn: sqlite3.Connection  # Index's own

    def run(self, statement: Statement) -> list[Any]:  # sqlite3.Row, a tuple mypy cannot see
        """Every row of a statement built by memsync.store.searchsql."""
        return self._conn.execute(statement.sql, statement.params).fetchall()

    def card(self, card_id: int) -> sqlite3.Row:
        row = self._conn.execute(
            f"SELECT {CARD_COLUMNS} FROM cards WHERE id = ?", (card_id,)
        ).fetchone()
        if row is None:
            raise NotFound(self._missing(card_id))
        return row

    def _missing(self, card_id: int) -> str:
        """Why no card has this id, in words that say what to do: a deleted card's id waits in
        the trash with its file (memsync.write.trash), where a search will not find it."""
        from memsync.model import TRASH

        bound = self._conn.execute("SELECT path FROM card_ids WHERE id = ?", (card_id,)).fetchone()
        if bound and bound[0] and bound[0].startswith(TRASH + "/"):
            import shlex

            file = bound[0].split(".md#", 1)[0] + ".md" if ".md#" in bound[0] else bound[0]
            return (f"card {card_id} was deleted: it is in the trash as {file}; "
                    f"`memsync delete --restore {shlex.quote(file)}` brings it back")
        return f"no card with id {card_id}; find ids with `memsync search`"

    def card_by_path(self, source: str, path: str) -> sqlite3.Row | None:
        return self._conn.execute(
            f"SELECT {CARD_COLUMNS} FROM cards WHERE source = ? AND path = ?", (source, path)
        ).fetchone()

    def cards_titled(self, source: str, title: str) -> list[sqlite3.Row]:
        """Cards of a source with exactly this title (the write side's title-conflict check)."""
        return self._conn.execute(
            f"SELECT {CARD_COLUMNS} FROM cards WHERE source = ? AND title = ? ORDER BY path",
            (source, title),
        ).fetchall()

    def cards(self, source: str | None = None) -> Iterable[sqlite3.Row]:
        sql = f"SELECT {CARD_COLUMNS} FROM cards"
        if source:
            return self._conn.execute(sql + " WHERE source = ? ORDER BY path", (source,))
        return self._conn.execute(sql + " ORDER BY source, path")

    def tags(self, card_id: int) -> list[str]:
        """Every tag of the card, frontmatter and inline (memsync.store.fields.all_tags)."""
        row = self._conn.execute("SELECT tags, tag_set FROM cards WHERE id = ?", (card_id,)).fetchone()
        return all_tags(json.loads(row[0]), json.loads(row[1])) if row else []

    def record_read(self, card_id: int, when: str) -> None:
        self._conn.execute(
            "INSERT INTO card_stats (id, read_count, last_read_at) VALUES (?, 1, ?) "
            "ON CONFLICT(id) DO UPDATE SET read_count = read_count + 1, last_read_at = ?",
            (card_id, when, when),
        )

    def read_stats(self, card_id: int) -> tuple[int, str | None]:
        row = self._conn.execute(
            "SELECT read_count, last_read_at FROM card_stats WHERE id = ?", (card_id,)
        ).fetchone()
        return (row[0], row[1]) if row else (0, None)

    def meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def problems(self) -> list[dict]:
        return [
            {"source": r[0], "path": r[1], "message": r[2]}
            for r in self._conn.execute("SELECT source, path, message FROM problems ORDER BY 1, 2")
        ]

    def unindexed(self, source: str) -> list[str]:
        """The paths of `source` the index holds a problem and no file of: files it could not
        read (too large, a name that is not UTF-8, no permission) and folders it could not enter
        (their path ends in "/"). A card whose metadata is broken has its file, and is not here."""
        return [r[0] for r in self._conn.execute(
            "SELECT path FROM problems p WHERE source = ? AND NOT EXISTS "
            "(SELECT 1 FROM files f WHERE f.source = p.source AND f.path = p.path) ORDER BY 1",
            (source,))]

    def sources(self) -> set[str]:
        """Every source the index holds anything of: files, cards or problems."""
        return {r[0] for r in self._conn.execute(
            "SELECT source FROM files UNION SELECT source FROM cards UNION SELECT source FROM problems"
        )}

    def tag_names(self, prefix: str = "", limit: int = 200) -> list[str]:
        """Tags (folded, as filters match them) starting with `prefix`: shell completion."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [r[0] for r in self._conn.execute(
            "SELECT DISTINCT json_each.value FROM cards c, json_each(c.tag_set) "
            "WHERE json_each.value LIKE ? ESCAPE '\\' ORDER BY 1 LIMIT ?", (escaped + "%", limit))]
