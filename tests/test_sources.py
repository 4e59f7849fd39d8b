"""`memsync sources` through the real CLI: no two sources read the same files, the vault stays, and
the index always equals a rebuild from the sources configured now."""

from __future__ import annotations

import json
import os

import pytest

from memsync import config
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card
from .helpers import snapshot


@pytest.fixture
def notes(tmp_path):
    root = tmp_path / "notes"
    write_card(root, "redis.md", "redis notes", "the cache runs redis-7 on port 6380")
    return root


def by_source() -> dict[str, int]:
    cfg = config.load()
    index = Index(cfg.db.path)
    try:
        return dict(index._conn.execute("SELECT source, count(*) FROM cards GROUP BY 1").fetchall())
    finally:
        index.close()


def rebuilt_equals_index() -> bool:
    """The index as it is, against a rebuild from the current config into a fresh file."""
    cfg = config.load()
    live, fresh = Index(cfg.db.path), Index(cfg.db.path.with_name("fresh.db"))
    try:
        Indexer(fresh, cfg.sources).rebuild()
        return snapshot(live) == snapshot(fresh)
    finally:
        live.close()
        fresh.close()


# --- sources that would read the same files are refused -------------------------------------------


@pytest.mark.parametrize("where", ["vault", "vault/sub", "parent of vault"])
def test_the_vault_or_a_folder_overlapping_it_is_refused(vault, run_cli, where):
    (vault / "sub").mkdir()
    path = {"vault": vault, "vault/sub": vault / "sub", "parent of vault": vault.parent}[where]
    code, out, _err = run_cli("sources", "--add", "self", "--path", path, "--json")
    assert code == 2
    message = out["error"]["message"]
    assert "the vault" in message and "index the same files twice" in message
    assert [s["name"] for s in run_cli("sources", "--json")[1]["sources"]] == ["vault"]


def test_a_symlink_to_the_vault_is_refused(vault, tmp_path, run_cli):
    os.symlink(vault, tmp_path / "alias")
    code, out, _err = run_cli("sources", "--add", "alias", "--path", tmp_path / "alias", "--json")
    assert code == 2 and "the vault" in out["error"]["message"]


def test_a_folder_inside_or_around_another_source_is_refused(tmp_path, run_cli):
    notes = tmp_path / "area/notes"
    (notes / "deep").mkdir(parents=True)
    assert run_cli("sources", "--add", "notes", "--path", notes)[0] == 0
    for name, path in (("same", notes), ("inner", notes / "deep"), ("outer", notes.parent)):
        code, out, _err = run_cli("sources", "--add", name, "--path", path, "--json")
        assert code == 2, name
        assert "source 'notes'" in out["error"]["message"]


def test_sources_that_read_different_files_may_share_a_folder(tmp_path, run_cli):
    project = tmp_path / "shop"
    (project / ".cursor/rules").mkdir(parents=True)
    (project / "AGENTS.md").write_text("# Agents\nrun tests with tox")
    (project / ".cursor/rules/style.mdc").write_text("---\ndescription: style\n---\nuse ruff")
    assert run_cli("sources", "--add", "repo", "--adapter", "agents", "--path", project)[0] == 0
    assert run_cli("sources", "--add", "rules", "--adapter", "cursor", "--path", project)[0] == 0
    # markdown never enters a dot-folder, so a Claude folder below a notes source is not shared
    home = tmp_path / "me"
    (home / ".claude").mkdir(parents=True)
    assert run_cli("sources", "--add", "me", "--path", home)[0] == 0
    assert run_cli("sources", "--add", "claude", "--adapter", "agents", "--path", home / ".claude")[0] == 0


# --- the vault, and options that belong to --add ----------------------------------------------------


def test_the_vault_cannot_be_removed_and_the_message_says_how_to_change_it(run_cli):
    code, out, _err = run_cli("sources", "--remove", "vault", "--json")
    assert code == 2
    assert "primary" in out["error"]["message"] and "--vault" in out["error"]["message"]


@pytest.mark.parametrize("extra", [["--path", "."], ["--adapter", "agents"]])
def test_add_options_without_add_are_a_usage_error(run_cli, extra):
    code, _out, err = run_cli("sources", *extra)
    assert code == 2 and "--add" in err


