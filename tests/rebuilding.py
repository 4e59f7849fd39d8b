"""What the rebuild tests share: a vault of a few hundred linked cards (`fill`) read with small
thresholds (`SMALL`, autouse through `small_batches`), a rebuild of it, every row of an index to
compare two of them, and a rebuild or reconcile run in a subprocess whose worker or writer is
killed mid-way."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memsync import config, readerbudget, sync
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card

# Small thresholds, so a few hundred cards make many chunks and batches: some are still unread
# when a kill lands. The subprocesses below set the same.
SMALL = {"PARALLEL_FROM": 60, "WORKER_CHUNK": 10, "BATCH": 60}
CARDS = 300


# autouse in each test module that names it (`small_batches = rebuilding.small_batches`)
@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    for name, value in SMALL.items():
        monkeypatch.setattr(sync, name, value)


def fill(vault: Path, n: int = CARDS, word: str = "first", linked: bool = True) -> None:
    for i in range(n):
        links = f"see [[card-{(i * 7) % n}]] and [[card-{(i + 1) % n}|next one]]" if linked else ""
        write_card(vault, f"bulk/{i % 9}/card-{i}.md", f"卡片 {i} {word}",
                   f"# 标题 {i}\n{word} body {i} 服务器 marker{i}x #tag{i % 5}\n{links}\n",
                   tags=[f"t{i % 3}"])
    (vault / "bulk" / "bad.md").write_text("---\ntitle: [oops\n---\nbroken but indexed")
    (vault / "bulk" / "big.md").write_bytes(b"x" * (sync.MAX_FILE_BYTES + 1))


def whole_index(db: Path) -> dict:
    """Every row of every table, full-text shadow tables included, in storage order."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for (table,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE "
                "'CREATE VIRTUAL%' ORDER BY name"):
            without_rowid = "WITHOUT ROWID" in conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0].upper()
            order = "" if without_rowid else " ORDER BY rowid"  # else in key order
            # the clock and count of changes and the last full sync differ between two runs
            where = " WHERE key NOT IN ('last_change', 'last_sync', 'changes')" if table == "meta" else ""
            rows = conn.execute(f"SELECT * FROM {table}{where}{order}").fetchall()
            if table == "files":
                at = [d[0] for d in conn.execute("SELECT * FROM files LIMIT 0").description]
                rows = [tuple(v for k, v in zip(at, r, strict=True) if k != "indexed_ns") for r in rows]
            out[table] = rows
        return out
    finally:
        conn.close()


def rebuilt(db: Path, workers: int) -> dict:
    index = Index(db)
    try:
        report = Indexer(index, config.load().sources, workers=workers).rebuild()
    finally:
        index.close()
    assert report.readers == min(workers, readerbudget.most() + 1)  # no more readers than cores
    return whole_index(db)


def first_index(vault: Path, tmp_path: Path, linked: bool = True) -> Path:
    """An index of the vault with read stats on some cards, as a user's would have."""
    fill(vault, linked=linked)
    db = tmp_path / "first.db"
    index = Index(db)
    Indexer(index, config.load().sources, workers=1).reconcile()
    for row in list(index.cards())[:40:3]:
        index.record_read(row["id"], "2026-01-02T03:04:05+00:00")
    index.close()
    return db


KILLER = f"""
import os, signal, sys, multiprocessing
from memsync import config, sync
for name, value in {SMALL!r}.items():
    setattr(sync, name, value)
from memsync.store.index import Index
from memsync.sync import Indexer
from memsync import workerpool
if len(sys.argv) > 4:  # a hand-over root of the test's own, which no other memsync process sweeps
    workerpool.HANDOVER_ROOT = sys.argv[4]
target = sys.argv[2]
print("writer", os.getpid(), flush=True)
index = Index(sys.argv[1])
work = Indexer(index, config.load().sources, workers=2)
killed = []
def progress(done, total):
    if done and done < total:
        if target == "worker":
            # once: the pool ends its other reader as it breaks, and a second kill raced that
            # (the reader gone between listing it and killing it)
            if not killed:
                child = multiprocessing.active_children()[0]
                os.kill(child.pid, signal.SIGKILL)
                killed.append(child.pid)
                print("killed a worker", flush=True)
        else:
            os.kill(os.getpid(), signal.SIGKILL)
report = getattr(work, sys.argv[3])(progress=progress)
print("readers", report.readers, "added", report.added, flush=True)
"""


def kill_mid_rebuild(db: Path, target: str, how: str = "rebuild",
                     handover: Path | None = None) -> subprocess.CompletedProcess:
    """Run `how` (rebuild, or reconcile) on `db` and kill its `target` (worker, writer) mid-way;
    its readers hand their looks over in `handover` when given (else workerpool's usual root)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(KILLER), str(db), target, how,
                           *([str(handover)] if handover else [])],
                          capture_output=True, text=True, timeout=300, env=os.environ.copy())


def one_segment(db: Path) -> bool:
    """Whether cards_fts is merged already: merging it once more changes no page."""
    conn = sqlite3.connect(db)
    try:
        before = conn.execute("SELECT group_concat(id) FROM cards_fts_data").fetchone()
        conn.execute("INSERT INTO cards_fts (cards_fts) VALUES ('optimize')")
        return conn.execute("SELECT group_concat(id) FROM cards_fts_data").fetchone() == before
    finally:
        conn.rollback()
        conn.close()
