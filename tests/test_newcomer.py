"""The first hour, as a newcomer lives it: a fresh HOME where Obsidian already keeps a vault of
notes, memsync installed, `memsync init` run on its own (Enter to the question), then a search
finds the notes. Through the installed command, with no MEMSYNC_* variable set."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .conftest import MEMSYNC_BIN, write_card

REPO = Path(__file__).resolve().parents[1]


def fresh_env(user: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMSYNC_") and k not in ("XDG_CONFIG_HOME", "APPDATA",
                                                         "MEMORY_FILE_PATH")}
    return {**env, "HOME": str(user)}


def run(args: list[str], user: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(args, input=stdin, capture_output=True, text=True, cwd=user,
                          env=fresh_env(user), timeout=120)


def test_a_newcomer_with_obsidian_ends_with_the_notes_searchable(tmp_path):
    user = tmp_path / "user"
    notes = user / "Documents" / "Notes"
    write_card(notes, "Servers/deploy.md", None, "# Deploy\nThe shop deploys with kamal-9 on Fridays.\n")
    write_card(notes, "Daily/2026-11-30.md", None, "Met Ana about the boat at pier eleven.\n")
    (notes / ".obsidian").mkdir()
    old = user / "Archive"
    write_card(old, "old.md", None, "an old vault, opened long ago\n")
    obsidian = user / ".config" / "obsidian"
    obsidian.mkdir(parents=True)
    (obsidian / "obsidian.json").write_text(json.dumps({"vaults": {
        "a1": {"path": str(old), "ts": 1700000000000},
        "b2": {"path": str(notes), "ts": 1760000000000, "open": True}}}))

    init = run([MEMSYNC_BIN, "init"], user, stdin="\n")  # Enter: the vault opened last
    assert init.returncode == 0, init.stderr
    assert f"1  {notes}  (Obsidian vault, last opened)" in init.stderr
    assert f"vault  {notes}" in init.stdout and "holds no notes" not in init.stdout
    found = run([MEMSYNC_BIN, "search", "kamal-9"], user)
    assert found.returncode == 0 and "Deploy" in found.stdout, found.stderr
    found = run([MEMSYNC_BIN, "search", "pier", "--json"], user)
    assert [h["path"] for h in json.loads(found.stdout)["hits"]] == ["Daily/2026-11-30.md"]
    paths = json.loads(run([MEMSYNC_BIN, "paths", "--json"], user).stdout)
    assert paths["vault"] == {"path": str(notes), "from": "config"}
    assert paths["home"]["path"] == str(user / ".memsync")


def test_make_run_takes_the_vault_it_is_given(tmp_path):
    def commands(*args: str) -> list[str]:  # what `make run` would run, not running it
        dry = subprocess.run(["make", "-n", "-C", str(REPO), "run", *args], capture_output=True,
                             text=True, timeout=60)
        assert dry.returncode == 0, dry.stderr
        return [line.strip() for line in dry.stdout.splitlines() if "bin/memsync" in line]

    given = tmp_path / "My Notes"
    assert commands(f"VAULT={given}") == [f'.venv/bin/memsync init --vault "{given}"',
                                          ".venv/bin/memsync watch"]
    assert commands() == [".venv/bin/memsync init", ".venv/bin/memsync watch"]
