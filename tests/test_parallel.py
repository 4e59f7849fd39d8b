"""A rebuild read by worker processes gives the very index a serial one does, and a worker or
writer killed mid-way never leaves half an index."""

from __future__ import annotations

import dataclasses
import os
import pickle
import pickletools
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import memsync.adapters as adapters
from memsync import config, readerbudget, reading, survey, sync, treewalk, workerpool
from memsync.store import bulkload, fts, setaside
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card
from .test_fts_waiting import full_text

# Small thresholds, so a few hundred cards make many chunks and batches: some are still unread
# when a kill lands. The subprocesses below set the same.
SMALL = {"PARALLEL_FROM": 60, "WORKER_CHUNK": 10, "BATCH": 60}
CARDS = 300


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


def test_a_rebuild_merges_the_full_text_once_and_leaves_merging_on(vault, tmp_path):
    db = first_index(vault, tmp_path)
    rebuilt(db, workers=2)
    conn = sqlite3.connect(db)
    try:
        for table in fts.FTS_COLUMNS:  # merges were off during the load; back to FTS5's default
            assert conn.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchone() == (fts.AUTOMERGE,)
            assert conn.execute(f"SELECT v FROM {table}_config WHERE k = 'crisismerge'").fetchone() == (fts.CRISISMERGE,)
            # and so is the hash a watcher's later small writes go through
            assert conn.execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'").fetchone() == (fts.HASH_BYTES,)
    finally:
        conn.close()
    assert one_segment(db)


def test_the_bulk_hash_holds_a_small_load_whole_and_a_large_one_in_parts():
    assert fts.bulk_hash_bytes(0) == fts.BULK_HASH_BYTES
    small = 20 * 1024 * 1024
    assert fts.bulk_hash_bytes(small) >= small  # with room to spare: one segment
    largest = fts.WHOLE_LOAD_HASH_BYTES * 4 // 5
    assert fts.bulk_hash_bytes(largest) <= fts.WHOLE_LOAD_HASH_BYTES
    assert fts.bulk_hash_bytes(largest + 1024) == fts.PARTED_HASH_BYTES  # memory stays bounded
    assert fts.PARTED_HASH_BYTES < fts.WHOLE_LOAD_HASH_BYTES
    # a lean index's cap holds for a load of any size
    lean = fts.BULK_HASH_BYTES
    assert fts.bulk_hash_bytes(largest + 1024, lean) == fts.bulk_hash_bytes(10**10, lean) == lean


def at_end_of_load(db: Path, monkeypatch, ask) -> tuple:
    """Rebuild `db`: what `ask(conn)` found at the end of the load, before its one merge (when
    the indexes set aside are made again, which has FTS5 write its hash out), and the index."""
    seen = []
    make = setaside.make

    def watched(conn, statements):
        seen.append(ask(conn))
        make(conn, statements)

    monkeypatch.setattr(setaside, "make", watched)
    index = rebuilt(db, workers=1)
    return seen[0], index


def _loaded_whole(db: Path, monkeypatch) -> tuple[int, bool]:
    """The hash a rebuild loaded with, and whether the whole load was still in it at its end
    (FTS5 had written no segment: cards_fts_data held only its averages and structure records,
    rowids 1 and 10)."""
    return at_end_of_load(db, monkeypatch, lambda conn: (
        conn.execute("SELECT v FROM cards_fts_config WHERE k = 'hashsize'").fetchone()[0],
        conn.execute("SELECT max(id) FROM cards_fts_data").fetchone()[0] == 10))[0]


def test_a_rebuild_sizes_its_hash_to_the_load_and_writes_a_small_one_as_one_segment(vault, tmp_path, monkeypatch):
    # no links: the cards links point at wait for the end of the load (fts.Waiting), and the
    # first of them, a rowid below the last one written, has FTS5 write its hash out
    db = first_index(vault, tmp_path, linked=False)
    load = sum(p.stat().st_size for p in vault.rglob("*.md") if ".trash" not in p.parts)
    hashsize, whole = _loaded_whole(db, monkeypatch)
    assert hashsize == fts.bulk_hash_bytes(load) and whole
    # the same load through a small hash is written out in segments as it goes
    monkeypatch.setattr(fts, "bulk_hash_bytes", lambda load, whole_up_to: 16 * 1024)
    assert _loaded_whole(db, monkeypatch) == (16 * 1024, False)


