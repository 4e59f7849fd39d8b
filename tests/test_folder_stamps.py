"""A reconcile does not list a folder whose stamp still holds (memsync.folders), and still finds
every change: in its files' content, in the folder's entries, below it, and in the rules."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from memsync import config, folders, reading, survey, sync, treewalk
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card


@pytest.fixture(autouse=True)
def big_survey(monkeypatch):
    """Every tree surveyed as a big one, in subtrees: the path that uses folder stamps."""
    monkeypatch.setattr(survey, "PROCESSES_FROM", 1)
    monkeypatch.setattr(treewalk, "WALK_SAMPLE", 0)  # this process lists the root and bulk/ only
    monkeypatch.setattr(treewalk, "SLOW_STAT_NS", 10**12)
    monkeypatch.setattr(survey, "PARTS_PER_WORKER", 1)


def settle() -> None:
    """Past the racy window, so the folders and files just written can be stamped as clean."""
    time.sleep(reading.RACY_NS / 1e9 + 0.05)


def tree(vault: Path, *more: tuple[str, str, str]) -> None:
    """40 cards in bulk/0 ... bulk/7, one deeper down, and `more` (path, title, body)."""
    for i in range(40):
        write_card(vault, f"bulk/{i % 8}/card-{i}.md", f"card {i}", f"body {i}")
    for card in (("bulk/4/deep/er/still.md", "still", "deep down"), *more):
        write_card(vault, *card)
    (vault / ".obsidian").mkdir(exist_ok=True)
    settle()


def indexed(index: Index, workers: int = 1) -> Indexer:
    """An index of the vault whose folders are stamped: the first reconcile indexes every file
    (a small tree then, walked whole), the second surveys the big tree and stamps its folders."""
    work = Indexer(index, config.load().sources, workers=workers)
    work.reconcile()
    work.reconcile()
    return work


def listings(monkeypatch) -> list[str]:
    """The folders a survey lists from now on (relative, with their "/")."""
    listed: list[str] = []
    real = treewalk.list_folder

    def recorded(adapter, excluded, folder, rel_prefix, found, denied=None):
        listed.append(rel_prefix)
        return real(adapter, excluded, folder, rel_prefix, found, denied)

    monkeypatch.setattr(treewalk, "list_folder", recorded)
    return listed


def stamps(db: Path) -> dict[str, tuple]:
    conn = sqlite3.connect(db)
    try:
        return {r[0]: r[1:] for r in conn.execute("SELECT path, files, folders FROM folder_stamps")}
    finally:
        conn.close()


def plain(index: Index, work: Indexer, monkeypatch) -> survey.Survey:
    """The survey as it is without stamps: every folder listed."""
    with monkeypatch.context() as m:
        m.setattr(folders, "EXACT_TIMES", frozenset())
        return work._survey("vault")


def test_a_folder_unchanged_since_its_listing_is_not_listed_again(vault, tmp_path, monkeypatch):
    tree(vault)
    index = Index(tmp_path / "stamps.db")
    work = indexed(index)
    stored = stamps(tmp_path / "stamps.db")
    assert stored["bulk/4/"] == (5, 1) and stored["bulk/4/deep/er/"] == (1, 0)
    listed = listings(monkeypatch)
    report = work.reconcile()
    assert report.unchanged == report.scanned == 41 and not (report.added or report.updated or report.removed)
    # only what the split into subtrees lists: the root and bulk/, never inside bulk/0 ... bulk/7
    assert listed == ["", "bulk/"]
    assert index.count_files("vault") == 41


def test_every_change_is_found_as_a_survey_without_stamps_finds_it(vault, tmp_path, monkeypatch):
    tree(vault, ("bulk/6/sub/keep.md", "keep", "moves with its folder"))
    index = Index(tmp_path / "changes.db")
    work = indexed(index)
    write_card(vault, "bulk/1/card-1.md", "card 1", "edited: the folder's times stay")
    write_card(vault, "bulk/2/new.md", "new", "a new entry")
    (vault / "bulk/0/card-0.md").unlink()
    write_card(vault, "bulk/4/deep/er/new.md", "deeper", "only its own folder's times move")
    write_card(vault, "bulk/5/sub/x.md", "x", "in a new subfolder")
    shutil.rmtree(vault / "bulk/3")
    os.rename(vault / "bulk/6/sub", vault / "bulk/6/moved")
    settle()
    found = work._survey("vault")
    assert found == plain(index, work, monkeypatch)
    assert {"bulk/1/card-1.md", "bulk/2/new.md", "bulk/4/deep/er/new.md", "bulk/5/sub/x.md",
            "bulk/6/moved/keep.md"} <= set(found.work)
    assert {"bulk/0/card-0.md", "bulk/3/card-3.md", "bulk/6/sub/keep.md"} <= set(found.gone)
    work.reconcile()
    after = stamps(tmp_path / "changes.db")
    assert "bulk/3/" not in after and "bulk/6/sub/" not in after and after["bulk/6/moved/"] == (1, 0)
    assert after["bulk/4/deep/er/"] == (2, 0)
    # and the next survey, stamps and all, agrees with one that lists everything
    assert work._survey("vault") == plain(index, work, monkeypatch)


def test_new_exclusions_list_every_folder_again(vault, tmp_path, monkeypatch):
    tree(vault)
    index = Index(tmp_path / "rules.db")
    work = indexed(index)
    # .obsidian existed already: only its own times move, none of bulk/'s
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["/card-1\\\\.md$/"]}')
    listed = listings(monkeypatch)
    found = work._survey("vault")
    assert "bulk/1/" in listed and found.gone == ["bulk/1/card-1.md"]


def test_a_folder_holding_a_file_that_could_not_be_indexed_is_listed_every_time(vault, tmp_path, monkeypatch):
    tree(vault)
    (vault / "bulk" / "5" / "big.md").write_bytes(b"x" * (sync.MAX_FILE_BYTES + 1))
    settle()
    index = Index(tmp_path / "problem.db")
    work = indexed(index)
    assert any(p["path"] == "bulk/5/big.md" for p in index.problems())
    listed = listings(monkeypatch)
    work.reconcile()
    # 6 wanted files listed, 5 stored: its stamp cannot stand in for a listing
    assert "bulk/5/" in listed and "bulk/6/" not in listed
    assert any(p["path"] == "bulk/5/big.md" for p in index.problems())  # still there, still said


def test_a_folder_changed_within_the_racy_window_gets_no_stamp(vault, tmp_path, monkeypatch):
    tree(vault)
    monkeypatch.setattr(survey, "RACY_NS", 10**18)  # every change is "just now"
    index = Index(tmp_path / "racy.db")
    indexed(index)
    assert stamps(tmp_path / "racy.db") == {}


def test_a_subfolder_left_unstamped_is_still_entered(vault, tmp_path, monkeypatch):
    tree(vault, ("bulk/2/fresh/a.md", "a", "older"))
    index = Index(tmp_path / "child.db")
    work = indexed(index)
    write_card(vault, "bulk/2/fresh/b.md", "b", "newer: fresh/ moves, bulk/2/ does not")
    with monkeypatch.context() as m:
        m.setattr(survey, "RACY_NS", 10**18)  # fresh/ is listed too soon after its change to stamp
        work.reconcile()
    assert "bulk/2/fresh/" not in stamps(tmp_path / "child.db") and "bulk/2/" in stamps(tmp_path / "child.db")
    # bulk/2/'s stamp says one subfolder, and none is stamped below it: it is listed, fresh/ entered
    found = work._survey("vault")
    assert found == plain(index, work, monkeypatch) and not found.gone
    assert index.count_files("vault", "bulk/2/fresh") == 2


def test_a_rebuild_stores_the_stamps_of_the_survey_before_it(vault, tmp_path, monkeypatch):
    tree(vault)
    index = Index(tmp_path / "rebuild.db")
    work = indexed(index)
    before = stamps(tmp_path / "rebuild.db")
    write_card(vault, "bulk/3/late.md", "late", "a sixth file in bulk/3/")
    settle()
    work.rebuild()
    # not left empty by the rebuild: bulk/3/ listed anew, the rest as they were
    assert stamps(tmp_path / "rebuild.db") == {**before, "bulk/3/": (6, 0)}
    listed = listings(monkeypatch)
    found = work._survey("vault")
    assert not found.work and listed == ["", "bulk/"]
    write_card(vault, "bulk/3/later.md", "later", "bulk/3/ moves again")
    found = work._survey("vault")
    assert found.work == ["bulk/3/later.md"] and found == plain(index, work, monkeypatch)


def test_worker_processes_stamp_what_one_process_does(vault, tmp_path):
    tree(vault)
    for workers in (1, 2):
        index = Index(tmp_path / f"w{workers}.db")
        indexed(index, workers)
        index.close()
    assert stamps(tmp_path / "w1.db") == stamps(tmp_path / "w2.db") != {}


def test_where_folder_times_are_not_exact_every_folder_is_listed(vault, tmp_path, monkeypatch):
    tree(vault)
    mounts = tmp_path / "mountinfo"
    mounts.write_text(f"22 1 0:21 / / rw - ext4 /dev/vda rw\n"
                      f"90 22 0:50 / {os.path.realpath(vault)} rw - nfs4 server:/vault rw\n")
    monkeypatch.setattr(folders, "MOUNTINFO", str(mounts))
    index = Index(tmp_path / "nfs.db")
    work = indexed(index)
    listed = listings(monkeypatch)
    work.reconcile()
    assert stamps(tmp_path / "nfs.db") == {} and "bulk/4/deep/er/" in listed


def test_a_source_dropped_leaves_no_stamps(vault, tmp_path):
    tree(vault)
    index = Index(tmp_path / "drop.db")
    work = indexed(index)
    assert stamps(tmp_path / "drop.db")
    work.drop_source("vault")
    assert stamps(tmp_path / "drop.db") == {}


MOUNTS = """\
22 1 0:21 / / rw,relatime - overlay overlay rw,lowerdir=/a
23 22 8:1 / /home rw - ext4 /dev/sda1 rw
24 23 0:40 / /home/me/cloud\\040drive rw shared:5 - fuse.rclone remote: rw
25 23 0:41 / /home/me/nas rw - nfs4 server:/share rw
26 23 8:2 / /home/me/nas rw - xfs /dev/sdb1 rw
"""


@pytest.mark.parametrize(("path", "kind"), [
    ("/etc/hosts", "overlay"),
    ("/home/me/notes", "ext4"),
    ("/home/me/cloud drive/vault", "fuse.rclone"),  # the escaped space, and an optional field
    ("/home/me/cloud drivex", "ext4"),  # a name that only starts like a mount point
    ("/home/me/nas/vault", "xfs"),  # the later of two mounts on one point hides the first
])
def test_the_file_system_of_a_path_is_read_from_the_mount_table(path, kind):
    assert folders.fs_type(path, MOUNTS) == kind


def test_only_local_file_systems_keep_exact_folder_times():
    assert {"ext4", "xfs", "btrfs", "tmpfs"} <= folders.EXACT_TIMES
    assert not {"nfs4", "cifs", "vfat", "exfat", "fuse.rclone", "9p"} & folders.EXACT_TIMES


def test_an_adapter_whose_rules_changed_lists_every_folder_again(tmp_path, monkeypatch):
    # An upgrade taught the memory-server adapter to read memory.json beside every .jsonl: the
    # folders stamped under the old rules must not keep the new file out until they change.
    from memsync.adapters import MemoryGraphAdapter
    from memsync.model import Source

    root = tmp_path / "graphs"
    entity = '{"type": "entity", "name": "%s", "entityType": "note", "observations": ["seen"]}\n'
    for i in range(8):
        (root / f"g{i}").mkdir(parents=True)
        (root / f"g{i}" / "memory.jsonl").write_text(entity % f"e{i}")
    (root / "g3" / "memory.json").write_text(entity % "kept in memory.json")
    settle()
    index = Index(tmp_path / "graphs.db")
    work = Indexer(index, [Source(name="graphs", adapter="mcp-memory", root=str(root))])
    with monkeypatch.context() as old:  # the rules of the release before
        old.setattr(MemoryGraphAdapter, "wants_name", lambda self, name: name.endswith(".jsonl"))
        old.setattr(MemoryGraphAdapter, "rules_version", 1, raising=False)
        work.reconcile()
        work.reconcile()  # stamps the folders
        assert index.count_files("graphs") == 8 and stamps(tmp_path / "graphs.db")
    report = work.reconcile()
    assert report.added == 1 and "g3/memory.json" in index.file_states("graphs")


def test_the_rules_key_changes_with_the_version_of_an_adapters_rules():
    from memsync.adapters import get
    from memsync.exclusions import Exclusions

    adapter, excluded = get("agents"), Exclusions("/nowhere")
    before = folders.rules_key(adapter, excluded)
    adapter.rules_version += 1
    assert folders.rules_key(adapter, excluded) != before
