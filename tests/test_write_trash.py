"""`memsync delete`: soft delete into .trash, restore, purge; each card keeps its own id and
read stats through them."""

from __future__ import annotations

from memsync.write import trashsize

from . import trashing
from .trashing import BODY, stats_of, tree

card = trashing.card  # a fixture


def test_delete_moves_the_card_to_the_trash_and_out_of_search(cli, vault, card):
    original = (vault / card["path"]).read_bytes()
    code, data = cli("delete", card["id"], "--json")
    assert code == 0 and data["status"] == "deleted" and data["indexed"] is True
    assert data["trash_path"] == ".trash/" + card["path"] and "--restore" in data["note"]
    assert not (vault / card["path"]).exists()
    assert (vault / data["trash_path"]).read_bytes() == original
    assert cli("search", "db-stage-2", "--json")[0] == 1
    assert cli("show", card["id"], "--json")[0] == 1
    cli("index", "--rebuild")  # the trash is never indexed back
    assert cli("search", "db-stage-2", "--json")[0] == 1


def test_read_stats_survive_delete_and_come_back_with_restore(cli, vault, card):
    cli("show", card["id"])
    cli("show", card["id"])
    assert stats_of(card["id"])[0] == 2
    cli("delete", card["id"])
    assert stats_of(card["id"])[0] == 2
    code, data = cli("delete", "--restore", card["path"], "--json")
    assert code == 0 and data["status"] == "restored" and data["id"] == card["id"]
    assert data["path"] == card["path"] and (vault / card["path"]).exists()
    assert not (vault / ".trash").joinpath(*card["path"].split("/")).exists()
    assert [h["id"] for h in cli("search", "db-stage-2", "--json")[1]["hits"]] == [card["id"]]
    assert stats_of(card["id"])[0] == 2


def test_a_second_deletion_of_the_same_path_is_kept_as_dash_2(cli, vault, card):
    cli("delete", card["id"])
    first = (vault / ".trash" / card["path"]).read_bytes()
    _, again = cli("capture", "--title", "staging db", "--body", BODY + " (rebuilt)", "--json")
    assert again["path"] == card["path"]
    code, data = cli("delete", again["id"], "--json")
    assert code == 0 and data["trash_path"] == ".trash/03-Knowledge/staging db-2.md"
    assert (vault / ".trash" / card["path"]).read_bytes() == first


def test_a_new_card_at_a_deleted_path_gets_an_id_of_its_own(cli, vault, card):
    cli("show", card["id"])
    cli("delete", card["id"])
    _, again = cli("capture", "--title", "staging db", "--body", BODY + " (rebuilt)", "--json")
    assert again["path"] == card["path"] and again["id"] != card["id"]
    assert stats_of(again["id"]) == (0, None)  # the deleted card's reads are not inherited
    cli("delete", again["id"])  # stored as -2, with its own id
    code, data = cli("delete", "--restore", ".trash/" + card["path"], "--json")
    assert code == 0 and data["id"] == card["id"] and stats_of(card["id"])[0] == 1
    code, data = cli("delete", "--restore", ".trash/03-Knowledge/staging db-2.md", "--json")
    assert code == 0 and data["id"] == again["id"]


def test_a_purged_id_is_never_given_to_another_card(cli, vault, card):
    cli("delete", card["id"])
    cli("delete", "--purge", ".trash/" + card["path"])
    _, again = cli("capture", "--title", "staging db", "--body", BODY + " (rebuilt)", "--json")
    assert again["id"] != card["id"]
    assert cli("show", card["id"], "--json")[0] == 1


def test_restore_refuses_to_overwrite_without_force(cli, vault, card):
    cli("delete", card["id"])
    _, occupant = cli("capture", "--title", "staging db", "--body", BODY + " (the new one)", "--json")
    before = tree(vault)
    code, data = cli("delete", "--restore", ".trash/" + card["path"], "--json")
    assert code == 1 and data["status"] == "rejected" and "--force" in data["note"]
    assert tree(vault) == before


def test_restore_with_force_moves_the_occupant_to_the_trash_first(cli, vault, card):
    cli("delete", card["id"])
    trashed = (vault / ".trash" / card["path"]).read_bytes()
    _, occupant = cli("capture", "--title", "staging db", "--body", BODY + " (the new one)", "--json")
    occupant_bytes = (vault / occupant["path"]).read_bytes()
    code, data = cli("delete", "--restore", card["path"], "--force", "--json")
    assert code == 0 and data["status"] == "restored" and "staging db-2.md" in data["note"]
    assert (vault / card["path"]).read_bytes() == trashed
    assert (vault / ".trash/03-Knowledge/staging db-2.md").read_bytes() == occupant_bytes
    assert [h["path"] for h in cli("search", "db-stage-2", "--json")[1]["hits"]] == [card["path"]]


def test_purge_only_acts_inside_the_trash(cli, vault, card):
    before = tree(vault)
    code, data = cli("delete", "--purge", card["path"], "--json")  # a live card: not in the trash
    assert code == 1 and data["error"]["code"] == "not_found" and "delete ID" in data["error"]["message"]
    assert tree(vault) == before


def test_purge_removes_the_file_and_clears_its_stats(cli, vault, card):
    cli("show", card["id"])
    cli("delete", card["id"])
    code, data = cli("delete", "--purge", ".trash/" + card["path"], "--json")
    assert code == 0 and data["status"] == "purged" and data["stats_cleared"] == 1
    assert tree(vault) == {}
    assert stats_of(card["id"]) == (0, None)


