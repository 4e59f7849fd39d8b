"""Secondary indexes set aside while a bulk load fills their tables, and made again after it.

A rebuild empties cards, links and exact_keys and writes every row again. Kept in place, each
of their indexes takes every row as it comes, one B-tree insert at a random spot of a tree larger
than the page cache; made once at the end, each is one sort. On memsync's 100,000-card test
vault the rebuild's writer took 48.5 s of CPU with the indexes in place and 40.3 s without them,
of which making them again took 2.0 s (median of 2 alternating runs); at 10,000 cards the two
are even. A load that only inserts needs none of these indexes meanwhile: nothing looks rows up
by them until the load ends (memsync.store.index.Index.reload makes them again first).

Not every index gets its rows at random spots, though (LIVE): those stay in place. Making each
again at the end was one more pass over its table, on one core, after the last file was read.

The drop and the CREATE run inside the load's transaction, so a load that fails or is killed
rolls back to the old tables with their indexes.
"""

from __future__ import annotations

# Indexes a load keeps, since each insert lands on a page already in the cache:
# - rows in key order: a load writes files in path order (cards_file), and cards and their exact
#   keys by ascending seq (exact_keys_seq);
# - a few keys, each taking rows in seq order (cards_kind);
# - partial, skipping every card without a priority or a supersede mark (the other two).
# Rebuilds, alternating fresh processes: at 10,000 cards 3.36 against 3.43 s (medians of 15);
# at 100,000 the serial end after the last read 6.70 against 7.53 s (3 each).
LIVE = frozenset({"cards_file", "exact_keys_seq", "cards_kind", "cards_priority", "cards_superseded"})


def drop(conn, tables: tuple[str, ...]) -> list[str]:
    """Drop the secondary indexes of `tables` (those a bulk load empties: Index.reload's, which
    leave card_ids alone, whose unique index decides which ids are free as the load binds new
    ones), all but LIVE; returns their CREATE statements, for make()."""
    marks = ", ".join("?" * len(tables))
    found = [(name, sql) for name, sql in conn.execute(  # sql is NULL for a UNIQUE's own index
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({marks}) ORDER BY name", tables) if name not in LIVE]
    for name, _ in found:
        conn.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in found]


def make(conn, statements: list[str]) -> None:
    """Make again the indexes drop() returned, each as it was defined."""
    for sql in statements:
        conn.execute(sql)
