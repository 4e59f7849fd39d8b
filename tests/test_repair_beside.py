"""A damaged index's replacement is built beside it and moved in whole (memsync.store.salvage):
the index path never names a file without the saved ids, so nothing that opens it meanwhile
(the watcher of the MCP server that runs the repair, above all) gives the saved cards ids of its
own; and an id given to the damaged file while the replacement was built comes over too. Seen
through Python's audit hooks: every open of the index and every rename onto it, as they happen."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path

from memsync import config
from memsync.store import salvage
from memsync.store.index import Index

from .conftest import write_card

CARDS = 12
_WATCHING: list = []  # the hook of the test running now (audit hooks cannot be removed)


def _audit(event: str, args: tuple) -> None:
    if _WATCHING and event in ("sqlite3.connect", "os.rename"):
        _WATCHING[-1](event, args)


sys.addaudithook(_audit)


def indexed(vault, cli) -> tuple[Path, dict[str, int]]:
    for n in range(CARDS):
        write_card(vault, f"03-Knowledge/c{n}.md", f"card {n}", f"card {n} names host-{n}")
    assert cli("index")[0] == 0
    db = config.load().db.path
    with closing(Index(db)) as index:
        return db, {r["path"]: r["id"] for r in index.cards()}


def damage_full_text_pages(db: Path) -> None:
    """Garbage over the pages of the full-text data table: PRAGMA quick_check finds the damage,
    while card_ids, on pages of its own, can still be written, as by a watcher that has not yet
    run into the damage."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'cards_fts_data' "
                                            "AND pagetype = 'leaf'")]
    assert pages
    with db.open("r+b") as handle:
        for page in pages:
            handle.seek((page - 1) * size)
            handle.write(b"\xa5" * size)


def ids_in(db: str | Path) -> dict[str, int]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return {path: card_id for card_id, path in conn.execute("SELECT id, path FROM card_ids")}


def test_the_index_path_never_names_a_file_without_the_saved_ids(vault, cli):
    db, ids = indexed(vault, cli)
    damage_full_text_pages(db)
    opened_empty, moved_in = [], []

    def look(event: str, args: tuple) -> None:
        _WATCHING.append(lambda *_: None)  # what this hook opens is not looked at
        try:
            if event == "sqlite3.connect" and str(args[0]) == str(db) and db.stat().st_size == 0:
                opened_empty.append(args[0])  # a fresh file made at the path: no ids in it yet
            elif event == "os.rename" and str(args[1]) == str(db):
                moved_in.append(ids_in(args[0]))
        finally:
            _WATCHING.pop()

    _WATCHING.append(look)
    try:
        recovered = salvage.recover(db)
    finally:
        _WATCHING.remove(look)
    assert recovered is not None and recovered["saved"]["card_ids"] == CARDS
    assert opened_empty == []
    assert [{p: i for p, i in found.items() if p in ids} for found in moved_in] == [ids]
    assert ids_in(db) == ids


def test_an_id_given_to_the_damaged_file_while_the_new_one_is_built_comes_over(vault, cli):
    """A writer that opened the index before the repair (a watcher) writes an id through its
    connection just as the repair starts a new file: that id is in the index the repair leaves."""
    db, ids = indexed(vault, cli)
    damage_full_text_pages(db)
    late = max(ids.values()) + 7
    held = sqlite3.connect(db)

    def write_late(event: str, args: tuple) -> None:
        made = Path(str(args[0])) if event == "sqlite3.connect" else None
        if made is not None and made.is_file() and made.stat().st_size == 0:  # a file being made
            _WATCHING.remove(write_late)  # once
            held.execute("INSERT INTO card_ids VALUES (?, 'vault', '03-Knowledge/late.md')", (late,))
            held.commit()

    _WATCHING.append(write_late)
    try:
        recovered = salvage.recover(db)
    finally:
        held.close()
        if write_late in _WATCHING:
            _WATCHING.remove(write_late)
    assert recovered is not None and recovered["saved"]["card_ids"] == CARDS + 1
    assert ids_in(db) == {**ids, "03-Knowledge/late.md": late}
    assert not list(db.parent.glob(f".{db.name}.*.salvaged*"))  # the first build was removed
