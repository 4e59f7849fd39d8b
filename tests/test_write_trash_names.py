"""The trash's record of names: a copy numbered `-2` in the trash goes back under the name it had."""

from __future__ import annotations

import json

import pytest

from memsync.write import trashnames, trashsize

BODY = "The staging database lives on db-stage-2, port 5433, user app_ro."
PATH = "03-Knowledge/staging db.md"
SECOND = ".trash/03-Knowledge/staging db-2.md"


@pytest.fixture
def two_in_the_trash(cli, vault):
    """Two cards of one name deleted one after the other: the second is kept as `-2`."""
    ids = []
    for body in (BODY, BODY + " (rebuilt)"):
        code, card = cli("capture", "--title", "staging db", "--body", body, "--json")
        assert code == 0 and card["path"] == PATH
        ids.append(card["id"])
        assert cli("delete", card["id"])[0] == 0
    assert (vault / SECOND).exists()
    return ids


def test_a_numbered_copy_is_restored_under_its_own_name_with_its_id(cli, vault, two_in_the_trash):
    second = (vault / SECOND).read_bytes()
    code, data = cli("delete", "--restore", SECOND, "--json")
    assert code == 0 and data["status"] == "restored" and data["path"] == PATH
    assert data["id"] == two_in_the_trash[1] and (vault / PATH).read_bytes() == second
    assert not (vault / "03-Knowledge/staging db-2.md").exists()
    assert trashnames.original(vault, SECOND) is None  # the entry went with the copy


def test_a_numbered_copy_whose_name_is_taken_keeps_its_trash_name(cli, vault, two_in_the_trash):
    assert cli("delete", "--restore", ".trash/" + PATH)[0] == 0  # the first one is back first
    code, data = cli("delete", "--restore", SECOND, "--json")
    assert code == 0 and data["path"] == "03-Knowledge/staging db-2.md"
    assert f"{PATH}, its name before the trash, is taken" in data["note"]


def test_force_puts_a_numbered_copy_back_under_its_name_and_moves_the_occupant_to_the_trash(
        cli, vault, two_in_the_trash):
    assert cli("delete", "--restore", ".trash/" + PATH)[0] == 0  # its name is taken again
    occupant, second = (vault / PATH).read_bytes(), (vault / SECOND).read_bytes()
    code, data = cli("delete", "--restore", SECOND, "--force", "--json")
    assert code == 0 and data["status"] == "restored" and data["path"] == PATH
    assert data["id"] == two_in_the_trash[1] and (vault / PATH).read_bytes() == second
    assert not (vault / "03-Knowledge/staging db-2.md").exists()
    moved = data["note"].split("was moved to ")[1].split(" first")[0]
    assert moved.startswith(".trash/") and (vault / moved).read_bytes() == occupant  # nothing lost
    assert trashnames.original(vault, moved) in (None, PATH)  # and it goes back there in turn


def test_with_both_names_taken_the_refusal_names_the_file_force_would_move(cli, vault, two_in_the_trash):
    assert cli("delete", "--restore", ".trash/" + PATH)[0] == 0
    (vault / "03-Knowledge/staging db-2.md").write_text("a note of the user's at the trash name")
    code, data = cli("delete", "--restore", SECOND, "--json")
    assert data["status"] == "rejected" and data["existing_path"] == PATH and (vault / SECOND).exists()
    code, data = cli("delete", "--restore", SECOND, "--force", "--json")
    assert code == 0 and data["path"] == PATH
    assert (vault / "03-Knowledge/staging db-2.md").read_text() == "a note of the user's at the trash name"


def test_the_record_lives_in_the_trash_and_a_purge_drops_its_entry(cli, vault, two_in_the_trash):
    record = vault / ".trash" / trashnames.RECORD
    assert json.loads(record.read_text()) == {SECOND: PATH}
    assert trashsize.usage(vault)[0] == 2  # two cards; the record is none
    assert cli("delete", "--purge", SECOND)[0] == 0
    assert not record.exists()


def test_emptying_the_trash_counts_the_cards_not_the_record(cli, vault, two_in_the_trash):
    assert (vault / ".trash" / trashnames.RECORD).exists()
    code, data = cli("delete", "--purge", "--all", "--yes", "--json")
    assert code == 0 and data["purged"] == 2 and data["stats_cleared"] == 2
    assert "deleted 2 file(s)" in data["note"] and not (vault / ".trash" / trashnames.RECORD).exists()


def test_the_record_itself_is_not_restored_as_a_card(cli, vault, two_in_the_trash):
    code, out = cli("delete", "--restore", ".trash/" + trashnames.RECORD, "--json")
    assert code == 2 and "not a card" in out["error"]["message"]
    assert (vault / ".trash" / trashnames.RECORD).exists() and not (vault / trashnames.RECORD).exists()


