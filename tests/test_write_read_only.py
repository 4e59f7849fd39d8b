"""A note made read-only (chmod 444) is left as it is by every write that would change it:
update, supersede, doctor --fix-pairs and consolidate refuse (or skip) it, saying the chmod
that allows it, with nothing written; capture under its title saves beside it. The mode bits
are asked, not the kernel alone: root (as these tests may run) could write the file anyway."""

from __future__ import annotations

import json
import stat

import pytest

from .conftest import write_card

BODY = "The redis cache listens on port 6380 on the cache box."
NEWER = "The redis cache listens on port 6390 since the move in May."


@pytest.fixture
def locked(vault, cli):
    """One indexed note, mode 0444; returns (its id, its path)."""
    note = write_card(vault, "03-Knowledge/redis.md", "redis port", BODY)
    assert cli("index")[0] == 0
    note.chmod(0o444)
    return cli("search", "6380", "--json")[1]["hits"][0]["id"], note


def files(vault) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in vault.rglob("*") if p.is_file()}


@pytest.mark.parametrize("command", [
    ("update", "--body", NEWER), ("supersede", "--title", "redis port now", "--body", NEWER)])
def test_an_edit_of_a_read_only_note_is_refused_and_nothing_is_written(locked, vault, run_cli, command):
    card_id, note = locked
    before = files(vault)
    code, out, _err = run_cli(command[0], card_id, *command[1:], "--json")
    assert code == 1 and out["error"]["code"] == "read_only_note"
    message = out["error"]["message"]
    assert "03-Knowledge/redis.md is read-only (mode 0444)" in message
    assert f"chmod u+w {note}" in message and "memsync capture" in message
    assert files(vault) == before and stat.S_IMODE(note.stat().st_mode) == 0o444
    code, found, _err = run_cli("search", "6380", "--json")
    assert [h["id"] for h in found["hits"]] == [card_id]
    assert run_cli("doctor", "--json")[0] == 0  # no journal entry, no drift left behind


def test_the_chmod_it_names_lets_the_update_through(locked, run_cli):
    card_id, note = locked
    assert run_cli("update", card_id, "--body", NEWER)[0] == 1
    note.chmod(note.stat().st_mode | stat.S_IWUSR)
    assert run_cli("update", card_id, "--body", NEWER)[0] == 0
    assert "6390" in note.read_text() and stat.S_IMODE(note.stat().st_mode) == 0o644


def test_capture_under_the_title_of_a_read_only_note_saves_beside_it(locked, vault, cli):
    _card_id, note = locked
    before = note.read_bytes()
    code, out = cli("capture", "--title", "redis port", "--body", NEWER, "--json")
    assert code == 0 and out["path"] == "03-Knowledge/redis port.md" and out["conflict"]
    assert note.read_bytes() == before


def test_fix_pairs_leaves_a_read_only_card_and_says_how(locked, vault, cli):
    card_id, note = locked
    note.chmod(0o644)
    _, new = cli("supersede", card_id, "--title", "redis port now", "--body", NEWER, "--json")
    assert cli("delete", new["id"], "--json")[0] == 0
    note.chmod(0o444)
    before = note.read_bytes()
    code, result = cli("doctor", "--fix-pairs", "--json")
    assert result["fixed"] == [f"03-Knowledge/redis.md: read-only, not changed; make it writable "
                               f"(chmod u+w {note}), then run `memsync doctor --fix-pairs` again"]
    assert code == 1 and note.read_bytes() == before


def test_consolidate_skips_the_summary_of_a_read_only_note(vault, home, cli):
    long = "The backup job runs nightly at two and keeps thirty days. It writes to the NAS. " * 9
    note = write_card(vault, "03-Knowledge/backup.md", "backup", long)
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"summary_threshold": 100}))
    assert cli("index")[0] == 0
    note.chmod(0o444)
    before = note.read_bytes()
    code, plan = cli("consolidate", "--apply", "--json")
    assert code == 0 and plan["summaries"] == []
    [skipped] = plan["skipped"]
    assert skipped["step"] == "summary" and "03-Knowledge/backup.md is read-only" in skipped["why"]
    assert note.read_bytes() == before
