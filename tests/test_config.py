import json
import os
import shutil
import subprocess

import pytest

from memsync import chars, config, configjson
from memsync.errors import BadEnvironment

from .conftest import MEMSYNC_BIN, write_card


def test_defaults_live_under_home(home):
    cfg = config.load()
    assert cfg.home.path == home and cfg.home.origin == "env"
    assert cfg.db.path == home / "memsync.db" and cfg.db.origin == "default"


def test_cli_beats_env_beats_config_file(home, tmp_path, monkeypatch):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"db": str(tmp_path / "from-file.db")}))
    assert config.load().db.origin == "config"
    monkeypatch.setenv("MEMSYNC_DB", str(tmp_path / "from-env.db"))
    assert config.load().db.origin == "env"
    cfg = config.load(db=str(tmp_path / "cli.db"))
    assert cfg.db.origin == "cli" and cfg.db.path.name == "cli.db"


def test_vault_from_env(vault):
    cfg = config.load()
    assert cfg.vault.path == vault and cfg.vault.origin == "env"


def test_missing_default_vault_is_created(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMSYNC_VAULT")
    cfg = config.load(home=str(tmp_path / "fresh"))
    assert cfg.vault.origin == "default"
    assert cfg.ensure_vault().is_dir()


def test_bad_config_file_is_a_clear_error(home, cli):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text("{not json")
    code, out = cli("paths", "--json")
    assert code == 2
    assert "config.json" in out["error"]["message"]


def test_paths_command_reports_layers(cli, vault):
    code, out = cli("--db", "/tmp/x.db", "paths", "--json")
    assert code == 0
    assert out["db"] == {"path": "/tmp/x.db", "from": "cli"}
    assert out["vault"] == {"path": str(vault), "from": "env"}
    assert os.environ["MEMSYNC_HOME"] == out["home"]["path"]


def test_the_paths_table_stays_in_line_with_a_chinese_vault(run_cli, tmp_path, monkeypatch):
    """A Chinese character takes two columns: padded by code points, `config` stood four columns
    left of the `from` column beside a vault named 我的笔记."""
    (tmp_path / "我的笔记").mkdir()
    monkeypatch.setenv("MEMSYNC_VAULT", str(tmp_path / "我的笔记"))
    code, out, _ = run_cli("paths")
    table = out.split("\n\n")[0].splitlines()
    starts = {line.split()[0]: chars.columns(line[:line.rindex(" ") + 1]) for line in table}
    assert code == 0 and "我的笔记" in out
    assert len(set(starts.values())) == 1, table  # every last cell (from, env, default…) in one column


# --- a config.json edited by hand: every wrong value is one clear error, exit 2 ------------------

BAD_CONFIGS = [
    ({"vault": 5}, "'vault'"),
    ({"vault": ["a"]}, "'vault'"),
    ({"db": {"path": "x"}}, "'db'"),
    ({"vault": ""}, "'vault'"),
    ({"sources": {"name": "a"}}, "'sources' must be a list"),
    ({"sources": [5]}, "sources[0] must be an object"),
    ({"sources": [{"adapter": "markdown", "path": "/x"}]}, "sources[0] lacks name"),
    ({"sources": [{"name": 7, "adapter": "markdown", "path": "/x"}]}, "sources[0]: name"),
    ({"sources": [{"name": "a b", "adapter": "markdown", "path": "/x"}]}, "sources[0]: name"),
    ({"sources": [{"name": "a", "adapter": "markdown", "path": 5}]}, "sources[0]: path must be"),
    ({"sources": [{"name": "a", "adapter": "nope", "path": "/x"}]}, "sources[0]: adapter must be one of"),
    ({"sources": [{"name": "a", "adapter": ["markdown"], "path": "/x"}]}, "sources[0]: adapter"),
    ({"sources": [{"name": "vault", "adapter": "markdown", "path": "/x"}]}, "reserved"),
    ({"sources": [{"name": "a", "adapter": "markdown", "path": "/x"},
                  {"name": "a", "adapter": "agents", "path": "/y"}]}, "sources[1]: a second source"),
    ({"folder_rules": {"mistake": ".trash"}}, "must be a folder inside the vault, not hidden"),
    ({"folder_rules": {"mistake": "08-Mistakes/../../x"}}, "must be a folder inside the vault"),
    # past SQLite's integers (every search ended in a traceback), past the calendar, not numbers
    ({"log_cap": 10**20}, "'log_cap' must be a whole number from 1 to 1,000,000,000"),
    ({"log_cap": float("inf")}, "'log_cap' must be a whole number from 1 to"),
    ({"log_cap": float("nan")}, "'log_cap' must be a whole number from 1 to"),
    ({"log_cap": 1.5}, "'log_cap' must be a whole number from 1 to"),
    ({"stale_days": 10**7}, "'stale_days' must be a whole number from 1 to 36,500"),
    ({"duplicate_threshold": float("nan")}, "'duplicate_threshold' must be a number from 0.05 to 1"),
]


@pytest.mark.parametrize(("content", "says"), BAD_CONFIGS)
def test_a_wrong_value_in_config_json_is_a_clear_error(home, run_cli, content, says):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(content))
    for args in (["paths"], ["index"], ["search", "x"]):
        code, _out, err = run_cli(*args)
        assert code == 2, (args, err)
        assert "Traceback" not in err
        assert str(home / "config.json") in err and says in err, err
    code, out, _err = run_cli("paths", "--json")
    assert code == 2 and out["error"]["code"] == "bad_environment"