@pytest.mark.parametrize("named", ["../x.md", "outside/x.md", "03-Knowledge/a\u0000.md", ".", ".obsidian/x.md"])
def test_a_record_leading_out_of_the_vault_costs_the_name_never_the_restore(cli, vault, tmp_path,
                                                                           two_in_the_trash, named):
    (tmp_path / "elsewhere").mkdir()
    (vault / "outside").symlink_to(tmp_path / "elsewhere")
    (vault / ".trash" / trashnames.RECORD).write_text(json.dumps({SECOND: named}))
    code, data = cli("delete", "--restore", SECOND, "--json")
    assert code == 0 and data["path"] == "03-Knowledge/staging db-2.md" and data["id"] == two_in_the_trash[1]
    assert not list((tmp_path / "elsewhere").iterdir()) and not (vault / ".obsidian").exists()


def _delete_twice(cli, title: str) -> None:
    for body in (BODY, BODY + " (rebuilt)"):
        code, card = cli("capture", "--title", title, "--body", body, "--json")
        assert code == 0
        assert cli("delete", card["id"])[0] == 0


def test_entries_of_copies_emptied_from_the_trash_by_hand_go_at_the_next_write(cli, vault, two_in_the_trash):
    """The user (or Obsidian) empties the trash's files, not its dot-file record: the next write
    of the record keeps only the copies still there."""
    record = vault / ".trash" / trashnames.RECORD
    _delete_twice(cli, "backup host")
    other = ".trash/03-Knowledge/backup host-2.md"
    assert json.loads(record.read_text()) == {SECOND: PATH, other: "03-Knowledge/backup host.md"}
    for copy in (vault / ".trash/03-Knowledge").glob("staging db*.md"):
        copy.unlink()
    _delete_twice(cli, "mail relay")  # a write for another card's copy
    assert json.loads(record.read_text()) == {other: "03-Knowledge/backup host.md",
                                              ".trash/03-Knowledge/mail relay-2.md": "03-Knowledge/mail relay.md"}
    code, data = cli("delete", "--restore", other, "--json")  # a forget writes it too
    assert code == 0 and data["path"] == "03-Knowledge/backup host.md"
    (vault / ".trash/03-Knowledge/mail relay-2.md").unlink()
    assert cli("delete", "--purge", ".trash/03-Knowledge/mail relay.md")[0] == 0
    assert not record.exists()  # nothing left to name


def test_doctor_reports_the_entries_of_copies_emptied_by_hand_and_fix_drops_them(cli, vault, two_in_the_trash):
    """Until the next write of the record, `doctor` says which entries name copies that are gone,
    and `doctor --fix` drops them, leaving every other file of the vault as it was."""
    record = vault / ".trash" / trashnames.RECORD
    _delete_twice(cli, "backup host")
    other = ".trash/03-Knowledge/backup host-2.md"
    for copy in (vault / ".trash/03-Knowledge").glob("staging db*.md"):
        copy.unlink()
    assert cli("index")[0] == 0
    notes = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file() and p != record}
    code, result = cli("doctor", "--json")
    assert code == 1
    [finding] = [f for f in result["findings"] if f["check"] == "trash"]
    assert finding["paths"] == [SECOND] and finding["fixable"] and "memsync doctor --fix" in finding["fix"]
    assert json.loads(record.read_text()) == {SECOND: PATH, other: "03-Knowledge/backup host.md"}  # only looked
    code, result = cli("doctor", "--fix", "--json")
    assert code == 0 and result["sound"], result
    assert f"dropped 1 entry of copies no longer in the trash from {trashnames.RECORD_REL}" in result["fixed"]
    assert json.loads(record.read_text()) == {other: "03-Knowledge/backup host.md"}
    assert {p: p.read_bytes() for p in vault.rglob("*") if p.is_file() and p != record} == notes
    code, data = cli("delete", "--restore", other, "--json")  # the entry kept still names its copy
    assert code == 0 and data["path"] == "03-Knowledge/backup host.md"


def test_entries_in_a_trash_folder_memsync_may_not_look_into_are_kept(cli, vault, two_in_the_trash):
    """A trash folder without the right to look into it hides its copies; it does not empty
    them. Neither doctor (its name record and its ids bound to trash paths) nor the next write
    of the record takes them for gone."""
    from .test_denied_folders import memsync  # the installed memsync, without root's reads

    record = vault / ".trash" / trashnames.RECORD
    kept = {SECOND: PATH}
    assert json.loads(record.read_text()) == kept
    folder = vault / ".trash/03-Knowledge"
    folder.chmod(0o000)
    try:
        code, result = memsync("doctor", "--fix", "--json")
        assert isinstance(result, dict), result
        assert not [f for f in result["findings"] if f["check"] in ("trash", "id")], result
        assert json.loads(record.read_text()) == kept
        code, card = memsync("capture", "--title", "mail relay", "--body", BODY, "--kind", "project",
                             "--json")
        assert code == 0 and isinstance(card, dict), card
        assert memsync("delete", str(card["id"]))[0] == 0  # a write of the record for another folder's copy
        assert json.loads(record.read_text()) == kept
    finally:
        folder.chmod(0o755)
    code, data = cli("delete", "--restore", SECOND, "--json")
    assert code == 0 and data["path"] == PATH and data["id"] == two_in_the_trash[1]
