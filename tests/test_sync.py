"""The indexer: incremental sync, reconcile and rebuild through one code path."""

import json
import os
import shutil

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import memsync.adapters as adapters
from memsync import api, config
from memsync.exclusions import Exclusions
from memsync.model import Source
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card
from .helpers import found, indexer, snapshot, sync


def age(path, seconds=3600):
    """Make a file look like it was last written a while ago (an existing vault)."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


def test_index_twice_second_run_changes_and_hashes_nothing(vault, cli):
    for i in range(5):
        age(write_card(vault, f"03-Knowledge/n{i}.md", f"note {i}", f"body number {i}"))
    code, first = cli("index", "--json")
    assert code == 0 and first["added"] == 5
    code, second = cli("index", "--json")
    assert second["hashed"] == 0
    assert (second["added"], second["updated"], second["removed"]) == (0, 0, 0)
    assert second["unchanged"] == 5


def test_racily_clean_file_is_rehashed(vault, cli):
    """A file whose mtime is not older than the moment we read it may change again within the
    same timestamp tick with an identical signature, so the next run must look at it again."""
    path = write_card(vault, "fresh.md", "fresh", "just written")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))  # "written" after our read
    cli("index")
    code, second = cli("index", "--json")
    assert second["hashed"] == 1 and second["updated"] == 0 and second["unchanged"] == 1


def test_modified_file_is_reindexed(vault):
    path = write_card(vault, "a.md", "alpha", "first version zebra")
    sync()
    path.write_text("---\ntitle: alpha\n---\nsecond version yak")
    report = sync()
    assert report.updated == 1
    assert found("yak") == ["a.md"] and found("zebra") == []


def test_same_size_rewrite_with_restored_mtime_is_detected(vault):
    """rsync / Syncthing restore mtimes: size + mtime alone would miss this change."""
    path = write_card(vault, "a.md", "alpha", "content AAAA")
    sync()
    st = os.stat(path)
    path.write_text(path.read_text().replace("AAAA", "BBBB"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size
    sync()
    assert found("bbbb") == ["a.md"]


def test_deleted_file_leaves_the_index(vault):
    path = write_card(vault, "gone.md", "gone", "vanishing marker")
    sync()
    path.unlink()
    assert sync().removed == 1
    assert found("vanishing") == []


def test_excluded_paths_are_not_indexed(vault):
    write_card(vault, ".trash/t.md", "trashed", "secretword one")
    write_card(vault, ".obsidian/x.md", "cfg", "secretword two")
    write_card(vault, "notes/.hidden.md", "hidden", "secretword three")
    (vault / "notes" / "x.md~").write_text("secretword four")
    (vault / "notes" / "plain.txt").write_text("secretword five")
    write_card(vault, "notes/real.md", "real", "secretword six")
    sync()
    assert found("secretword") == ["notes/real.md"]


def test_symlinks_are_not_followed(vault, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# outside\nlinkedword")
    (vault / "link.md").symlink_to(outside)
    sync()
    assert found("linkedword") == []


def test_files_over_the_size_cap_are_reported_not_indexed(vault):
    from memsync.sync import MAX_FILE_BYTES

    big = vault / "big.md"
    big.write_bytes(b"# big\n" + b"hugeword " * (MAX_FILE_BYTES // 9 + 10))
    report = sync()
    assert found("hugeword") == []
    problems = api.stats(config.load())["problems"]
    assert any(p["path"] == "big.md" and "over the 8,388,608 bytes limit" in p["message"] for p in problems)
    assert report.added == 0
    assert any(p["path"] == "big.md" for p in report.problems)


def test_the_problem_of_a_file_that_could_not_be_indexed_goes_with_the_file(vault):
    from memsync.sync import MAX_FILE_BYTES

    (vault / "notes").mkdir()
    (vault / "notes/big.md").write_bytes(b"hugeword " * (MAX_FILE_BYTES // 9 + 10))
    sync()
    (vault / "notes").rename(vault / "notes2")
    sync()
    assert [p["path"] for p in api.stats(config.load())["problems"]] == ["notes2/big.md"]
    (vault / "notes2/big.md").unlink()
    sync()
    assert api.stats(config.load())["problems"] == []


def test_broken_yaml_is_indexed_and_reported(vault):
    (vault / "bad.md").write_text("---\ntitle: [oops\n---\n# Broken\nbrokenmarker text")
    sync()
    assert found("brokenmarker") == ["bad.md"]
    problems = api.stats(config.load())["problems"]
    assert [p["path"] for p in problems] == ["bad.md"]


def test_problem_clears_when_file_is_fixed(vault):
    path = vault / "bad.md"
    path.write_text("---\ntitle: [oops\n---\nbody")
    sync()
    path.write_text("---\ntitle: fixed\n---\nbody")
    sync()
    assert api.stats(config.load())["problems"] == []


def test_non_utf8_file_name_is_reported_not_fatal(vault):
    name = os.fsencode(str(vault)) + b"/bad\xffname.md"
    with open(name, "wb") as handle:
        handle.write(b"# bad name\nbadnamemarker")
    write_card(vault, "ok.md", "ok", "okmarker")
    report = sync()
    assert found("okmarker") == ["ok.md"]
    assert any("UTF-8" in p["message"] for p in report.problems)


def test_ids_survive_modification_and_rebuild(vault):
    path = write_card(vault, "a.md", "alpha", "stable id body")
    sync()
    work, index = indexer()
    first = index.card_by_path("vault", "a.md")["id"]
    path.write_text("---\ntitle: alpha\n---\nchanged body")
    work.reconcile()
    assert index.card_by_path("vault", "a.md")["id"] == first
    work.rebuild()
    assert index.card_by_path("vault", "a.md")["id"] == first
    index.close()


def test_ids_survive_deleting_the_database(vault, cli):
    for i in range(20):
        write_card(vault, f"d/{i}.md", f"card {i}", f"body {i}")
    cli("index")
    _, index = indexer()
    before = {k: v["id"] for k, v in snapshot(index).items()}
    index.close()
    db = config.load().db.path
    for f in db.parent.glob(db.name + "*"):
        f.unlink()
    code, _ = cli("index", "--rebuild")
    assert code == 0
    _, index = indexer()
    assert {k: v["id"] for k, v in snapshot(index).items()} == before
    index.close()


def test_read_stats_survive_rebuild(vault, cli):
    write_card(vault, "a.md", "alpha", "read me please")
    cli("index")
    card_id = cli("search", "read", "--json")[1]["hits"][0]["id"]
    cli("show", card_id)
    cli("show", card_id)
    cli("index", "--rebuild")
    _, index = indexer()
    assert index.read_stats(card_id)[0] == 2
    index.close()


def test_rename_found_by_reconcile_keeps_id_and_stats(vault, cli):
    write_card(vault, "a.md", "alpha", "moving card body")
    cli("index")
    card_id = cli("search", "moving", "--json")[1]["hits"][0]["id"]
    cli("show", card_id)
    (vault / "sub").mkdir()
    shutil.move(vault / "a.md", vault / "sub" / "b.md")
    report = sync()
    assert report.moved == 1
    _, index = indexer()
    assert index.card_by_path("vault", "sub/b.md")["id"] == card_id
    assert index.read_stats(card_id)[0] == 1
    index.close()


def test_a_new_card_at_a_renamed_path_gets_a_new_id(vault):
    write_card(vault, "a.md", "alpha", "original card")
    sync()
    work, index = indexer()
    original = index.card_by_path("vault", "a.md")["id"]
    os.rename(vault / "a.md", vault / "b.md")
    work.move("vault", "a.md", "b.md")
    write_card(vault, "a.md", "alpha again", "a different card")
    work.sync_paths("vault", ["a.md"])
    assert index.card_by_path("vault", "b.md")["id"] == original
    assert index.card_by_path("vault", "a.md")["id"] != original
    index.close()


def test_incremental_equals_rebuild_after_mixed_changes(vault):
    for i in range(10):
        write_card(vault, f"k/{i}.md", f"t{i}", f"body {i}")
    sync()
    (vault / "k" / "3.md").unlink()
    os.rename(vault / "k" / "4.md", vault / "k" / "44.md")
    write_card(vault, "k/5.md", "t5", "changed body")
    write_card(vault, "new.md", "new", "brand new")
    sync()
    _, index = indexer()
    incremental = snapshot(index)
    index.close()
    work, fresh = indexer(vault.parent / "fresh.db")
    work.rebuild()
    assert snapshot(fresh, with_ids=False) == {
        k: {f: v for f, v in row.items() if f != "id"} for k, row in incremental.items()
    }
    fresh.close()


def test_indexing_never_changes_a_vault_byte(vault):
    write_card(vault, "a.md", "alpha", "body", tags=["x"])
    (vault / "bad.md").write_bytes(b"---\ntitle: [x\n---\n\xff")
    write_card(vault, ".trash/old.md", "old", "trash")
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    stats = {p: os.stat(p).st_mtime_ns for p in before}
    work, index = indexer()
    work.reconcile()
    work.rebuild()
    index.close()
    after = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    assert after == before
    assert {p: os.stat(p).st_mtime_ns for p in after} == stats


def test_large_batches_read_in_worker_processes_give_the_same_index(vault, run_cli, monkeypatch):
    from memsync import sync as sync_module

    for i in range(sync_module.PARALLEL_FROM + 100):
        write_card(vault, f"bulk/{i % 7}/card-{i}.md", f"卡片 {i}", f"bulk body {i} 服务器 marker{i}x")
    (vault / "bulk" / "bad.md").write_text("---\ntitle: [oops\n---\nbroken but indexed")
    code, report, err = run_cli("index", "--json")  # a single-threaded CLI process: forks workers
    assert code == 0, err
    assert report["added"] == sync_module.PARALLEL_FROM + 101
    _, index = indexer()
    parallel = snapshot(index)
    index.close()
    monkeypatch.setattr(sync_module, "PARALLEL_FROM", 10**9)
    work, fresh = indexer(vault.parent / "sequential.db")
    work.rebuild()
    assert snapshot(fresh) == parallel
    fresh.close()


def test_two_indexers_racing_on_one_new_file_do_not_fail(vault):
    """A watcher and a write command may both see a file as new before either has stored it."""
    from memsync.model.indexing import SyncReport

    write_card(vault, "race.md", "race", "two indexers, one file")
    first, index_a = indexer()
    second, index_b = indexer()
    stale = second._look("vault", "race.md", None)  # taken before the first indexer stores it
    first.sync_paths("vault", ["race.md"])
    second._apply("vault", [stale], {}, SyncReport())
    assert found("indexers") == ["race.md"]
    index_a.close()
    index_b.close()


NAMES = ["a.md", ".a.md", "b.jsonl", "c.md~", "d.MD", "e.txt", "sub", ".hid", "Templates"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), min_size=1, max_size=12),
       adapter_name=st.sampled_from(["markdown", "mcp-memory", "agents"]),
       filters=st.sampled_from([[], ["Templates/"], ["/\\.jsonl$/"], ["sub/a"]]))
@example(paths=[["sub", "a.md"], ["a.md"]], adapter_name="markdown", filters=["sub/a"])
@example(paths=[["b.jsonl"], ["sub", "b.jsonl"]], adapter_name="mcp-memory", filters=["/\\.jsonl$/"])
def test_a_walk_finds_what_the_adapter_and_the_exclusions_want(tmp_path_factory, paths, adapter_name, filters):
    # The walk decides most files by their name alone (adapters.base: by_name); it must find
    # exactly the files a plain walk asking adapter.wants and the exclusions finds.
    root = tmp_path_factory.mktemp("walk")
    for parts in paths:
        target = root.joinpath(*parts)
        if any(p.is_file() for p in target.parents if p != root and p.is_relative_to(root)):
            continue  # a file stands where this path needs a folder
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
    (root / ".obsidian").mkdir(exist_ok=True)
    (root / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": filters}))
    adapter, excluded = adapters.get(adapter_name), Exclusions(str(root))
    expected = set()
    for folder, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if rel_dir == "." else rel_dir + "/"
        if prefix and (not adapter.enters(prefix.rstrip("/")) or excluded.excludes_folder(prefix.rstrip("/"))):
            dirs[:] = []
            continue
        expected |= {prefix + f for f in files if adapter.wants(prefix + f) and not excluded.excludes(prefix + f)}
    index = Index(tmp_path_factory.mktemp("db") / "walk.db")
    try:
        work = Indexer(index, [Source("s", adapter_name, str(root), True)])
        assert set(work.files_on_disk("s")) == expected
    finally:
        index.close()
