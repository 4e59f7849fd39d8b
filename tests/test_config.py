import json
import os

from memsync import config


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
