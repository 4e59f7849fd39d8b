"""Search says when its hits may not match the files: the vault folder is gone (an unmounted
disk), or no watcher keeps the index live and it was last updated minutes ago."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing

from memsync import api, config
from memsync.store.index import Index

from .conftest import write_card


def age_the_index(minutes: int) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(time.time() - minutes * 60))
    with closing(sqlite3.connect(config.load().db.path)) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key IN ('last_sync', 'last_change')", (stamp,))
        conn.commit()


def test_no_watcher_and_an_old_index_is_said(vault, run_cli):
    write_card(vault, "a.md", "nginx root", "the nginx site root is /srv/www on web-1")
    assert run_cli("index")[0] == 0
    code, out, err = run_cli("search", "nginx")
    assert code == 0 and "no watcher" not in err  # just indexed
    age_the_index(25)
    code, out, err = run_cli("search", "nginx")
    assert code == 0 and "nginx root" in out
    assert "memsync: warning: no watcher running; index last updated 25 min ago" in err
    code, data, _err = run_cli("search", "nginx", "--json")
    assert any("index last updated 25 min ago" in w for w in data["warnings"])
    assert run_cli("index")[0] == 0  # nothing changed, but it caught up: fresh again
    assert "no watcher" not in run_cli("search", "nginx")[2]


def test_with_a_watcher_running_nothing_is_said(vault, run_cli, watcher):
    write_card(vault, "a.md", "nginx root", "the nginx site root is /srv/www on web-1")
    assert run_cli("index")[0] == 0
    age_the_index(25)
    watcher()
    code, _out, err = run_cli("search", "nginx")
    assert code == 0 and "no watcher" not in err


def test_a_vault_folder_that_vanished_makes_search_say_the_index_is_stale(vault, run_cli, tmp_path):
    write_card(vault, "a.md", "nginx root", "the nginx site root is /srv/www on web-1")
    assert run_cli("index")[0] == 0
    vault.rename(tmp_path / "unmounted")
    code, out, err = run_cli("search", "nginx")
    assert code == 0 and "nginx root" in out
    assert f"the vault folder {vault} is gone" in err and "the index is stale" in err


def test_the_age_is_said_in_minutes_hours_or_days(home, vault):
    cfg = config.load()
    stamp = "2026-01-10T12:00:00+0000"
    at = 1768046400.0  # that stamp
    assert api.staleness(cfg, [stamp, None], now=at + 30) == []
    assert "7 min ago" in api.staleness(cfg, [stamp], now=at + 7 * 60)[0]
    assert "5 h ago" in api.staleness(cfg, [stamp], now=at + 5 * 3600)[0]
    assert "3 days ago" in api.staleness(cfg, [None, stamp], now=at + 3 * 86400)[0]


def test_a_vault_folder_never_there_is_named_instead_of_advice_to_index(tmp_path, run_cli, monkeypatch):
    """An empty index over a vault folder that does not exist: `memsync index` would only fail."""
    missing = tmp_path / "not-mounted"
    monkeypatch.setenv("MEMSYNC_VAULT", str(missing))
    Index(config.load().db.path).close()  # made empty, as an MCP server makes it when it starts
    code, data, _err = run_cli("search", "nginx", "--json")
    assert code == 1 and data["notes"] == [{"code": "vault_missing", "path": str(missing)}]
    assert data["note"] == (f"nothing is indexed and the vault folder {missing} does not exist: create it, "
                            "or name your vault with `memsync init --vault DIR`")
    assert "warnings" not in data  # not "these hits are from when it was last seen": there are none