def test_add_says_when_a_running_watcher_picks_the_source_up(notes, run_cli):
    code, out, _err = run_cli("sources", "--add", "notes", "--path", notes, "--json")
    assert code == 0 and "within 10 seconds" in out["note"]


def test_an_added_source_is_searchable_at_once(notes, run_cli):
    code, out, _err = run_cli("sources", "--add", "notes", "--path", notes, "--json")
    assert code == 0 and out["indexed_files"] == 1 and "indexed its 1 file(s) now" in out["note"]
    code, found, _err = run_cli("search", "redis-7", "--source", "notes", "--json")
    assert code == 0 and [h["path"] for h in found["hits"]] == ["redis.md"]
    assert rebuilt_equals_index()


# --- the index holds only configured sources --------------------------------------------------------


def test_index_drops_the_cards_of_a_source_no_longer_configured(home, vault, notes, run_cli):
    write_card(vault, "a.md", "vault card", "a card kept in the vault itself")
    run_cli("sources", "--add", "notes", "--path", notes)
    run_cli("index")
    assert by_source() == {"vault": 1, "notes": 1}
    # config.json rewritten without the source (by hand, or while a watcher re-read it)
    data = json.loads((home / "config.json").read_text())
    (home / "config.json").write_text(json.dumps({**data, "sources": []}))
    code, out, _err = run_cli("index", "--json")
    assert code == 0 and out["removed"] == 1
    assert by_source() == {"vault": 1}
    assert run_cli("search", "redis-7")[0] == 1
    assert rebuilt_equals_index()


def test_remove_forgets_the_cards_and_the_problems_of_the_source(notes, run_cli):
    (notes / os.fsdecode(b"bad-\xff.md")).write_text("a name that is not UTF-8")
    run_cli("sources", "--add", "notes", "--path", notes)
    run_cli("index")
    stats = run_cli("stats", "--json")[1]
    assert stats["by_source"] == {"notes": 1} and [p["source"] for p in stats["problems"]] == ["notes"]
    code, out, _err = run_cli("sources", "--remove", "notes", "--json")
    assert code == 0 and out["removed"] == 1
    stats = run_cli("stats", "--json")[1]
    assert stats["by_source"] == {} and stats["problems"] == []
    assert rebuilt_equals_index()


# --- an overlapping source in config.json (written by hand, or a vault moved over it) -------------


def write_sources(home, *entries) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"sources": [
        {"name": name, "adapter": "markdown", "path": str(path)} for name, path in entries]}))


def says_ignored(problems: list[str], name: str) -> bool:
    return any(f"source {name} is ignored" in p and f"memsync sources --remove {name}" in p
               for p in problems)


def test_a_hand_written_source_inside_the_vault_is_left_out_and_said(home, vault, run_cli):
    write_card(vault, "sub/redis.md", "redis notes", "the cache runs redis-7 on port 6380")
    write_sources(home, ("inner", vault / "sub"))
    code, _out, err = run_cli("index", "--json")
    assert code == 0 and "source inner is ignored" in err
    assert by_source() == {"vault": 1}
    code, out, _err = run_cli("search", "redis-7", "--json")
    assert code == 0 and [h["source"] for h in out["hits"]] == ["vault"]
    paths = run_cli("paths", "--json")[1]
    assert [s["name"] for s in paths["sources"]] == ["vault"]
    assert says_ignored(paths["problems"], "inner")
    stats = run_cli("stats", "--json")[1]
    assert says_ignored(stats["config_problems"], "inner") and "the vault" in stats["config_problems"][0]
    listed = run_cli("sources", "--json")[1]["sources"]
    assert [(s["name"], bool(s["ignored"])) for s in listed] == [("vault", False), ("inner", True)]


def test_an_ignored_source_can_be_removed_with_memsync_itself(home, vault, run_cli):
    (vault / "sub").mkdir()
    write_sources(home, ("inner", vault / "sub"))
    code, out, _err = run_cli("sources", "--remove", "inner", "--json")
    assert code == 0 and out["status"] == "removed"
    assert json.loads((home / "config.json").read_text())["sources"] == []
    assert run_cli("paths", "--json")[1]["problems"] == []