def test_a_home_that_is_a_file_is_refused_by_name_by_every_command(home, run_cli, fake_user, tmp_path):
    """It had been `no index ...: run memsync init`, and init (or capture) then a traceback."""
    home.write_text("not a folder")
    for args in (["init", "--vault", tmp_path / "vault", "--yes"], ["capture", "--title", "Deploy",
                 "--body", "The shop deploys with argocd every night."], ["search", "x"], ["doctor"]):
        code, _out, err = run_cli(*args)
        assert code == 2 and "Traceback" not in err, (args, err)
        assert err == f"memsync: the data home {home} is not a folder; point MEMSYNC_HOME at a folder (memsync makes one that is missing)\n"
    code, out, err = run_cli("--home", home, "brief", "--hook", "codex", stdin="{}")
    assert code == 0 and out == {} and f"the data home {home} is not a folder; point --home at" in err


def as_a_user(*args: str) -> subprocess.CompletedProcess:
    """The installed command as a user whom modes stop: root in a user namespace of its own,
    mapped to another uid, has no power over modes (`unshare`, Linux)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        prefix = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
        if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode:
            pytest.skip("no way to run as a user whom modes stop (unshare --user)")
    return subprocess.run([*prefix, MEMSYNC_BIN, *args], input="{}", capture_output=True, text=True, timeout=60)


def test_a_home_that_cannot_be_read_says_the_chmod_that_opens_it(home):
    home.mkdir()
    (home / "config.json").write_text("{}")
    try:
        home.chmod(0o000)
        proc = as_a_user("search", "x")
        hook = as_a_user("brief", "--hook", "codex")
    finally:
        home.chmod(0o700)
    fix = f"cannot read {home / 'config.json'} (permission denied): make the data home yours to read (chmod 700 {home}"
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and fix in proc.stderr, proc.stderr
    assert hook.returncode == 0 and hook.stdout.strip() == "{}" and fix in hook.stderr


# --- every key is one memsync reads; any other is said, since a misspelt one changes nothing -------


@pytest.mark.parametrize("key", configjson.KEYS)
def test_every_listed_key_is_read_and_checked(home, key):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({key: [["not a value of any key"]]}))
    with pytest.raises(BadEnvironment, match=f"'?{key}'?"):
        config.load()


def test_a_key_memsync_does_not_read_is_named_by_paths_stats_and_doctor(home, cli, vault):
    write_card(vault, "redis.md", "redis notes", "the cache runs redis-7 on port 6380")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"log_limit": 100, "log_cap": 100}))
    assert cli("index", "--json")[0] == 0
    said = "'log_limit' is not a setting memsync knows"
    code, out = cli("paths", "--json")
    assert code == 0 and [p for p in out["problems"] if said in p]
    code, out = cli("stats", "--json")
    assert code == 0 and [p for p in out["config_problems"] if said in p]
    code, out = cli("doctor", "--json")
    assert code == 1 and [f for f in out["findings"] if f["check"] == "config" and said in f["message"]]
    assert len(config.load().key_problems()) == 1  # log_cap is a setting


def test_the_keys_init_keeps_for_itself_are_no_problem(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"declined": [{"hook": "codex"}], "semantic": False}))
    assert config.load().key_problems() == []


def test_a_null_value_in_config_json_means_not_set(home, cli):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"db": None, "sources": None}))
    code, out = cli("paths", "--json")
    assert code == 0 and out["db"]["from"] == "default"


# --- a vault must be a folder ----------------------------------------------------------------------


def test_a_vault_that_is_a_regular_file_is_a_clear_error(tmp_path, run_cli):
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("hello")
    for args in (["index"], ["watch"], ["capture", "--title", "t", "--body", "a body long enough to keep"]):
        code, _out, err = run_cli("--vault", not_a_folder, *args)
        assert code == 2, (args, err)
        assert f"vault {not_a_folder} (from cli) is not a folder" in err and "Traceback" not in err
    code, text, _err = run_cli("--vault", not_a_folder, "paths")
    assert "problem: vault" in text and "must be a directory" in text
    code, out, _err = run_cli("--vault", not_a_folder, "paths", "--json")
    assert any("is not a folder" in p for p in out["problems"])


def test_paths_lists_every_source(cli, vault, tmp_path):
    (tmp_path / "notes").mkdir()
    cli("sources", "--add", "notes", "--path", tmp_path / "notes")
    code, text = cli("paths")
    assert code == 0
    listed = text.split("sources:", 1)[1]
    assert f"vault  markdown  writable   {vault}" in listed
    assert f"notes  markdown  read-only  {tmp_path / 'notes'}" in listed


# --- a relative path in config.json is relative to the folder that holds it -------------------------


def test_a_relative_source_path_reads_the_same_folder_from_any_directory(home, tmp_path, monkeypatch,
                                                                          run_cli):
    write_card(home / "notes", "redis.md", "redis notes", "the cache runs redis-7 on port 6380")
    (home / "config.json").write_text(json.dumps(
        {"sources": [{"name": "notes", "adapter": "markdown", "path": "notes"}]}))
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "notes").mkdir(parents=True)  # a folder of the same name where we stand
    monkeypatch.chdir(elsewhere)
    code, out, _err = run_cli("paths", "--json")
    assert code == 0 and out["sources"][1]["path"] == str(home / "notes")
    assert run_cli("index")[0] == 0
    code, out, _err = run_cli("search", "redis-7", "--json")
    assert code == 0 and [h["source"] for h in out["hits"]] == ["notes"]


def test_a_tilde_source_path_is_the_users_home(home, tmp_path, monkeypatch, run_cli):
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    (tmp_path / "me/notes").mkdir(parents=True)
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(
        {"sources": [{"name": "notes", "adapter": "markdown", "path": "~/notes"}]}))
    code, out, _err = run_cli("paths", "--json")
    assert code == 0 and out["sources"][1]["path"] == str(tmp_path / "me/notes")


def test_a_relative_vault_or_db_in_config_json_is_under_the_home(home, tmp_path, monkeypatch, run_cli):
    monkeypatch.delenv("MEMSYNC_VAULT")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"vault": "my-vault", "db": "idx/m.db"}))
    monkeypatch.chdir(tmp_path)
    code, out, _err = run_cli("paths", "--json")
    assert code == 0
    assert out["vault"] == {"path": str(home / "my-vault"), "from": "config"}
    assert out["db"] == {"path": str(home / "idx/m.db"), "from": "config"}


def test_paths_shows_a_vault_with_dots_as_the_folder_itself(home, tmp_path, monkeypatch, run_cli):
    # `.memsync/../notes` in config.json, or `../x` on the command line, is shown (and used) as
    # the folder it names
    monkeypatch.delenv("MEMSYNC_VAULT")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(
        {"vault": f"../{home.name}/../notes",
         "sources": [{"name": "more", "adapter": "markdown", "path": "sub/../more"}]}))
    code, out, _err = run_cli("paths", "--json")
    assert code == 0
    notes = os.path.realpath(home.parent / "notes")
    assert out["vault"] == {"path": notes, "from": "config"}
    assert out["sources"][0]["path"] == notes
    assert out["sources"][1]["path"] == os.path.realpath(home / "more")
    monkeypatch.chdir(home)
    code, out, _err = run_cli("--vault", "../elsewhere/./x/..", "paths", "--json")
    assert code == 0 and out["vault"]["path"] == os.path.realpath(home.parent / "elsewhere")


def test_init_and_sources_write_a_path_with_dots_as_the_folder_itself(home, tmp_path, monkeypatch, run_cli):
    # how a config.json came to hold home/../notes: `memsync init --vault ../notes`
    monkeypatch.delenv("MEMSYNC_VAULT")
    (tmp_path / "here").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "more").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    code, _out, err = run_cli("init", "--vault", "../notes")
    assert code == 0, err
    code, _out, err = run_cli("sources", "--add", "more", "--adapter", "markdown", "--path", "../more")
    assert code == 0, err
    written = json.loads((home / "config.json").read_text())
    assert written["vault"] == os.path.realpath(tmp_path / "notes")
    assert written["sources"][0]["path"] == os.path.realpath(tmp_path / "more")
