"""A rebuild over an index writes about what a rebuild into a new file writes: the pages it
frees by emptying the old tables are refilled, never first written again as zeros, even where
the SQLite library zeroes freed pages by default (memsync.store.index, Index.reload)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memsync import config
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card

IO = Path("/proc/self/io")
pytestmark = pytest.mark.skipif(not IO.exists(), reason="counts the bytes written with Linux's /proc/self/io")
WORDS = [f"{a}{b}" for a in ("ka", "ro", "ven", "tul", "mi", "sar") for b in ("dex", "po", "lin", "quor")]


def written() -> int:
    """Bytes this process has handed to write() so far (the WAL, the file, temporary files)."""
    return next(int(line.split()[1]) for line in IO.read_text().splitlines() if line.startswith("wchar:"))


def rebuild_writes(db: Path) -> int:
    """The bytes one rebuild writes, on a connection that zeroes freed pages, as a library built
    with secure_delete on (Debian's, Ubuntu's) does by default."""
    index = Index(db)
    try:
        index._conn.execute("PRAGMA secure_delete = ON")
        start = written()
        Indexer(index, config.load().sources, workers=1).rebuild()
        spent = written() - start
        # the setting is the connection's own again once the rebuild is over
        assert index._conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
        return spent
    finally:
        index.close()


def test_a_rebuild_over_an_index_does_not_write_its_freed_pages_again(vault, tmp_path):
    rng = random.Random(7)
    for i in range(300):
        body = "\n\n".join(" ".join(rng.choices(WORDS, k=60)) for _ in range(6))
        write_card(vault, f"notes/card-{i}.md", f"Card {i}", body, tags=[rng.choice(WORDS)])
    old = tmp_path / "old.db"
    rebuild_writes(old)
    fresh = rebuild_writes(tmp_path / "fresh.db")
    over = rebuild_writes(old)
    # Zeroing the old index's pages first wrote ~1.5x a fresh rebuild's bytes (measured before
    # the rule: 247 MiB against 165 at 10,000 cards).
    assert over < 1.2 * fresh, (over, fresh)
