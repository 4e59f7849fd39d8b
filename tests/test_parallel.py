"""A rebuild read by worker processes gives the very index a serial one does, with the writer
on a core of its own and reading itself when its readers fall behind; a worker or writer
killed mid-way never leaves half an index."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading

import pytest

from memsync import config, readerbudget, reading, survey, workerpool
from memsync.store.index import Index
from memsync.sync import Indexer

from . import rebuilding
from .conftest import write_card
from .rebuilding import CARDS, fill, first_index, kill_mid_rebuild, rebuilt, whole_index

small_batches = rebuilding.small_batches  # autouse: the small thresholds for every test here


@pytest.mark.parametrize("workers", [2, 3])  # one reader process beside the writer, or two
def test_a_parallel_rebuild_is_the_serial_rebuild_row_for_row(vault, tmp_path, workers):
    db = first_index(vault, tmp_path)
    for i in range(0, CARDS, 5):  # the vault moved on since: edits, removals, new cards
        write_card(vault, f"bulk/{i % 9}/card-{i}.md", f"卡片 {i} second", f"changed {i} 数据库")
    for i in range(1, CARDS, 11):
        (vault / f"bulk/{i % 9}/card-{i}.md").unlink()
    write_card(vault, "late/new.md", "new", "a card the first index never saw [[card-3]]")
    serial, parallel = tmp_path / "serial.db", tmp_path / "parallel.db"
    for copy in (serial, parallel):
        shutil.copy(db, copy)
    want = rebuilt(serial, workers=1)
    got = rebuilt(parallel, workers=workers)
    assert want["card_stats"] and want["card_ids"] and want["problems"]
    assert [t for t in want if want[t] != got[t]] == []


READ_IN_A_READER = reading.look_batch


def slow_look_batch(*args):
    """A reader kept off its core (by other programs, say): each chunk takes a while longer.
    At module level, so that a forked reader finds it by name when the pool sends it."""
    import time

    time.sleep(0.15)
    return READ_IN_A_READER(*args)


def test_while_its_readers_fall_behind_the_writer_reads_later_chunks_itself(vault, tmp_path, monkeypatch):
    fill(vault)
    want = rebuilt(tmp_path / "serial.db", workers=1)
    read_here = []
    look_here = Indexer._look_here
    monkeypatch.setattr(Indexer, "_look_here", lambda self, source, chunk: read_here.append(
        len(chunk)) or look_here(self, source, chunk))
    monkeypatch.setattr(reading, "look_batch", slow_look_batch)
    got = rebuilt(tmp_path / "parallel.db", workers=2)
    # the writer did not wait out each slow chunk: it read some of the later ones, each once
    assert read_here and sum(read_here) < CARDS
    assert [t for t in want if want[t] != got[t]] == []


def test_a_rebuild_surveys_each_source_once_under_its_write_lock(vault, tmp_path, monkeypatch):
    # Once: its survey guards, sizes the load and lists every file to read. Under the lock: a
    # file another writer indexed after a survey taken before it would be emptied and not read.
    db = first_index(vault, tmp_path, linked=False)
    for i in range(3):  # gone since: counted against the rows, not read, not in the progress
        (vault / f"bulk/{i % 9}/card-{i}.md").unlink()
    index = Index(db)
    calls, totals = [], set()
    real = survey.survey

    def watched(at, *args, **kwargs):
        found = real(at, *args, **kwargs)
        calls.append((at.in_transaction, len(found.work), found.stored, found.unchanged))
        return found

    monkeypatch.setattr(survey, "survey", watched)
    try:
        report = Indexer(index, config.load().sources, workers=2).rebuild(
            progress=lambda done, total: totals.add(total))
    finally:
        index.close()
    on_disk = CARDS - 3 + 2  # and bad.md, big.md
    assert calls == [(True, on_disk, CARDS + 1, 0)]  # big.md was refused: it has no files row
    assert report.unchanged == 0 and report.added + report.updated == on_disk - 1
    assert totals == {on_disk}


def test_workers_started_beside_other_threads_give_the_same_index(vault, tmp_path):
    """A watcher or an MCP server runs threads: its workers come from a fork server."""
    fill(vault, 120)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert workerpool.start_method() in ("forkserver", "spawn")
        got = rebuilt(tmp_path / "threaded.db", workers=2)
    finally:
        stop.set()
        other.join()
    assert got == rebuilt(tmp_path / "serial.db", workers=1)


def test_a_worker_killed_mid_rebuild_leaves_the_whole_new_index(vault, tmp_path):
    db = first_index(vault, tmp_path)
    for i in range(0, CARDS, 4):
        write_card(vault, f"bulk/{i % 9}/card-{i}.md", f"卡片 {i} second", f"changed {i}")
    want = tmp_path / "serial.db"
    shutil.copy(db, want)
    proc = kill_mid_rebuild(db, "worker")
    assert proc.returncode == 0, proc.stderr
    assert "killed a worker" in proc.stdout
    assert f"added {CARDS + 1}" in proc.stdout  # every card, the killed worker's too
    assert whole_index(db) == rebuilt(want, workers=1)


def test_the_writer_killed_mid_rebuild_leaves_the_old_index_whole(vault, tmp_path, monkeypatch):
    db = first_index(vault, tmp_path)
    before = whole_index(db)
    for i in range(0, CARDS, 4):
        write_card(vault, f"bulk/{i % 9}/card-{i}.md", f"卡片 {i} second", f"changed {i}")
    # The machine's shared root would let any other memsync pool starting meanwhile (another
    # test run, a watcher) sweep the killed writer's folder before it is looked for.
    handover = tmp_path / "handover"
    handover.mkdir()
    monkeypatch.setattr(workerpool, "HANDOVER_ROOT", str(handover))
    proc = kill_mid_rebuild(db, "writer", handover=handover)  # returns once its orphaned workers ended
    assert proc.returncode == -9, proc.stderr
    assert whole_index(db) == before
    index = Index(db)  # and it opens and searches as before
    assert index.card_by_path("vault", "bulk/0/card-0.md")["title"] == "卡片 0 first"
    index.close()
    # the folder its readers handed looks over in is left, and goes with the next pool
    writer = proc.stdout.split()[1]
    left = list(handover.glob(f"{workerpool.HANDOVER_PREFIX}{writer}-*"))
    assert len(left) == 1
    rebuilt(db, workers=2)
    assert not left[0].exists()


def test_threads_bounds_the_readers_of_a_rebuild(vault, cli, home):
    fill(vault, 120)
    assert cli("index", "--rebuild", "--threads", "1", "--json")[1]["readers"] == 1
    assert cli("index", "--rebuild", "--threads", "2", "--json")[1]["readers"] == 2
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text('{"threads": 1}')
    assert cli("index", "--rebuild", "--json")[1]["readers"] == 1
    (home / "config.json").write_text('{"threads": 0}')
    code, out = cli("index", "--json")
    assert code == 2 and "threads" in out["error"]["message"]


def test_the_writer_keeps_a_core_of_its_own(vault, tmp_path, monkeypatch):
    # The writer is the bound of a parallel rebuild: N workers are N - 1 reader processes and
    # the writer, which reads too when they fall behind
    fill(vault)
    sizes = []
    start = workerpool.Pool.__init__

    def counted(pool, workers, *args, **kwargs):
        sizes.append(workers)
        start(pool, workers, *args, **kwargs)

    monkeypatch.setattr(workerpool.Pool, "__init__", counted)
    for workers in (2, 3):
        index = Index(tmp_path / f"cores-{workers}.db")
        try:
            assert Indexer(index, config.load().sources, workers=workers).rebuild().readers == min(
                workers, readerbudget.most() + 1)
        finally:
            index.close()
    assert sizes == [1, min(2, readerbudget.most())]


def test_a_reader_process_runs_below_the_writers_priority():
    # The writer is the bound of a parallel rebuild: readers yield the CPU to it
    child = subprocess.run(
        [sys.executable, "-c", "import os; from memsync import reading; before = os.nice(0); "
         "reading.worker_start(); print(before, os.nice(0))"],
        capture_output=True, text=True, check=True)
    before, after = map(int, child.stdout.split())
    assert after == min(before + reading.WORKER_NICENESS, 19)  # 19: the most a niceness can be
