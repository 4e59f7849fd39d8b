from .conftest import write_card
from .helpers import sync


def test_stats_counts_by_kind_and_source(vault, cli):
    write_card(vault, "03-Knowledge/a.md", "a", "knowledge card")
    write_card(vault, "08-Mistakes/b.md", "b", "mistake card")
    write_card(vault, "old.md", "old", "invalid one", invalid_at="2026-01-01")
    write_card(vault, ".trash/c.md", "c", "trashed card")
    sync()
    code, out = cli("stats", "--json")
    assert code == 0
    assert (out["cards"], out["valid"], out["invalid"]) == (3, 2, 1)
    assert out["by_kind"]["knowledge"] == 1 and out["by_kind"]["mistake"] == 1
    assert out["by_source"] == {"vault": 3}
    assert out["trash"]["files"] == 1 and out["trash"]["bytes"] > 0
    assert out["index"]["bytes"] > 0 and out["last_change"]
    assert out["watcher"]["live"] is False


def test_stats_human_output(vault, cli):
    write_card(vault, "a.md", "a", "card")
    sync()
    code, text = cli("stats")
    assert code == 0 and "cards: 1" in text and "watcher: not running" in text


def test_a_lock_file_nobody_holds_is_not_a_live_watcher(vault, cli, home):
    """The pid in a lock file can be alive (reused, or ours) while no watcher holds the lock."""
    import json
    import os

    write_card(vault, "a.md", "a", "card")
    sync()
    home.mkdir(parents=True, exist_ok=True)
    (home / "watch.lock").write_text(json.dumps({"pid": os.getpid(), "vault": str(vault)}))
    watcher = cli("stats", "--json")[1]["watcher"]
    assert watcher["live"] is False and watcher["stale_pid"] == os.getpid()


def test_the_index_bytes_are_the_sqlite_files_not_the_locks_beside_them(vault, cli, home):
    """`stats` summed every file named `<index>*`: the reindex turn's lock, a lock a killed
    watcher left, the vault label."""
    import json

    from memsync import private

    write_card(vault, "a.md", "a", "card")
    assert cli("index")[0] == 0
    db = home / "memsync.db"
    (home / "memsync.db.watch-lock").write_text(json.dumps({"pid": 999999, "vault": str(vault)}) * 100)
    assert (home / "memsync.db.reindex.lock").exists()
    out = cli("stats", "--json")[1]
    assert out["index"]["bytes"] == sum(p.stat().st_size for p in private.sqlite_files(db) if p.exists())


def test_a_title_written_as_a_mapping_is_a_problem_stats_names(vault, cli):
    (vault / "03-Knowledge").mkdir(parents=True, exist_ok=True)
    (vault / "03-Knowledge" / "deploy.md").write_text("---\ntitle: {Deploy: prod}\n---\nDeploy from the ops box.\n")
    sync()
    code, out = cli("stats", "--json")
    assert code == 0
    assert [p["message"] for p in out["problems"] if p["path"] == "03-Knowledge/deploy.md"] == [
        "title '{Deploy: prod}' is not one value, so the card is titled by its file name; write one "
        "line of text, in quotes if it holds a colon, braces or brackets"]


def test_a_key_typed_with_a_full_width_colon_is_named_with_what_to_type(vault, cli):
    """`title：部署` is what a Chinese input method gives: the problem named no line and no cause."""
    (vault / "部署.md").write_text("---\ntitle：生产部署\n---\n发布前先在预发布环境验证。\n", encoding="utf-8")
    (vault / "发布.md").write_text("---\ntags: [发布]\nowner：张伟\n---\n每周二晚上发布。\n", encoding="utf-8")
    assert cli("index")[0] == 0
    code, out = cli("stats", "--json")
    problems = {p["path"]: p["message"] for p in out["problems"]}
    assert code == 0 and problems["部署.md"] == ("frontmatter is not a key/value mapping; line 2 writes its key "
                                                "with a full-width colon (：): use an ASCII colon and a space, `key: value`")
    assert "line 3 writes its key with a full-width colon (：)" in problems["发布.md"]
    assert cli("search", "预发布环境", "--json")[1]["hits"]  # the body is still found
