"""The data home is private: 0700 for the folder, 0600 for every file memsync keeps in it, after
each kind of first run (CLI, watcher, MCP server), while cards keep the vault's usual modes."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import anyio
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .conftest import MEMSYNC_BIN, write_card

DEADLINE = 60.0


def modes(home: Path) -> dict[str, int]:
    """Mode of the home and of everything below it (except the default vault, which is the
    user's own folder of cards)."""
    found = {".": stat.S_IMODE(home.stat().st_mode)}
    for folder, dirs, files in os.walk(home):
        dirs[:] = [d for d in dirs if not (Path(folder) == home and d == "vault")]
        for name in dirs + files:
            path = Path(folder, name)
            found[path.relative_to(home).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return found


def assert_private(home: Path) -> None:
    found = modes(home)
    loose = {rel: oct(mode) for rel, mode in found.items()
             if mode != (0o700 if (home / rel).is_dir() else 0o600)}
    assert not loose, loose
    assert "memsync.db" in found or "journal" in found


def test_cli_index_makes_a_private_home_and_leaves_card_modes_alone(vault, home, run_cli):
    old = os.umask(0o022)
    try:
        write_card(vault, "note.md", "a note", "the home of the index is private")
        code, _report, err = run_cli("index", "--json")
        assert code == 0, err
        assert_private(home)
        code, result, err = run_cli("capture", "--title", "a captured card", "--json",
                                    "--body", "captured cards keep the vault's usual modes")
        assert code == 0, err
        assert stat.S_IMODE((vault / result["path"]).stat().st_mode) == 0o644
        assert_private(home)  # the write added the journal's lock files, also private
    finally:
        os.umask(old)


def test_a_supersede_journal_and_config_json_are_private(vault, home, run_cli, tmp_path):
    (tmp_path / "notes").mkdir()
    assert run_cli("sources", "--add", "notes", "--path", tmp_path / "notes")[0] == 0
    write_card(vault, "03-Knowledge/old.md", "old fact", "the server listens on port 8080")
    assert run_cli("index")[0] == 0
    code, hits, _ = run_cli("search", "8080", "--json")
    code, result, err = run_cli("supersede", hits["hits"][0]["id"], "--title", "new fact",
                                "--body", "the server listens on port 9090 now", "--json")
    assert code == 0, err
    assert (home / "config.json").exists()
    assert_private(home)


def test_the_watcher_makes_a_private_home(vault, home, tmp_path):
    write_card(vault, "note.md", "a note", "the watcher creates the index privately")
    log = tmp_path / "watch.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([MEMSYNC_BIN, "watch"], stdout=subprocess.PIPE, stderr=err)
    try:
        deadline = time.monotonic() + DEADLINE
        while "memsync: watching" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        assert (home / "watch.lock").exists()
        assert_private(home)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE) == 0, log.read_text()
        proc.stdout.close()


def test_an_mcp_server_makes_a_private_home(vault, home, tmp_path):
    write_card(vault, "note.md", "a note", "an MCP server creates the index privately")

    async def main():
        params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp"], env=os.environ.copy())
        with anyio.fail_after(DEADLINE), (tmp_path / "server.log").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=DEADLINE) as session,
            ):
                await session.initialize()
                result = await session.call_tool("memory_capture", {
                    "title": "from the server", "body": "captured through MCP into the vault"})
                assert not result.is_error, result.content[0].text
                assert_private(home)

    anyio.run(main)


def open_up(home: Path) -> None:
    home.chmod(0o755)
    for name in ("memsync.db", "memsync.db-wal", "memsync.db-shm"):
        if (home / name).exists():
            (home / name).chmod(0o644)


def test_an_open_home_is_tightened_once_with_a_message(vault, home, run_cli):
    write_card(vault, "note.md", "a note", "an older memsync left this home open")
    assert run_cli("index")[0] == 0
    open_up(home)
    code, _out, err = run_cli("index")  # a command that writes into the home
    assert code == 0
    assert "readable by other users; made it private" in err
    assert_private(home)
    code, _out, err = run_cli("index")
    assert code == 0 and "private" not in err


def test_readers_and_doctor_leave_modes_alone_and_doctor_says_so_each_time(vault, home, run_cli):
    write_card(vault, "note.md", "a note", "a home opened by hand after the first index")
    assert run_cli("index")[0] == 0
    for _round in range(2):  # found, fixed, opened again: found again
        open_up(home)
        for command in (("stats",), ("search", "note"), ("doctor",)):
            run_cli(*command)
            assert stat.S_IMODE(home.stat().st_mode) == 0o755, command
        code, out, _err = run_cli("doctor", "--json")
        assert code == 1 and [f["check"] for f in out["findings"]] == ["permissions"]
        assert run_cli("doctor", "--fix")[0] == 0
        assert_private(home)


def test_an_index_outside_the_home_leaves_its_folder_alone(vault, tmp_path, run_cli, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setenv("MEMSYNC_DB", str(shared / "index.db"))
    write_card(vault, "note.md", "a note", "a db placed in someone's own folder")
    assert run_cli("index")[0] == 0
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert stat.S_IMODE((shared / "index.db").stat().st_mode) == 0o600


def test_a_journal_entry_is_private_while_it_lives(home):
    from memsync.write import journal

    old = os.umask(0o022)
    try:
        entry = journal.Entry(home, {"op": "supersede", "old": "a.md", "new": None})
        assert stat.S_IMODE(entry.path.stat().st_mode) == 0o600
        assert stat.S_IMODE(journal.folder(home).stat().st_mode) == 0o700
        entry.finish()
    finally:
        os.umask(old)


def test_tightening_an_open_home_leaves_a_vault_kept_inside_it_alone(home, run_cli, monkeypatch):
    cards = home / "cards"
    monkeypatch.setenv("MEMSYNC_VAULT", str(cards))
    card = write_card(cards, "note.md", "a note", "a vault the user keeps inside the data home")
    assert run_cli("index")[0] == 0
    home.chmod(0o755)
    cards.chmod(0o755)
    card.chmod(0o644)
    code, _out, err = run_cli("index")
    assert code == 0 and "made it private" in err
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(cards.stat().st_mode) == 0o755 and stat.S_IMODE(card.stat().st_mode) == 0o644


def test_a_first_capture_into_the_default_vault_makes_a_private_home_without_a_message(
        home, run_cli, monkeypatch):
    # The default vault lives inside the home: creating it must not make the home with the
    # umask's modes first, which the next step then "tightened" with a message about an older
    # memsync that never was.
    monkeypatch.delenv("MEMSYNC_VAULT")
    code, _out, err = run_cli("capture", "--title", "first card", "--body", "the first card of a new home")
    assert code == 0, err
    assert "readable by other users" not in err
    assert (home / "vault" / "03-Knowledge" / "first card.md").is_file()
    assert_private(home)
