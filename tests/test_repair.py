"""A damaged index is rebuilt by the commands a user (or an agent) is told to run: `doctor --fix`,
`index --rebuild`, MCP `memory_reindex {"rebuild": true}`. The bad file stays beside the new one,
ids and read counts come over, and what could not be saved is said. Search on a damaged index
says what to do, never a traceback."""

from __future__ import annotations

import os
import random
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memsync import api, config
from memsync.store.index import Index

from .conftest import write_card
from .mcp_helpers import LEAKS, refused, scenario, server_log, tool

__all__ = ["server_log"]  # a fixture, imported for the tests below

CARDS = 40
READS = ("03-Knowledge/c3.md", "03-Knowledge/c3.md", "03-Knowledge/c7.md")


def db_path() -> Path:
    return config.load().db.path


def ids_and_reads() -> tuple[dict[str, int], dict[int, int]]:
    with closing(Index(db_path())) as index:
        ids = {r["path"]: r["id"] for r in index.cards()}
        reads = {card_id: index.read_stats(card_id)[0] for card_id in ids.values()}
    return ids, {card_id: n for card_id, n in reads.items() if n}


@pytest.fixture
def before(vault, cli) -> tuple[dict[str, int], dict[int, int]]:
    """CARDS cards indexed, two of them read (one twice): their ids and read counts."""
    for n in range(CARDS):
        write_card(vault, f"03-Knowledge/c{n}.md", f"card {n}",
                   f"the body of card {n} names host-{n} and port {8000 + n}; " + "filler " * 60)
    assert cli("index")[0] == 0
    ids, _ = ids_and_reads()
    for path in READS:
        assert cli("show", ids[path], "--json")[0] == 0
    state = ids_and_reads()
    assert state[1] == {ids["03-Knowledge/c3.md"]: 2, ids["03-Knowledge/c7.md"]: 1}
    return state


