"""Secondary indexes set aside while a bulk load fills their tables, and made again after it.

A rebuild empties cards, links and exact_keys and writes every row again. Kept in place, each
of their indexes takes every row as it comes, one B-tree insert at a random spot of a tree larger
than the page cache; made once at the end, each is one sort. On memsync's 100,000-card test
vault the rebuild's writer took 48.5 s of CPU with the indexes in place and 40.3 s without them,
of which making them again took 2.0 s (median of 2 alternating runs); at 10,000 cards the two
are even. A load that only inserts needs none of these indexes meanwhile: nothing looks rows up
by them until the load ends (memsync.store.index.Index.reload makes them again first).

The drop and the CREATE run inside the load's transaction, so a load that fails or is killed
rolls back to the old tables with their indexes.
"""

from __future__ import annotations


def drop(conn, tables: tuple[str, ...]) -> list[str]:
    """Drop the secondary indexes of `tables` (those a bulk load empties: Index.reload's, which
    leave card_ids alone, whose unique index decides which ids are free as the load binds new
    ones); returns their CREATE statements, for make()."""
    marks = ", ".join("?" * len(tables))
    found = conn.execute(  # sql is NULL for the automatic index of a UNIQUE or PRIMARY KEY
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({marks}) ORDER BY name", tables).fetchall()
    for name, _ in found:
        conn.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in found]


def make(conn, statements: list[str]) -> None:
    """Make again the indexes drop() returned, each as it was defined."""
    for sql in statements:
        conn.execute(sql)