def test_purge_keeps_stats_that_belong_to_a_live_card_at_that_path(cli, vault, card):
    cli("show", card["id"])
    cli("delete", card["id"])
    _, again = cli("capture", "--title", "staging db", "--body", BODY + " (rebuilt)", "--json")
    cli("show", again["id"])
    cli("delete", "--purge", ".trash/" + card["path"])
    assert stats_of(again["id"])[0] >= 1


def test_purge_all_empties_the_trash(cli, vault, card):
    _, other = cli("capture", "--title", "prod db", "--body", BODY.replace("stage", "prod"), "--kind", "tool", "--json")
    cli("show", other["id"])
    cli("delete", card["id"])
    cli("delete", other["id"])
    code, data = cli("delete", "--purge", "--all", "--yes", "--json")
    assert code == 0 and data["purged"] == 2 and data["stats_cleared"] == 2
    assert tree(vault) == {} and stats_of(other["id"]) == (0, None)
    assert (vault / ".trash").is_dir() and not any((vault / ".trash").iterdir())


def test_purge_all_with_nobody_to_ask_needs_yes_and_deletes_nothing_without_it(cli, vault, card):
    """No terminal (a script, an agent's shell): the one loss memsync can cause is not taken
    as agreed to by the command alone; the refusal names the count and the --yes to add."""
    cli("show", card["id"])
    cli("delete", card["id"])
    before = tree(vault)
    code, data = cli("delete", "--purge", "--all", "--json")
    assert code == 2 and data["error"]["code"] == "bad_argument"
    assert "the 1 file(s) in the trash for good" in data["error"]["message"]
    assert "--yes" in data["error"]["message"]
    assert tree(vault) == before and stats_of(card["id"])[0] >= 1


def test_purge_needs_all_to_empty_everything(cli, vault, card):
    cli("delete", card["id"])
    before = tree(vault)
    for args in (("delete", "--purge"), ("delete", "--all"), ("delete", "--purge", "x.md", "--all")):
        assert cli(*args, "--json")[0] == 2, args
    assert tree(vault) == before


def test_delete_reminds_when_the_trash_grows_past_the_threshold(cli, vault, monkeypatch):
    monkeypatch.setattr(trashsize, "REMINDER_CARDS", 2)
    ids = [cli("capture", "--title", f"note {n}", "--body", f"{BODY} number {n}", "--json")[1]["id"] for n in range(2)]
    assert "reminder" not in cli("delete", ids[0], "--json")[1]
    reminder = cli("delete", ids[1], "--json")[1]["reminder"]
    assert "2 files" in reminder and "--purge --all" in reminder


def test_restore_with_force_gives_each_card_its_own_id_back(cli, vault, card):
    cli("show", card["id"])
    cli("show", card["id"])
    cli("delete", card["id"])
    _, newcomer = cli("capture", "--title", "staging db", "--body", BODY + " (the new one)", "--json")
    cli("show", newcomer["id"])
    code, data = cli("delete", "--restore", card["path"], "--force", "--json")
    assert code == 0 and data["id"] == card["id"] and data["path"] == card["path"]
    assert stats_of(card["id"])[0] == 2 and stats_of(newcomer["id"])[0] == 1
    assert cli("show", card["id"], "--json")[1]["path"] == card["path"]
    assert cli("show", newcomer["id"], "--json")[0] == 1  # in the trash, its id parked there
    code, back = cli("delete", "--restore", ".trash/03-Knowledge/staging db-2.md", "--json")
    assert code == 0 and back["id"] == newcomer["id"] and stats_of(newcomer["id"])[0] == 1


def test_restore_brings_the_id_back_even_where_the_index_lags(cli, vault, card):
    """The card that took the path was removed by hand and the index has not looked yet."""
    cli("delete", card["id"])
    _, newcomer = cli("capture", "--title", "staging db", "--body", BODY + " (the new one)", "--json")
    (vault / newcomer["path"]).unlink()
    code, data = cli("delete", "--restore", card["path"], "--json")
    assert code == 0 and data["id"] == card["id"]


def test_a_restore_of_nothing_points_to_what_memsync_can_show_not_to_a_shell(cli, vault, card):
    """It said to run `ls` on the trash, which an agent over MCP may have no shell for."""
    code, out = cli("delete", "--restore", ".trash/none.md", "--json")
    message = out["error"]["message"]
    assert code != 0 and message.startswith("nothing at .trash/none.md; ") and "`ls" not in message
    assert "`memsync show ID` with the deleted card's id says where its file is in the trash" in message


def test_a_restore_of_a_name_the_trash_numbered_names_the_numbered_copies(cli, vault, card):
    # a second card of the same name deleted: the trash keeps the first under its own name
    numbered = card["path"].removesuffix(".md") + "-2.md"
    cli("delete", card["id"], "--json")
    again = cli("capture", "--title", "staging db", "--body", BODY, "--json")[1]
    assert cli("delete", again["id"], "--json")[1]["trash_path"] == f".trash/{numbered}"
    cli("delete", "--restore", f".trash/{card['path']}", "--json")
    code, out = cli("delete", "--restore", f".trash/{card['path']}", "--json")
    assert code != 0 and out["error"]["message"] == (
        f"nothing at .trash/{card['path']}; the trash holds .trash/{numbered} beside it")