def truncate(db: Path) -> None:
    """Cut the last quarter off the index file, its last writes checkpointed into it first (a
    disk that filled up, a copy that stopped short). A cut that takes pages of SQLite's own
    table list loses the ids and read counts too (test_what_cannot_be_read_is_said)."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.stat().st_size
    with db.open("r+b") as handle:
        handle.truncate(size * 3 // 4)


def damaged_copies(db: Path) -> list[Path]:
    return sorted(db.parent.glob(db.name + ".damaged-*[0-9]"))


def test_doctor_fix_rebuilds_a_truncated_index_keeping_ids_and_reads(before, cli):
    db = db_path()
    with closing(sqlite3.connect(db)) as conn:  # a vector of semantic search: hours to remake
        conn.execute("INSERT INTO vectors VALUES ('e5', 'abc', 1, x'0102')")
        conn.commit()
    truncate(db)
    code, result = cli("doctor", "--json")
    assert code == 1 and [f["check"] for f in result["findings"]] == ["integrity"]
    assert result["findings"][0]["fixable"]
    code, result = cli("doctor", "--fix", "--json")
    assert code == 0, result
    assert any("carried over: 40 ids, 2 read counts" in done for done in result["fixed"])
    assert ids_and_reads() == before
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT text_hash, vecs FROM vectors").fetchall() == [("abc", b"\x01\x02")]
    [aside] = damaged_copies(db)
    assert aside.stat().st_size > 0  # kept for a person to look at


def test_index_rebuild_rebuilds_a_truncated_index_and_says_what_it_kept(before, run_cli):
    db = db_path()
    truncate(db)
    code, out, err = run_cli("index", "--rebuild")
    assert code == 0 and "Traceback" not in err, err
    assert "the index was damaged" in out and "carried over: 40 ids, 2 read counts" in out
    assert f"kept as {damaged_copies(db)[0]}" in out
    assert ids_and_reads() == before
    code, found, _err = run_cli("search", "host-7", "--json")
    assert code == 0 and found["hits"][0]["id"] == before[0]["03-Knowledge/c7.md"]


def test_what_cannot_be_read_is_said(vault, cli):
    write_card(vault, "a.md", "a card", "a card whose index will be overwritten with noise")
    assert cli("index")[0] == 0
    db = db_path()
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8192)
    code, result = cli("index", "--rebuild", "--json")
    assert code == 0, result
    recovered = result["recovered"]
    assert recovered["saved"] == {} and recovered["lost"], recovered
    assert result["added"] == 1 and damaged_copies(db)


def test_memory_reindex_rebuilds_a_truncated_index(before, server_log):
    truncate(db_path())

    async def body(session):
        broken = await refused(session, "memory_search", query="host-7")
        assert "the index is damaged" in broken and "memsync doctor --fix" in broken
        result = await tool(session, "memory_reindex", rebuild=True)
        assert result["recovered"]["saved"]["card_ids"] == CARDS
        found = await tool(session, "memory_search", query="host-7")
        assert found["hits"][0]["id"] == before[0]["03-Knowledge/c7.md"]

    scenario(body)(server_log)
    assert ids_and_reads() == before


def damage_full_text(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE cards_fts_data SET block = x'00ff00ff00ff' WHERE id > 10")
        conn.commit()


def test_search_on_a_damaged_full_text_index_says_run_doctor_fix(before, run_cli):
    damage_full_text(db_path())
    code, out, err = run_cli("search", "host-7")
    assert code == 2 and out == ""
    assert "the index is damaged; run `memsync doctor --fix`" in err
    assert not any(leak in err for leak in LEAKS), err
    code, out, _err = run_cli("search", "host-7", "--json")
    assert code == 2 and out["error"]["code"] == "index_damaged"
    assert run_cli("doctor", "--fix")[0] == 0
    code, out, _err = run_cli("search", "host-7", "--json")
    assert code == 0 and out["hits"][0]["id"] == before[0]["03-Knowledge/c7.md"]


def test_memory_search_on_a_damaged_full_text_index_says_run_doctor_fix(before, server_log):
    damage_full_text(db_path())

    async def body(session):
        text = await refused(session, "memory_search", query="host-7")
        assert "the index is damaged" in text and "memsync doctor --fix" in text

    scenario(body)(server_log)


def test_a_full_disk_is_reported_as_such_and_the_index_goes_on(tmp_path):
    """SQLite rolls a transaction back by itself when the disk is full; a ROLLBACK after that
    failed with 'no transaction is active' and hid why. A page limit stands in for the disk."""
    index = Index(tmp_path / "full.db")
    try:
        pages = index._conn.execute("PRAGMA page_count").fetchone()[0]
        index._conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(sqlite3.OperationalError, match="database or disk is full"), index.transaction() as conn:
            for n in range(5000):
                conn.execute("INSERT INTO meta VALUES (?, ?)", (f"filler {n}", "x" * 500))
        with index.transaction() as conn:  # room again for what fits: the index is usable
            conn.execute("INSERT INTO meta VALUES ('after', 'ok')")
        assert index.meta("after") == "ok"
    finally:
        index.close()


def test_a_damaged_index_is_not_replaced_under_a_running_watcher(before, run_cli, watcher):
    """The watcher follows the new file, but would give cards ids of its own while the repair
    moves the saved ones over (api._not_watched_elsewhere): the repair refuses, touching
    nothing, until the watcher stops."""
    running = watcher()
    truncate(db_path())
    for args in (("doctor", "--fix"), ("index", "--rebuild")):
        code, _out, err = run_cli(*args)
        assert code == 2 and "a watcher (pid" in err and "stop the watcher" in err, err
    assert not damaged_copies(db_path())
    assert running.stop() == 0
    assert run_cli("doctor", "--fix")[0] == 0
    code, out, _err = run_cli("search", "host-7", "--json")
    assert code == 0 and out["hits"][0]["id"] == before[0]["03-Knowledge/c7.md"]


def overwrite_leaves(db: Path, table: str, picks: list[int]) -> int:
    """Overwrite leaf pages of `table` (by their place in the table's order) with noise, its
    last writes checkpointed first; returns how many rows those pages held."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        leaves = conn.execute("SELECT pageno, ncell FROM dbstat WHERE name = ? AND "
                              "pagetype = 'leaf' ORDER BY path", (table,)).fetchall()
    noise = random.Random(len(leaves))
    with db.open("r+b") as handle:
        for pick in picks:
            handle.seek((leaves[pick][0] - 1) * size)
            handle.write(noise.randbytes(size))
    return sum(leaves[pick][1] for pick in picks)