def _segments_at_end_of_load(db: Path, monkeypatch) -> tuple[int, dict]:
    """Rebuild `db` through a 2 KiB hash: how many cards_fts segments the load left for its
    merge (FTS5 numbers a segment's pages from its id shifted left 37 bits), and the index."""
    monkeypatch.setattr(fts, "bulk_hash_bytes", lambda load, whole_up_to: 2048)
    return at_end_of_load(db, monkeypatch, lambda conn: conn.execute(
        "SELECT count(DISTINCT id >> 37) FROM cards_fts_data WHERE id > 10").fetchone()[0])


def test_a_rebuild_leaves_its_segments_to_the_one_merge_at_its_end(vault, tmp_path, monkeypatch):
    db = first_index(vault, tmp_path)
    deferred, index = _segments_at_end_of_load(db, monkeypatch)
    postings = full_text(db)
    # FTS5's own crisis limit merges each 16 segments of a level as the load goes
    monkeypatch.setattr(fts, "BULK_CRISISMERGE", fts.CRISISMERGE)
    merging, merged_on_the_way = _segments_at_end_of_load(db, monkeypatch)
    assert deferred > fts.CRISISMERGE * 2 and merging < deferred
    # the same index either way, but for the ids FTS5 gave its segments
    layout = ("cards_fts_data", "cards_fts_idx")
    assert {k: v for k, v in index.items() if k not in layout} == {
        k: v for k, v in merged_on_the_way.items() if k not in layout}
    assert full_text(db) == postings and one_segment(db)


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


def test_a_first_index_written_in_many_batches_ends_as_one_segment(vault, tmp_path, monkeypatch):
    for i in range(40):  # no links: nothing else has the first index compacted
        write_card(vault, f"bulk/{i % 4}/card-{i}.md", f"卡片 {i}", f"数据库 body {i} of the vault")
    monkeypatch.setattr(sync, "BATCH", 5)  # a transaction, and an FTS5 segment, per 5 files
    index = Index(tmp_path / "first.db")
    report = Indexer(index, config.load().sources, workers=1).reconcile()
    assert report.added > 5 * 4
    write_card(vault, "bulk/0/card-0.md", "卡片 0 again", "a small change")
    assert Indexer(index, config.load().sources, workers=1).reconcile().updated == 1
    index.close()
    assert not one_segment(tmp_path / "first.db")  # one small change is not merged at once
    index = Index(tmp_path / "again.db")
    Indexer(index, config.load().sources, workers=1).reconcile()
    index.close()
    assert one_segment(tmp_path / "again.db")


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


def test_a_walk_shared_by_threads_finds_what_one_thread_does(vault, tmp_path, monkeypatch):
    fill(vault, 120)
    for rel in (".obsidian/x.md", "bulk/3/.hidden.md", "node_modules/m.md", "Templates/t.md",
                "bulk/4/deep/er/still.md", "bulk/5/notes.txt"):
        write_card(vault, rel, "x", "body of a file in an odd place")
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["Templates/", "/still/"]}')
    index = Index(tmp_path / "walk.db")
    work = Indexer(index, config.load().sources, workers=2)
    one = work.files_on_disk("vault")
    # as on a slow disk: a sample of 5 files, then threads whatever the stats cost
    monkeypatch.setattr(treewalk, "WALK_SAMPLE", 5)
    monkeypatch.setattr(treewalk, "SLOW_STAT_NS", 0)
    assert work.files_on_disk("vault", threads=4) == one
    assert work.files_on_disk("vault", "bulk", threads=3) == {
        rel: sig for rel, sig in one.items() if rel.startswith("bulk/")}
    assert "bulk/4/deep/er/still.md" not in one and "bulk/3/.hidden.md" not in one
    monkeypatch.setattr(survey, "WALK_THREADS_FROM", 1)  # every reconcile walks with threads
    monkeypatch.setattr(survey, "PROCESSES_FROM", 10**9)  # and in this process
    first = work.reconcile()
    assert first.added == len(one) - 1  # all but the file over the size cap
    (vault / "bulk/0/card-0.md").unlink()
    write_card(vault, "bulk/1/card-1.md", "卡片 1 edited", "edited body")
    again = work.reconcile()
    assert (again.removed, again.updated, again.unchanged) == (1, 1, len(one) - 3)
    index.close()
    assert whole_index(tmp_path / "walk.db")["files"] == rebuilt(tmp_path / "serial.db", 1)["files"]


