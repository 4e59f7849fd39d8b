"""The survey before a load (memsync.survey, memsync.treewalk): shared by processes or
threads, or in parts, it finds what one process walking the tree finds, and a worker that
fails or dies leaves the survey to this process."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from memsync import config, survey, treewalk
from memsync.store.index import Index
from memsync.sync import Indexer

from . import rebuilding
from .conftest import write_card
from .rebuilding import fill, rebuilt, whole_index

small_batches = rebuilding.small_batches  # autouse: the small thresholds for every test here


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