def test_salvage_steps_over_damaged_pages_and_keeps_every_readable_id(vault, cli):
    """Reading stopped at the first bad page: three overwritten pages of 108 kept 1,470 of 5,002
    ids. Renamed cards hold ids a rebuild cannot derive again from their paths, so each one kept
    is a card that keeps its id."""
    cards = 400
    for n in range(cards):
        write_card(vault, f"old/c{n}.md", f"card {n}", f"the body of card {n} names host-{n}")
    assert cli("index")[0] == 0
    for n in range(cards):
        (vault / "new").mkdir(exist_ok=True)
        os.rename(vault / f"old/c{n}.md", vault / f"new/c{n}.md")
    with api.open_index(config.load()) as index:  # the renames as a watcher sees them
        api.indexer(config.load(), index).move_many(
            "vault", [(f"old/c{n}.md", f"new/c{n}.md") for n in range(cards)], [])
    ids, _ = ids_and_reads()
    assert len(ids) == cards and all(path.startswith("new/") for path in ids)
    lost_rows = overwrite_leaves(db_path(), "card_ids", [2, 5])
    assert 0 < lost_rows < cards // 2
    code, result = cli("index", "--rebuild", "--json")
    assert code == 0, result
    assert result["recovered"]["saved"]["card_ids"] == cards - lost_rows
    assert "2 damaged ranges" in result["recovered"]["lost"][0]
    after, _ = ids_and_reads()
    assert after.keys() == ids.keys()
    assert sum(after[path] != ids[path] for path in ids) == lost_rows


def test_an_index_whose_schema_version_was_reset_is_rebuilt_keeping_ids(before, run_cli):
    """user_version 0 over memsync's tables (a tool reset it): migrating failed on "table
    cards_fts already exists" and every command, `doctor --fix` too, said only that."""
    with closing(sqlite3.connect(db_path())) as conn:
        conn.execute("PRAGMA user_version = 0")
    code, out, err = run_cli("search", "host-7")
    assert code == 2 and "lost its schema version" in err and "memsync doctor --fix" in err, err
    code, out, _err = run_cli("doctor", "--json")
    assert code == 1 and [(f["check"], f["fixable"]) for f in out["findings"]] == [("schema", True)]
    code, out, err = run_cli("doctor", "--fix")
    assert code == 0, out + err
    assert "carried over: 40 ids, 2 read counts" in out and damaged_copies(db_path())
    assert ids_and_reads() == before


def test_another_programs_database_is_refused_and_left_alone(vault, run_cli, tmp_path, monkeypatch):
    """A file with tables but no schema version that memsync never wrote: migrating wrote
    memsync's tables into it."""
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE notes (x)")
        conn.execute("INSERT INTO notes VALUES (1)")
        conn.commit()
    monkeypatch.setenv("MEMSYNC_DB", str(other))
    write_card(vault, "a.md", "a card", "a card that must not land in another program's database")
    for args in (("index",), ("index", "--rebuild"), ("search", "card")):
        code, _out, err = run_cli(*args)
        assert code == 2 and "is not a memsync index" in err and "MEMSYNC_DB" in err, err
    code, out, _err = run_cli("doctor", "--fix", "--json")
    assert code == 1 and any(f["check"] == "schema" and not f["fixable"] for f in out["findings"])
    with closing(sqlite3.connect(other)) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]
    assert not list(tmp_path.glob("other.db.damaged-*"))


def test_an_empty_file_is_a_new_index(vault, run_cli, tmp_path, monkeypatch):
    empty = tmp_path / "empty.db"
    empty.touch()
    monkeypatch.setenv("MEMSYNC_DB", str(empty))
    write_card(vault, "a.md", "a card", "a card indexed into a file that was empty")
    code, out, _err = run_cli("index", "--json")
    assert code == 0 and out["added"] == 1
