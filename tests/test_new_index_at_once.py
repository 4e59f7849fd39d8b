"""Several processes opening an index that is not there yet: one makes it, every one opens it,
and none is told of a load or of damage that is not there."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from contextlib import closing

from memsync.store import migrations

OPEN_AT_GO = """
import os, sys, time
from memsync.store.index import Index
while not os.path.exists(sys.argv[1]):
    time.sleep(0.0005)
try:
    Index(sys.argv[2]).close()
    print("opened")
except Exception as exc:
    print(type(exc).__name__, exc)
"""
PROCESSES, ROUNDS = 4, 6


def test_processes_opening_a_new_index_at_once_each_open_it_and_say_nothing(tmp_path):
    for round_ in range(ROUNDS):
        go, db = tmp_path / f"go-{round_}", tmp_path / f"home-{round_}" / "memsync.db"
        openers = [subprocess.Popen([sys.executable, "-c", OPEN_AT_GO, str(go), str(db)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for _ in range(PROCESSES)]
        time.sleep(0.5)  # each has imported memsync and waits for the word
        go.touch()
        said = [opener.communicate(timeout=60) for opener in openers]
        assert [out.strip() for out, _ in said] == ["opened"] * PROCESSES, said
        assert [err for _, err in said] == [""] * PROCESSES  # no "being loaded (a rebuild?)"


def test_a_schema_made_meanwhile_is_not_taken_for_tables_without_a_version(tmp_path):
    """The version and the tables are read as of one moment: another process making the schema
    of a new index (tables and version in one commit) between the two reads is seen whole or
    not at all, never as tables with no version (which says the index lost its version)."""
    db = tmp_path / "memsync.db"
    with closing(sqlite3.connect(db, isolation_level=None)) as looker, \
            closing(sqlite3.connect(db, isolation_level=None)) as maker:
        looker.execute("PRAGMA journal_mode = WAL")
        made = []

        def make_it_now(sql: str) -> None:
            if "sqlite_master" in sql and not made:
                made.append(sql)
                maker.executescript("BEGIN IMMEDIATE; CREATE TABLE cards (seq INTEGER); "
                                    "PRAGMA user_version = 1; COMMIT;")

        looker.set_trace_callback(make_it_now)
        assert migrations.unversioned(looker) is None
        assert made  # the schema was made while it looked
        looker.set_trace_callback(None)
        assert looker.execute("PRAGMA user_version").fetchone()[0] == 1
