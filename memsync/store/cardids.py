"""Card ids: the number a card is known by, in search results, in commands and to agents.

A card's id is derived from its source and path the first time the path is seen, so the same
vault gives the same ids on every machine and after the index is lost; a taken id probes the
next one. The binding of ids to paths lives in card_ids: it follows a card through renames and
into the trash and back (memsync.sync.Indexer makes those moves), and a purge retires it.

CardIds is part of memsync.store.index.Index, over its connection.
"""

from __future__ import annotations

import sqlite3

ID_SPACE = 2**36  # ids stay short enough to type, and fit any JSON number


def derived_id(source: str, path: str) -> int:
    """The id a path gets when first seen: the same on every machine and after a lost DB."""
    import hashlib  # here, not at the top: loading OpenSSL costs `memsync search` milliseconds

    digest = hashlib.blake2b(f"{source}\0{path}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % (ID_SPACE - 1) + 1


class CardIds:
    """The card-id operations of an Index (memsync.store.index)."""

    _conn: sqlite3.Connection  # Index's own

    def id_for(self, source: str, path: str) -> int:
        row = self._conn.execute(
            "SELECT id FROM card_ids WHERE source = ? AND path = ?", (source, path)
        ).fetchone()
        if row:
            return row[0]
        candidate = derived_id(source, path)
        while True:  # a taken id (a collision, or a card that moved away) probes the next one
            try:
                self._conn.execute(
                    "INSERT INTO card_ids (id, source, path) VALUES (?, ?, ?)",
                    (candidate, source, path),
                )
                return candidate
            except sqlite3.IntegrityError:
                if self.bound_id(source, path):  # cannot happen inside one write transaction
                    raise
                candidate = candidate % (ID_SPACE - 1) + 1

    def _retire_path(self, source: str, path: str) -> None:
        self._conn.execute(
            "UPDATE card_ids SET path = NULL WHERE source = ? AND path = ?", (source, path)
        )

    def id_given(self, card_id: int) -> bool:
        """Whether memsync ever gave out this id (to a card now indexed, trashed or purged)."""
        return self._conn.execute("SELECT 1 FROM card_ids WHERE id = ?", (card_id,)).fetchone() is not None

    def bound_id(self, source: str, path: str) -> int | None:
        row = self._conn.execute(
            "SELECT id FROM card_ids WHERE source = ? AND path = ?", (source, path)
        ).fetchone()
        return row[0] if row else None

    def rebind_ids(self, source: str, src: str, dst: str) -> int:
        """Move the ids bound to src (and to its `src#anchor` cards) over to dst.

        Used when a card goes into the trash, and when it comes back: its id and read stats
        travel with it, and a new card written at the old path gets a new id.
        """
        def bound(path):
            return self._conn.execute(
                "SELECT id, path FROM card_ids WHERE source = ? AND "
                "(path = ? OR substr(path, 1, ?) = ?)", (source, path, len(path) + 1, path + "#"),
            ).fetchall()

        moving = bound(src)
        if not moving:
            # Already moved (a watcher that saw the file land in the trash got there first):
            # the ids at dst are the very ones this call would bring, so they stay.
            return 0
        for card_id, _path in bound(dst):
            self._conn.execute("UPDATE card_ids SET path = NULL WHERE id = ?", (card_id,))
        for card_id, path in moving:
            self._conn.execute(
                "UPDATE card_ids SET path = ? WHERE id = ?", (dst + path[len(src):], card_id)
            )
        return len(moving)

    def clear_stats_for_path(self, source: str, path: str) -> None:
        """Purge: the card is gone for good, so its id is retired, its stats and feedback dropped
        and it is taken out of the logged searches' hits."""
        for (card_id,) in self._conn.execute(
            "SELECT id FROM card_ids WHERE source = ? AND (path = ? OR path LIKE ?)",
            (source, path, path + "#%"),
        ).fetchall():
            self._conn.execute("DELETE FROM card_stats WHERE id = ?", (card_id,))
            self._conn.execute("DELETE FROM feedback WHERE id = ?", (card_id,))
            # the logged searches forget it too: their queries stay, this card leaves their hits
            self._conn.execute(
                "UPDATE retrieval_log SET hits = (SELECT json_group_array(json(h.value)) "
                "FROM json_each(retrieval_log.hits) h WHERE h.value ->> 0 != ?1) "
                "WHERE EXISTS (SELECT 1 FROM json_each(retrieval_log.hits) h WHERE h.value ->> 0 = ?1)",
                (card_id,))
            self._conn.execute("UPDATE card_ids SET path = NULL WHERE id = ?", (card_id,))
