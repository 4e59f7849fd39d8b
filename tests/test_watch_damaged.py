"""A damaged index under a running watcher: said in one line with what to do, not a traceback
for each batch it retries (one a second); and an index set aside and built anew beside the
watcher (`memory_reindex` with rebuild in the MCP server that holds it) is the one it writes."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from memsync import config

from .conftest import write_card
from .mcp_helpers import eventually, refused, scenario, server_log, tool
from .mcp_helpers import hits as _hits

__all__ = ["server_log"]  # a fixture, imported for the tests below

RETRY = "reconciling vault: retry after a failed batch"
SAID = "the index is damaged; run `memsync doctor --fix`"


def damage(db: Path) -> None:
    """Garbage over the index file in place, as a failing disk leaves it: the connections open
    on it read the garbage. Its WAL is emptied first, or a connection could copy the pages it
    holds back over the garbage; then it goes with the shared memory, which SQLite would read."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.write_bytes(b"not a database " * 512)
    for tail in ("-wal", "-shm"):
        db.with_name(db.name + tail).unlink(missing_ok=True)


def test_a_damaged_index_is_said_once_with_the_fix_not_a_traceback_a_second(vault, cli, watcher):
    write_card(vault, "a.md", "a card", "a card indexed while the index was sound")
    assert cli("index")[0] == 0
    running = watcher()
    damage(config.load().db.path)
    write_card(vault, "b.md", "b card", "a card written once the index was damaged")
    running.wait_for(SAID)
    retried = running.stderr().count(RETRY)
    eventually_log = running.stderr
    while eventually_log().count(RETRY) < retried + 3:  # three more failed retries
        running.wait_for(RETRY)
    assert running.stderr().count(SAID) == 1
    assert "Traceback" not in running.stderr(), running.stderr()
    assert running.stop() == 0


def test_after_the_server_rebuilds_a_damaged_index_its_watcher_indexes_into_the_new_one(
        server_log, vault):
    """The rebuild sets the damaged file aside and makes a new one at its path; the server's own
    watcher had the old file open, and went on writing each save into the file set aside."""
    async def body(session):
        write_card(vault, "03-Knowledge/heron.md", "heron", "the heron nests by the river")
        await eventually(lambda: _hits(session, "heron"))  # the server's watcher indexes
        damage(config.load().db.path)
        rebuilt = await tool(session, "memory_reindex", rebuild=True)
        assert rebuilt["recovered"]["kept_as"]
        write_card(vault, "03-Knowledge/kingfisher.md", "kingfisher", "the kingfisher dives for fish")
        found = await eventually(lambda: _hits(session, "kingfisher"))
        assert found[0]["path"] == "03-Knowledge/kingfisher.md"

    scenario(body)(server_log)



def test_a_server_started_on_a_damaged_index_watches_once_it_repaired_it(server_log, vault, cli):
    """Its watcher cannot start on the damaged file; once `memory_reindex` has rebuilt it, live
    indexing begins, where it had stayed off for the life of the server."""
    write_card(vault, "03-Knowledge/heron.md", "heron", "the heron nests by the river")
    cli("index")
    damage(config.load().db.path)

    async def body(session):
        assert "doctor --fix" in await refused(session, "memory_stats")  # live indexing starts
        await eventually(lambda: _said(server_log, "live indexing"))  # and cannot
        rebuilt = await tool(session, "memory_reindex", rebuild=True)
        assert rebuilt["recovered"]["kept_as"] and rebuilt["added"] == 1
        write_card(vault, "03-Knowledge/kingfisher.md", "kingfisher", "the kingfisher dives for fish")
        found = await eventually(lambda: _hits(session, "kingfisher"))
        assert found[0]["path"] == "03-Knowledge/kingfisher.md"

    scenario(body)(server_log)
    assert "live indexing waits for the index to be repaired" in server_log.read_text()


async def _said(log: Path, words: str) -> bool:
    return words in log.read_text()