def test_a_vault_moved_over_a_source_leaves_the_source_out(notes, tmp_path, monkeypatch, run_cli):
    run_cli("sources", "--add", "notes", "--path", notes)
    run_cli("index")
    assert by_source() == {"notes": 1}
    # the same home, now with the parent of the source as the vault: one card, not two
    monkeypatch.setenv("MEMSYNC_VAULT", str(tmp_path))
    code, out, _err = run_cli("index", "--json")
    # another vault gets its own index (memsync.store.vaults): the note is read once, as a vault card
    assert code == 0 and (out["added"], out["removed"]) == (1, 0)
    assert by_source() == {"vault": 1}
    assert says_ignored(run_cli("stats", "--json")[1]["config_problems"], "notes")
    assert run_cli("sources", "--remove", "notes")[0] == 0


def test_a_symlinked_source_over_another_is_left_out_the_first_one_stays(home, notes, tmp_path, run_cli):
    os.symlink(notes, tmp_path / "alias")
    write_sources(home, ("notes", notes), ("alias", tmp_path / "alias"))
    cfg = config.load()
    assert [s.name for s in cfg.extra_sources] == ["notes"]
    assert [left.source.name for left in cfg.ignored_sources] == ["alias"]
    assert [s.name for s in config.reload(cfg).sources] == ["vault", "notes"]  # watch and mcp
    assert run_cli("index")[0] == 0
    assert by_source() == {"notes": 1}
    code, out, _err = run_cli("search", "redis-7", "--source", "alias", "--json")
    assert "source alias is ignored" in out["error"]["message"]


def test_add_keeps_the_other_entries_as_written(home, tmp_path, run_cli):
    (home / "rel").mkdir(parents=True)
    (tmp_path / "more").mkdir()
    (home / "config.json").write_text(json.dumps(
        {"sources": [{"name": "rel", "adapter": "markdown", "path": "rel", "note": "mine"}]}))
    assert run_cli("sources", "--add", "more", "--path", tmp_path / "more")[0] == 0
    entries = json.loads((home / "config.json").read_text())["sources"]
    assert entries[0] == {"name": "rel", "adapter": "markdown", "path": "rel", "note": "mine"}
    assert entries[1]["path"] == str(tmp_path / "more")


# --- a source path that names a file --------------------------------------------------------------


def test_a_source_path_that_is_a_file_is_called_a_file_not_a_missing_folder(tmp_path, home, run_cli):
    shared = tmp_path / "dotfiles" / "CLAUDE.md"
    shared.parent.mkdir()
    shared.write_text("# Shared rules\n")
    home.mkdir(exist_ok=True)  # config.json written by hand, naming the file itself
    (home / "config.json").write_text(json.dumps({"sources": [
        {"name": "dots", "adapter": "agents", "path": str(shared)},
        {"name": "gone", "adapter": "agents", "path": str(tmp_path / "nowhere")}]}))

    code, listed, _ = run_cli("sources", "--json")
    assert code == 0
    assert {s["name"]: s["on_disk"] for s in listed["sources"]} == {
        "vault": "folder", "dots": "file", "gone": "missing"}
    text = run_cli("sources")[1]
    assert "a file, not a folder" in text and text.count("(missing folder)") == 1
    findings = run_cli("doctor", "--json")[1]["findings"]
    assert any(f"{shared} is a file, not a folder" in f["message"] for f in findings)
    assert f"{shared} is a file, not a folder" in run_cli("paths")[1]


def test_a_source_added_again_under_its_name_gets_its_ids_and_reads_back(cli, notes):
    def hit() -> tuple[int, int]:
        (card,) = cli("search", "redis-7", "--json")[1]["hits"]
        return card["id"], cli("show", card["id"], "--json")[1]["use"]["opened"]

    cli("sources", "--add", "notes", "--path", notes)
    card_id, opened = hit()
    assert opened == 1
    cli("sources", "--remove", "notes")
    assert cli("search", "redis-7", "--json")[1]["hits"] == []
    cli("sources", "--add", "notes", "--path", notes)
    assert hit() == (card_id, 2)  # the same card: its id, and the read before the removal
    cli("sources", "--remove", "notes")
    cli("sources", "--add", "others", "--path", notes)  # another name: other cards
    assert hit()[0] != card_id
