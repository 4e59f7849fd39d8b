"""One index per vault: a one-off --vault never takes another vault's cards out of search, and
switching back finds them at once, with their ids and read counts, without reading a file."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from memsync import config
from memsync.store import vaults

from .conftest import MEMSYNC_BIN, write_card


@pytest.fixture
def other(tmp_path):
    other = tmp_path / "Other"
    write_card(other, "03-Knowledge/redis.md", "redis port", "redis listens on 6380 on the cache box")
    return other


@pytest.fixture
def first(vault, run_cli):
    """The first vault, indexed, one card read twice: {title: id}."""
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "the site root is /srv/www for nginx")
    write_card(vault, "02-Projects/shop.md", "shop deploy", "the shop deploys with kamal on fridays")
    assert run_cli("index")[0] == 0
    ids = {h["title"]: h["id"] for h in run_cli("search", "nginx", "--json")[1]["hits"]}
    ids.update({h["title"]: h["id"] for h in run_cli("search", "kamal", "--json")[1]["hits"]})
    for _ in range(2):
        assert run_cli("show", ids["nginx root"])[0] == 0
    return ids


def reads(run_cli, *args) -> int:
    return run_cli(*args, "stats", "--json")[1]["reads"]


def test_a_one_off_vault_leaves_the_first_vaults_cards_ids_and_reads(first, other, home, run_cli):
    code, out, _err = run_cli("--vault", other, "index", "--json")
    assert code == 0 and out["added"] == 1
    assert run_cli("--vault", other, "search", "6380", "--json")[1]["hits"][0]["title"] == "redis port"

    code, back, _err = run_cli("index", "--json")  # a plain index again: nothing lost, nothing read
    assert code == 0 and (back["removed"], back["added"], back["hashed"]) == (0, 0, 0)
    hits = run_cli("search", "nginx", "--json")[1]["hits"]
    assert [(h["title"], h["id"]) for h in hits] == [("nginx root", first["nginx root"])]
    assert reads(run_cli) == 2
    assert run_cli("search", "6380", "--json")[0] == 1  # the other vault's card stays in its own


def test_paths_names_the_other_vaults_own_index(first, other, home, run_cli):
    out = run_cli("--vault", other, "paths", "--json")[1]
    assert out["db"]["from"] == "vault"
    assert out["db"]["path"] == str(vaults.own_index(home, other))
    assert out["db"]["path"].startswith(str(home / "indexes"))
    assert run_cli("paths", "--json")[1]["db"] == {"path": str(home / "memsync.db"), "from": "default"}
    assert "this vault's own index" in run_cli("--vault", other, "paths")[1]


def test_an_explicit_db_still_wins(first, other, home, tmp_path, run_cli):
    db = tmp_path / "mine.db"
    out = run_cli("--vault", other, "--db", db, "paths", "--json")[1]
    assert out["db"] == {"path": str(db), "from": "cli"}


def test_init_on_the_other_vault_swaps_the_indexes_and_loses_nothing(first, other, home, vault,
                                                                    monkeypatch, run_cli):
    assert run_cli("--vault", other, "index")[0] == 0
    redis = run_cli("--vault", other, "search", "6380", "--json")[1]["hits"][0]["id"]
    assert run_cli("--vault", other, "show", redis)[0] == 0
    code, out, _err = run_cli("init", "--vault", other, "--json")
    assert code == 0 and out["db"] == str(home / "memsync.db")
    assert out["index"]["hashed"] == 0  # its own index came along: no file read anew
    monkeypatch.delenv("MEMSYNC_VAULT")
    assert run_cli("search", "6380", "--json")[1]["hits"][0]["id"] == redis
    assert reads(run_cli) == 1
    # and the first vault, now the one-off, finds its cards, ids and reads where they were
    assert run_cli("--vault", vault, "index", "--json")[1]["hashed"] == 0
    hits = run_cli("--vault", vault, "search", "nginx", "--json")[1]["hits"]
    assert hits[0]["id"] == first["nginx root"]
    assert reads(run_cli, "--vault", vault) == 2


def test_an_index_of_another_vault_from_before_labels_is_not_emptied(first, other, home, run_cli):
    vaults.label_file(home / "memsync.db").unlink()  # as an older memsync left it
    code, out, _err = run_cli("--vault", other, "index", "--json")
    assert code == 2 and "holds the cards of another vault" in out["error"]["message"]
    assert run_cli("search", "nginx", "--json")[1]["hits"][0]["id"] == first["nginx root"]


def test_an_empty_default_vault_is_reported_when_another_has_cards(first, home, monkeypatch, run_cli):
    monkeypatch.delenv("MEMSYNC_VAULT")  # as a desktop app starts a server: no env, no config vault
    warning = vaults.empty_vault_warning(config.load())
    assert warning and str(home / "vault") in warning and "2 cards" in warning
    code, out, _err = run_cli("search", "nginx", "--json")
    assert code == 2 and "is empty, but" in out["error"]["message"]
    assert run_cli("index")[0] == 0
    code, out, _err = run_cli("stats", "--json")
    assert any("is empty, but" in p for p in out["config_problems"])


def test_a_misspelt_vault_is_said_to_be_missing_and_leaves_no_index_behind(first, home, tmp_path, run_cli):
    typo = tmp_path / "Vualt"  # MEMSYNC_VAULT or --vault with a slip of the keyboard
    code, out, _err = run_cli("--vault", typo, "search", "nginx", "--json")
    message = out["error"]["message"]
    assert code == 2 and f"the vault {typo} (from cli) does not exist, but" in message
    assert "2 cards" in message and "is empty" not in message and "run `memsync index`" not in message
    code, out, _err = run_cli("--vault", typo, "index", "--json")
    assert code == 2 and "does not exist" in out["error"]["message"]
    assert not (home / "indexes").exists()  # no index, no lock file, for a vault not there


def test_a_missing_vault_with_no_other_cards_says_so_and_how_to_fix_it(home, tmp_path, run_cli):
    code, out, _err = run_cli("--vault", tmp_path / "nowhere", "search", "nginx", "--json")
    message = out["error"]["message"]
    assert code == 2 and "nowhere (from cli) does not exist; create it or point --vault" in message


def test_the_init_command_the_warning_names_keeps_a_vault_with_a_space_whole(tmp_path, monkeypatch,
                                                                            run_cli):
    notes = tmp_path / "My Notes"
    write_card(notes, "03-Knowledge/nginx.md", "nginx root", "the site root is /srv/www")
    assert run_cli("--vault", notes, "index")[0] == 0
    monkeypatch.delenv("MEMSYNC_VAULT")
    assert run_cli("index")[0] == 0  # memsync's own empty folder, beside the cards of "My Notes"
    problem = next(p for p in run_cli("stats", "--json")[1]["config_problems"] if "is empty, but" in p)
    assert shlex.split(problem.split("`")[1]) == ["memsync", "init", "--vault", str(notes)]


def test_a_watcher_on_an_empty_default_vault_says_so_on_stderr(first, home, monkeypatch, tmp_path):
    monkeypatch.delenv("MEMSYNC_VAULT")
    log = tmp_path / "watch.log"
    with log.open("w") as err:
        proc = subprocess.Popen([MEMSYNC_BIN, "watch"], stderr=err, stdout=subprocess.DEVNULL,
                                env=os.environ.copy())
    try:
        deadline = time.monotonic() + 60
        while "watching" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert "WARNING" in text and "is empty, but" in text and "memsync init --vault" in text


def test_the_mcp_server_reports_the_empty_vault_in_stats(first, home, monkeypatch):
    import anyio
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    monkeypatch.delenv("MEMSYNC_VAULT")

    async def main():
        params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp"], env=os.environ.copy())
        with anyio.fail_after(60), open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("memory_stats", {})
                return json.dumps(result.structured_content or {}) + str(result.content)

    assert "is empty, but" in anyio.run(main)


def test_card_count_reads_an_index_through_the_store(tmp_path):
    from memsync.store.index import Index

    db = tmp_path / "memsync.db"
    index = Index(db)
    index.close()
    assert vaults.card_count(db) == 0
    assert vaults.card_count(tmp_path / "missing.db") == 0


def test_a_file_that_is_not_an_index_holds_no_cards(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all " * 512)
    assert vaults.card_count(junk) == 0


def test_a_damaged_index_is_reported_not_taken_for_empty(tmp_path):
    from memsync.errors import BadEnvironment
    from memsync.store.index import Index

    db = tmp_path / "memsync.db"
    index = Index(db)
    index.close()
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page, after the file header
    db.write_bytes(bytes(data))
    with pytest.raises(BadEnvironment, match=str(db)):
        vaults.card_count(db)


def test_an_empty_file_holds_no_cards(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert vaults.card_count(empty) == 0


def test_reading_an_index_keeps_this_processs_locks_on_it(tmp_path, vault):
    # A server's watcher keeps its connection open while a tool call reads the same file
    # (vaults.claim before a first write). Closing any plain handle of the file would drop every
    # POSIX lock the process holds on it: another process closing its own connection would then
    # take itself for the last one and delete the WAL the watcher still writes into.
    from memsync.store.index import Index

    db = tmp_path / "memsync.db"
    index = Index(db)
    try:
        with index.transaction() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('probe', '1')")
        wal = db.with_name(db.name + "-wal")
        assert wal.is_file()
        vaults.claim(db, vault)  # unlabelled: looks into the index for its vault's files
        vaults.card_count(db)
        subprocess.run([sys.executable, "-c", "import sqlite3, sys; "
                        "c = sqlite3.connect(sys.argv[1]); c.execute('SELECT 1 FROM meta').fetchall(); "
                        "c.close()", str(db)], check=True)
        assert wal.is_file(), "another process deleted the WAL under an open connection"
    finally:
        index.close()