def test_a_look_crosses_to_the_writer_whole_and_as_plain_tuples(vault):
    write_card(vault, "full.md", "全部 fields", "# 标题\n## part\nbody #inline [[other|anchor]] 服务器\n",
               tags=["a/b", "c"], aliases=["别名"], created="2026-01-02", updated="2026-01-03",
               invalid_at="2026-02-01", superseded_by="new", supersedes="old", priority="high",
               ttl="30d", summary="one line", project="memsync")
    (vault / "bad.md").write_bytes(b"---\ntitle: [oops\n---\n\xff not utf-8")
    (vault / "big.md").write_bytes(b"x" * 64)
    with open(os.path.join(os.fsencode(vault), b"bad\xffname.md"), "wb") as handle:
        handle.write(b"a note whose name is not UTF-8\n")
    (vault / "memory.jsonl").write_text(
        '{"type": "entity", "name": "A", "entityType": "p", "observations": ["x"]}\n'
        '{"type": "entity", "name": "B", "entityType": "p", "observations": ["y"]}\n')
    root = str(vault)
    markdown = [reading.look(root, adapters.get("markdown"), 32, rel, None)
                for rel in ("full.md", "bad.md", "big.md", "gone.md", "bad\udcffname.md")]
    graph = reading.look(root, adapters.get("mcp-memory"), 1 << 20, "memory.jsonl", None)
    kept = reading.look(root, adapters.get("markdown"), 1 << 20, "full.md", None)
    unchanged = reading.look(root, adapters.get("markdown"), 1 << 20, "full.md",
                             (kept.sig, kept.digest, kept.sig.mtime_ns + reading.RACY_NS))
    looks = [kept, *markdown, graph, unchanged]
    assert [look.state for look in looks] == [
        "content", "too_large", "content", "too_large", "absent", "bad_name", "content", "unchanged"]
    assert kept.cards[0].project == "memsync" and len(graph.cards) == 2 and looks[2].cards[0].problem
    rows = [reading.packed(look) for look in looks]
    opcodes = {op.name for op, _, _ in pickletools.genops(pickle.dumps(rows, pickle.HIGHEST_PROTOCOL))}
    assert not opcodes & {"GLOBAL", "STACK_GLOBAL", "REDUCE", "NEWOBJ", "BUILD"}  # no class, no call
    # The long texts stay UTF-8 in the writer, which binds them as they are (next test)
    as_utf8 = [dataclasses.replace(
        look, cards=[dataclasses.replace(card, body=card.body.encode()) for card in look.cards],
        fields=[fields._replace(body=fields.body.encode()) for fields in look.fields])
        for look in looks]
    assert [reading.unpacked(row) for row in pickle.loads(pickle.dumps(rows))] == as_utf8


def test_a_body_crossed_as_utf8_is_stored_as_the_text_it_was(vault, tmp_path):
    # A row a parallel rebuild wrote holds TEXT, and FTS5 finds the words of a UTF-8 stream
    fill(vault, 120)
    db = tmp_path / "index.db"
    rebuilt(db, workers=2)
    conn = sqlite3.connect(db)
    try:
        kinds = conn.execute("SELECT DISTINCT typeof(body) FROM cards").fetchall()
        body = conn.execute("SELECT body FROM cards WHERE path = 'bulk/7/card-7.md'").fetchone()[0]
        hits = conn.execute("SELECT rowid FROM cards_fts WHERE cards_fts MATCH 'marker7x'").fetchall()
        cjk_hits = conn.execute("SELECT count(*) FROM cards_fts WHERE cards_fts MATCH "
                                "'body:\"服务 务器\"'").fetchone()[0]
    finally:
        conn.close()
    assert kinds == [("text",)]
    assert "服务器 marker7x" in body
    assert len(hits) == 1 and cjk_hits == 120


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


