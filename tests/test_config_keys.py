"""config.json keys memsync does not read: a misspelt key is named (with the key it was likely
meant to be) by `memsync doctor` as a finding and by every other command as a warning on
stderr, and no command stops for it."""

from __future__ import annotations

import json

from memsync import config, configjson

from .conftest import write_card


def config_json(home, data: dict) -> None:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(data))
    (home / "config.json").chmod(0o600)  # as memsync keeps it: no permissions finding


def test_doctor_names_a_misspelt_key_and_the_key_it_was_meant_to_be(home, vault, run_cli):
    write_card(vault, "a.md", "redis port", "redis listens on 6380 on the cache box")
    assert run_cli("index")[0] == 0
    config_json(home, {"vualt": str(vault), "lgo_cap": 10})
    code, out, err = run_cli("doctor", "--json")
    assert code == 1 and err == ""  # said once, as findings, not again on stderr
    found = {(f["check"], f["message"].split(": ", 1)[1], f["fix"]) for f in out["findings"]}
    assert found == {
        ("config", "'vualt' is not a setting memsync knows, so it is ignored", "rename it to 'vault'"),
        ("config", "'lgo_cap' is not a setting memsync knows, so it is ignored", "rename it to 'log_cap'"),
    }


def test_other_commands_warn_on_stderr_and_go_on(home, vault, run_cli):
    write_card(vault, "a.md", "redis port", "redis listens on 6380 on the cache box")
    assert run_cli("index")[0] == 0
    config_json(home, {"colour": "blue"})
    code, out, err = run_cli("search", "6380", "--json")
    assert code == 0 and out["hits"][0]["title"] == "redis port"
    assert err.count("memsync: warning:") == 1 and "'colour' is not a setting memsync knows" in err
    assert "remove it (the settings are vault, db, sources" in err


def test_a_declined_list_init_cannot_read_is_a_finding(home, vault, run_cli):
    assert run_cli("index")[0] == 0
    config_json(home, {"declined": "gemini"})
    code, out, _err = run_cli("doctor", "--json")
    assert code == 1 and [f["check"] for f in out["findings"]] == ["config"]
    assert "'declined'" in out["findings"][0]["message"] and "remove the key" in out["findings"][0]["fix"]


def test_every_setting_memsync_reads_is_known(home, tmp_path):
    """A config.json that sets every key memsync reads, as memsync writes them, is clean."""
    every = {"vault": str(tmp_path / "vault"), "db": "memsync.db", "semantic": False, "threads": 2,
             "sources": [], "declined": [{"adapter": "agents", "path": "/x"}], "log_searches": True,
             "log_cap": 10, "summary_threshold": 300, "stale_days": 30, "duplicate_threshold": 0.6,
             "folder_rules": {"mistake": "08-Mistakes"}, "use_prior": False}
    assert set(every) == set(configjson.KEYS) | set(configjson.OWN_KEYS)
    config_json(home, every)
    assert config.load().ignored_keys == ()


def test_a_running_watcher_warns_of_a_key_an_edit_adds(home, vault, run_cli, watcher):
    """Said once, in its log, when it reads config.json again; a key it named before is not
    named again at the next edit."""
    write_card(vault, "a.md", "redis port", "redis listens on 6380 on the cache box")
    assert run_cli("index")[0] == 0
    running = watcher()
    config_json(home, {"colour": "blue"})
    running.wait_for("'colour' is not a setting memsync knows, so it is ignored; remove it")
    config_json(home, {"colour": "blue", "vualt": str(vault)})
    running.wait_for("'vualt' is not a setting memsync knows, so it is ignored; rename it to 'vault'")
    assert running.stderr().count("'colour' is not a setting") == 1
    assert running.stop() == 0