def test_a_bulk_load_writes_with_a_larger_page_cache_and_gives_it_back(vault, tmp_path, monkeypatch):
    fill(vault)
    monkeypatch.setattr(bulkload, "BULK_FULL_FILES", CARDS // 2)  # this vault gets it all
    index = Index(tmp_path / "bulk.db")
    usual = index._conn.execute("PRAGMA cache_size").fetchone()[0]
    seen = []

    def progress(done: int, total: int) -> None:  # called between the batches it writes
        if done < total:  # not the last call, made once the writing is over
            seen.append(index._conn.execute("PRAGMA cache_size").fetchone()[0])

    try:
        work = Indexer(index, config.load().sources, workers=1)
        work.reconcile(progress=progress)  # a first index: every file is work
        work.rebuild(progress=progress)
        assert seen and set(seen) == {-bulkload.BULK_CACHE_KIB}
        assert index._conn.execute("PRAGMA cache_size").fetchone()[0] == usual
        index._conn.execute("PRAGMA cache_size = -1234")  # a setting of the caller's own survives
        assert work.rebuild().added == CARDS + 1
        assert index._conn.execute("PRAGMA cache_size").fetchone()[0] == -1234
    finally:
        index.close()


def test_the_bulk_page_cache_grows_with_the_tree_up_to_its_cap():
    # a small tree (a watcher's first index of a small vault) keeps SQLite's own cache
    assert bulkload.bulk_cache_kib(0) == bulkload.bulk_cache_kib(100) == bulkload.DEFAULT_CACHE_KIB
    full, cap = bulkload.BULK_FULL_FILES, bulkload.BULK_CACHE_KIB
    assert bulkload.bulk_cache_kib(full // 2) == cap // 2
    assert bulkload.bulk_cache_kib(full) == bulkload.bulk_cache_kib(10 * full) == cap


def test_a_bulk_load_inside_a_larger_one_keeps_the_larger_cache(tmp_path):
    index = Index(tmp_path / "nested.db")
    full, cap = bulkload.BULK_FULL_FILES, bulkload.BULK_CACHE_KIB

    def cache() -> int:
        return index._conn.execute("PRAGMA cache_size").fetchone()[0]

    usual = cache()
    try:
        with index.bulk(full):  # a rebuild of every source, around one source's load
            with index.bulk(full // 4):
                assert cache() == -cap
            assert cache() == -cap
        with index.bulk(full // 4):
            with index.bulk(full):
                assert cache() == -cap
            assert cache() == -(cap // 4)
        assert cache() == usual
    finally:
        index.close()


def test_a_first_index_of_a_small_tree_writes_with_a_cache_in_proportion(vault, tmp_path, monkeypatch):
    fill(vault)
    monkeypatch.setattr(bulkload, "BULK_FULL_FILES", 100 * CARDS)
    monkeypatch.setattr(bulkload, "DEFAULT_CACHE_KIB", 1)
    index = Index(tmp_path / "bulk.db")
    seen = []

    def progress(done: int, total: int) -> None:
        if done < total:
            seen.append(index._conn.execute("PRAGMA cache_size").fetchone()[0])

    try:
        Indexer(index, config.load().sources, workers=1).reconcile(progress=progress)
        files = CARDS + 2  # and the broken and the too-large file
        assert seen and set(seen) == {-(bulkload.BULK_CACHE_KIB * files // (100 * CARDS))}
    finally:
        index.close()


def test_a_survey_shared_by_processes_finds_what_one_process_does(vault, tmp_path, monkeypatch):
    fill(vault, 120)
    write_card(vault, "bulk/4/deep/er/still.md", "x", "a file deeper down")
    write_card(vault, "top.md", "x", "a file at the top")
    index = Index(tmp_path / "survey.db")
    work = Indexer(index, config.load().sources, workers=2)
    work.reconcile()
    # Then a day's changes: an edit, a file removed, one added, a folder gone, one now excluded,
    # a racily clean file (read in the same instant it was written) and the too-large file gone.
    write_card(vault, "bulk/1/card-1.md", "卡片 1 edited", "edited body")
    (vault / "bulk/0/card-0.md").unlink()
    write_card(vault, "bulk/2/new.md", "new", "a new card")
    shutil.rmtree(vault / "bulk/3")
    (vault / ".obsidian").mkdir(exist_ok=True)
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["bulk/5/"]}')
    index._conn.execute("UPDATE files SET indexed_ns = mtime_ns WHERE path = 'bulk/6/card-6.md'")
    (vault / "bulk" / "big.md").unlink()
    source, adapter, excluded = "vault", work.sources["vault"].adapter, work.excluded["vault"]
    asked = frozenset({"bulk/big.md", "bulk/never-there.md"})
    # a sample of 5 files in this process (taken as quick stats, as on a warm local disk), the
    # rest in subtrees shared by the two workers
    monkeypatch.setattr(treewalk, "WALK_SAMPLE", 5)
    monkeypatch.setattr(treewalk, "SLOW_STAT_NS", 10**12)
    monkeypatch.setattr(survey, "PARTS_PER_WORKER", 1)
    monkeypatch.setattr(survey, "PROCESSES_FROM", 1)
    for under in (None, "bulk"):
        one = survey.survey(index, source, str(vault), adapter, excluded, under, 2, False, asked)
        shared = survey.survey(index, source, str(vault), adapter, excluded, under, 2, True, asked)
        assert one.shared == 0 and shared.shared >= 2
        shared.shared = 0
        assert shared == one
        monkeypatch.setattr(survey, "PROCESSES_FROM", 10**9)  # a small tree: walked whole
        assert survey.survey(index, source, str(vault), adapter, excluded, under, 2, True, asked) == one
        monkeypatch.setattr(survey, "PROCESSES_FROM", 1)
    assert "bulk/2/new.md" in one.work and "bulk/1/card-1.md" in one.work
    assert "bulk/6/card-6.md" in one.work  # racily clean: read again
    assert "bulk/0/card-0.md" in one.gone and "bulk/3/card-3.md" in one.gone
    assert "bulk/5/card-5.md" in one.gone  # excluded now
    assert one.present == set()  # the too-large file left: its problem can go
    # the whole reconcile, shared out, leaves the index a serial rebuild makes
    report = work.reconcile()
    assert (report.removed, report.added) == (13 + 13 + 1, 1) and report.updated >= 1  # bulk/3, bulk/5
    index.close()
    assert whole_index(tmp_path / "survey.db")["files"] == rebuilt(tmp_path / "serial.db", 1)["files"]
    assert whole_index(tmp_path / "survey.db")["problems"] == whole_index(tmp_path / "serial.db")["problems"]


def indexed_then_edited(vault: Path, db: Path, n: int, new: tuple[str, str, str],
                        workers: int) -> tuple[Index, Indexer]:
    """An index of `n` cards, then bulk/0/card-0.md removed and `new` (path, title, body)
    written: a survey finds one file gone and one to read."""
    fill(vault, n)
    index = Index(db)
    work = Indexer(index, config.load().sources, workers=workers)
    work.reconcile()
    (vault / "bulk/0/card-0.md").unlink()
    write_card(vault, *new)
    return index, work


def test_a_big_survey_without_processes_holds_one_subtree_at_a_time(vault, tmp_path, monkeypatch):
    index, work = indexed_then_edited(vault, tmp_path / "parts.db", 120,
                                      ("bulk/1/card-1.md", "卡片 1 edited", "edited body"), workers=1)
    source, adapter, excluded = "vault", work.sources["vault"].adapter, work.excluded["vault"]
    whole = survey.survey(index, source, str(vault), adapter, excluded)
    monkeypatch.setattr(treewalk, "WALK_SAMPLE", 5)
    monkeypatch.setattr(treewalk, "SLOW_STAT_NS", 10**12)
    monkeypatch.setattr(survey, "PROCESSES_FROM", 1)
    monkeypatch.setattr(survey, "PARTS_PER_WORKER", 1)  # bulk/0 ... bulk/7 are the parts
    held = []  # how many rows each read of stored stamps brought back
    stamps = Index.file_stamps_in

    def counted(self, *args, **kwargs):
        rows = stamps(self, *args, **kwargs)
        held.append(len(rows))
        return rows

    monkeypatch.setattr(Index, "file_stamps_in", counted)
    # a watcher's survey: no processes forked beside its threads
    parts = survey.survey(index, source, str(vault), adapter, excluded, fork=False)
    assert parts == whole and "bulk/1/card-1.md" in parts.work and parts.gone == ["bulk/0/card-0.md"]
    assert len(held) > 2 and max(held) < parts.stored / 2
    index.close()


def test_a_survey_worker_that_fails_leaves_the_survey_to_this_process(vault, tmp_path):
    fill(vault, 20)
    work = Indexer(Index(tmp_path / "fail.db"), config.load().sources, workers=2)
    parts = [(str(vault / "bulk" / str(i)), f"bulk/{i}/") for i in range(3)]
    # the workers cannot open this index: no result from them, and no exception either
    assert survey._shared(tmp_path / "missing.db", "vault", "markdown", work.excluded["vault"],
                          parts, 2, frozenset()) is None
    shared = survey._shared(tmp_path / "fail.db", "vault", "markdown", work.excluded["vault"],
                            parts, 2, frozenset())
    assert shared is not None and sum(s.scanned for s in shared) == len(
        [p for i in range(3) for p in (vault / "bulk" / str(i)).glob("*.md")])


def killed_survey(*args):
    """A survey worker that dies (killed, out of memory). At module level: a forked worker finds
    it by name."""
    os.kill(os.getpid(), signal.SIGKILL)


def surveyed_twice(vault: Path, db: Path, n: int, monkeypatch, **patched) -> tuple[survey.Survey, survey.Survey]:
    """Survey an index of `n` cards after one file went and one came (indexed_then_edited): in
    this process as a small tree, then as a big tree on quick stats shared by processes, with
    the names of memsync.survey (or of memsync.treewalk, where it has them) in `patched` set."""
    index, work = indexed_then_edited(vault, db, n, ("bulk/1/new.md", "new", "a new card"), workers=2)
    args = (index, "vault", str(vault), "markdown", work.excluded["vault"], None, 2)
    try:
        one = survey.survey(*args, False)
        monkeypatch.setattr(survey, "PROCESSES_FROM", 1)
        monkeypatch.setattr(treewalk, "SLOW_STAT_NS", 10**12)
        for name, value in patched.items():
            monkeypatch.setattr(treewalk if hasattr(treewalk, name) else survey, name, value)
        return one, survey.survey(*args, True)
    finally:
        index.close()


def test_a_survey_worker_killed_leaves_the_survey_to_this_process(vault, tmp_path, monkeypatch):
    one, found = surveyed_twice(vault, tmp_path / "killed.db", 60, monkeypatch,
                                WALK_SAMPLE=5, survey_parts=killed_survey)
    assert found.shared == 0 and found == one  # surveyed here, whole
    assert "bulk/1/new.md" in found.work and found.gone == ["bulk/0/card-0.md"]


def test_a_tree_the_sample_covers_is_surveyed_from_the_sample(vault, tmp_path, monkeypatch):
    # the sample lists the whole tree
    one, sampled = surveyed_twice(vault, tmp_path / "sampled.db", 30, monkeypatch, WALK_SAMPLE=10**6)
    assert sampled.shared == 0 and sampled == one
    assert one.gone == ["bulk/0/card-0.md"] and "bulk/1/new.md" in one.work
