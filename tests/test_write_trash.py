"""`memsync delete`: soft delete into .trash, restore, purge, and the path-safety fences around them."""

from __future__ import annotations

import os
import time

import pytest

from memsync import api, config
from memsync.model.indexing import SyncReport
from memsync.write import trashsize, vaultio
from memsync.write.vaultio import VAULT
from tests.helpers import indexer

BODY = "The staging database lives on db-stage-2, port 5433, user app_ro."


def tree(vault):
    """Every file under the vault (dot-folders included) with its bytes."""
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file()}


def stats_of(card_id):
    with api.open_index(config.load()) as index:
        return index.read_stats(card_id)


@pytest.fixture
def card(cli):
    _, data = cli("capture", "--title", "staging db", "--body", BODY, "--json")
    return data


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
    code, data = cli("delete", "--purge", "--all", "--json")
    assert code == 0 and data["purged"] == 2 and data["stats_cleared"] == 2
    assert tree(vault) == {} and stats_of(other["id"]) == (0, None)
    assert (vault / ".trash").is_dir() and not any((vault / ".trash").iterdir())


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


def flatten_into_trash(vault, rel):
    """Obsidian's "move to .trash", or a person's mv: the file lands in .trash/ without its folders."""
    (vault / ".trash").mkdir(exist_ok=True)
    name = rel.rsplit("/", 1)[-1]
    (vault / rel).rename(vault / ".trash" / name)
    return name


def test_a_card_deleted_in_obsidian_comes_back_to_its_folder_with_its_id(cli, vault, card):
    cli("show", card["id"])
    name = flatten_into_trash(vault, card["path"])
    code, data = cli("delete", "--restore", name, "--json")
    assert code == 0 and data["path"] == card["path"] and data["id"] == card["id"]
    assert "where the card was" in data["note"] and stats_of(card["id"])[0] == 1


def test_a_flattened_card_the_index_already_dropped_keeps_its_id(cli, vault, card):
    cli("show", card["id"])
    name = flatten_into_trash(vault, card["path"])
    cli("index")
    assert cli("show", card["id"], "--json")[0] == 1
    code, data = cli("delete", "--restore", name, "--json")
    assert code == 0 and data["path"] == card["path"] and data["id"] == card["id"]
    assert stats_of(card["id"])[0] == 1


def wait_until(check, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the watcher did not catch up"
        time.sleep(0.02)


def indexed(path: str) -> bool:
    with api.open_index(config.load()) as index:
        return index.card_by_path("vault", path) is not None


def test_a_card_obsidian_trashed_under_a_watcher_comes_back_with_its_id(cli, vault, card):
    from memsync.watch import Watcher

    cli("show", card["id"])
    watcher = Watcher(config.load())
    watcher.start()
    try:
        name = flatten_into_trash(vault, card["path"])
        wait_until(lambda: not indexed(card["path"]))
        code, data = cli("delete", "--restore", name, "--json")
        assert code == 0 and (data["path"], data["id"]) == (card["path"], card["id"])
        wait_until(lambda: indexed(card["path"]))
    finally:
        watcher.stop()
    assert cli("show", card["id"], "--json")[1]["path"] == card["path"]
    assert stats_of(card["id"])[0] == 2


def test_a_flattened_card_from_the_top_of_the_vault_keeps_its_id(cli, vault):
    _, top = cli("capture", "--title", "top note", "--body", BODY, "--json")
    (vault / top["path"]).rename(vault / "top-note.md")
    cli("index")
    top_id = cli("search", "db-stage-2", "--json")[1]["hits"][0]["id"]
    name = flatten_into_trash(vault, "top-note.md")
    cli("index")
    code, data = cli("delete", "--restore", name, "--json")
    assert code == 0 and data["path"] == "top-note.md" and data["id"] == top_id


def test_a_flattened_file_whose_folder_is_unclear_goes_to_the_top(cli, vault, card):
    """Two cards of that name left their folders: restoring guesses neither."""
    _, tool = cli("capture", "--title", "staging db", "--body", BODY + " (the tool)", "--kind", "tool", "--json")
    assert tool["path"] == "07-Tools/staging db.md"
    (vault / ".trash").mkdir()
    (vault / card["path"]).rename(vault / ".trash/staging db.md")
    (vault / "07-Tools/staging db.md").unlink()
    code, data = cli("delete", "--restore", "staging db.md", "--json")
    assert code == 0 and data["path"] == "staging db.md" and "note" not in data


def test_a_move_into_the_trash_and_back_keeps_the_id(cli, vault, card):
    """Obsidian's "move to .trash" keeps the folder path; the indexer sees it on its next look."""
    cli("show", card["id"])
    (vault / ".trash/03-Knowledge").mkdir(parents=True)
    (vault / card["path"]).rename(vault / ".trash" / card["path"])
    cli("index")
    assert cli("search", "db-stage-2", "--json")[0] == 1
    _, other = cli("capture", "--title", "staging db", "--body", "another card at the same place", "--json")
    assert other["path"] == card["path"] and other["id"] != card["id"]
    (vault / other["path"]).unlink()
    cli("index")
    (vault / ".trash" / card["path"]).rename(vault / card["path"])
    cli("index")
    hits = cli("search", "db-stage-2", "--json")[1]["hits"]
    assert [h["id"] for h in hits] == [card["id"]] and stats_of(card["id"])[0] == 1


# --- path safety: nothing outside the vault is ever touched -----------------------------------

@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.md").write_text("---\ntitle: victim\n---\nmust never be moved or removed\n")
    return folder


@pytest.mark.parametrize("mode", [("--restore",), ("--purge",), ("--restore", "--force")])
@pytest.mark.parametrize("arg", ["../outside/victim.md", ".trash/../../outside/victim.md", "{outside}/victim.md",
                                 "/etc/hostname"])
def test_paths_outside_the_vault_are_refused(cli, vault, card, outside, mode, arg):
    cli("delete", card["id"])
    before, victim = tree(vault), (outside / "victim.md").read_bytes()
    code, data = cli("delete", mode[0], arg.format(outside=outside), *mode[1:], "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert tree(vault) == before and (outside / "victim.md").read_bytes() == victim


@pytest.mark.parametrize("mode", ["--restore", "--purge"])
def test_a_symlink_in_the_trash_pointing_outside_is_refused(cli, vault, outside, mode):
    (vault / ".trash").mkdir()
    (vault / ".trash/evil.md").symlink_to(outside / "victim.md")
    victim = (outside / "victim.md").read_bytes()
    code, data = cli("delete", mode, ".trash/evil.md", "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert (vault / ".trash/evil.md").is_symlink() and (outside / "victim.md").read_bytes() == victim
    assert not (vault / "evil.md").exists()


def test_a_trash_folder_that_links_outside_is_refused(cli, vault, card, outside):
    (vault / ".trash").symlink_to(outside)
    code, data = cli("delete", card["id"], "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert (vault / card["path"]).exists() and sorted(p.name for p in outside.iterdir()) == ["victim.md"]
    code, _ = cli("delete", "--purge", "--all", "--json")
    assert code == 2 and (outside / "victim.md").exists()


def test_a_kind_folder_that_links_outside_is_refused(cli, vault, outside):
    (vault / "03-Knowledge").symlink_to(outside, target_is_directory=True)
    code, data = cli("capture", "--title", "escape", "--body", BODY, "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"]


def test_purge_all_removes_links_but_never_what_they_point_to(cli, vault, outside):
    (vault / ".trash/sub").mkdir(parents=True)
    (vault / ".trash/sub/link-to-folder").symlink_to(outside, target_is_directory=True)
    (vault / ".trash/sub/link-to-file.md").symlink_to(outside / "victim.md")
    code, data = cli("delete", "--purge", "--all", "--json")
    assert code == 0 and data["purged"] == 2
    assert (outside / "victim.md").exists() and not any((vault / ".trash").iterdir())


def test_a_look_taken_before_a_delete_and_restore_cannot_give_the_card_a_new_id(cli, vault, card):
    """A watcher (or a reconcile) reads a file outside its write transaction; a delete and a
    restore may run in between. The stale look must not index the card again at its old path
    under a new id (seen as a flaky `test_memory_delete_can_restore_what_it_deleted`)."""
    rel = card["path"]
    work, index = indexer()
    try:
        stale = [work._look(VAULT, rel, None)]  # read while the card is still in place
        assert stale[0].state == "content"
        cli("delete", card["id"])
        work._apply(VAULT, stale, {}, SyncReport())  # applied after the delete
        assert index.bound_id(VAULT, rel) is None and index.file_state(VAULT, rel) is None
        assert cli("search", "db-stage-2", "--json")[0] == 1

        gone = [work._look(VAULT, rel, None)]  # read while the card is in the trash
        assert gone[0].state == "absent"
        cli("delete", "--restore", ".trash/" + rel)
        work._apply(VAULT, gone, {rel: index.file_state(VAULT, rel)}, SyncReport())
    finally:
        index.close()
    assert [h["id"] for h in cli("search", "db-stage-2", "--json")[1]["hits"]] == [card["id"]]


def test_a_watcher_between_the_delete_and_its_park_leaves_the_id_in_the_trash(cli, vault, card):
    """A delete moves the file first and parks its id a moment later; a watcher that sees the
    file in the trash in between parks the id itself. The delete's own park then finds nothing
    left to move and must not unbind the id it finds waiting in the trash (seen as a flaky
    `test_memory_delete_can_restore_what_it_deleted`: the restored card got a new id)."""
    rel = card["path"]
    work, index = indexer()
    try:
        trash_rel = vaultio.move_to_trash(config.load().home.path, vault, rel)  # what `delete` does first
        work._apply(VAULT, [work._look(VAULT, rel, None)], {rel: index.file_state(VAULT, rel)},
                    SyncReport())  # the watcher: the card is gone, its content is in the trash
        assert index.bound_id(VAULT, trash_rel) == card["id"]
        work.park(VAULT, rel, trash_rel)  # what `delete` does next
        assert index.bound_id(VAULT, trash_rel) == card["id"]
    finally:
        index.close()
    assert cli("delete", "--restore", trash_rel, "--json")[0] == 0
    assert [h["id"] for h in cli("search", "db-stage-2", "--json")[1]["hits"]] == [card["id"]]


def _half_move(vault, src: str, dst: str) -> None:
    """A move to the trash killed between its two names: its plan written, the new name linked,
    the old name still there, and the writer gone (its journal lock let go)."""
    from memsync.write import journal

    entry = journal.Entry(config.load().home.path, {"op": "move", "vault": str(vault), "src": src, "dst": dst})
    (vault / dst).parent.mkdir(parents=True, exist_ok=True)
    os.link(vault / src, vault / dst)
    entry.release()


def test_a_delete_killed_between_its_two_names_is_finished_by_the_next_write(cli, vault, card):
    rel, trash_rel = card["path"], ".trash/" + card["path"]
    original = (vault / rel).read_bytes()
    _half_move(vault, rel, trash_rel)
    code, data = cli("capture", "--title", "another card", "--body", "the backup drive is the blue one in the hall cupboard", "--json")
    assert code == 0, data
    assert not (vault / rel).exists() and (vault / trash_rel).read_bytes() == original
    assert [r["op"] for r in data["recovered"]] == ["move"]
    assert cli("search", "db-stage-2", "--json")[0] == 1  # the index saw the card leave
    assert not list((config.load().home.path / "journal").glob("*.json"))


def test_a_new_file_at_the_old_name_is_kept_by_the_recovery(cli, vault, card):
    rel, trash_rel = card["path"], ".trash/" + card["path"]
    _half_move(vault, rel, trash_rel)
    os.unlink(vault / rel)
    (vault / rel).write_text("---\ntitle: written since\n---\nnew words\n", encoding="utf-8")
    assert cli("capture", "--title", "another card", "--body", "the backup drive is the blue one in the hall cupboard", "--json")[0] == 0
    assert "written since" in (vault / rel).read_text(encoding="utf-8")
    assert (vault / trash_rel).read_text(encoding="utf-8") != (vault / rel).read_text(encoding="utf-8")


def test_a_trash_folder_memsync_may_not_read_or_change_is_said_and_kept(cli, vault, card):
    """Run without root's rights: a restore or purge of a copy in a folder memsync may not look
    into says why and what to do, not "nothing at"; emptying the trash deletes what it can and
    names the folders it left as they were; nothing in them is lost."""
    from .test_denied_folders import memsync  # the installed memsync, without root's reads

    _, other = cli("capture", "--title", "prod db", "--body", BODY.replace("stage", "prod"), "--kind", "tool",
                   "--json")
    cli("delete", card["id"])
    cli("delete", other["id"])
    hidden, rel = vault / ".trash" / os.path.dirname(card["path"]), ".trash/" + card["path"]
    before = (vault / rel).read_bytes()
    hidden.chmod(0o000)
    try:
        for verb in ("--restore", "--purge"):
            code, out = memsync("delete", verb, rel, "--json")
            assert code == 2 and isinstance(out, dict), out
            assert out["error"]["code"] == "bad_environment"
            assert f"{rel} cannot be looked at" in out["error"]["message"]
            assert f"chmod u+rx {hidden}" in out["error"]["message"]
        code, out = memsync("delete", "--purge", "--all", "--json")
        assert code == 0 and isinstance(out, dict), out
        assert out["purged"] == 1 and out["kept"] == [os.path.dirname(rel)]
        assert "may not be read or changed" in out["warnings"][0] and "chmod u+rwx" in out["warnings"][0]
        assert not (vault / ".trash" / other["path"]).exists()
    finally:
        hidden.chmod(0o755)
    assert (vault / rel).read_bytes() == before
    code, data = cli("delete", "--restore", rel, "--json")
    assert code == 0 and data["id"] == card["id"]


def test_a_trash_folder_memsync_may_not_change_keeps_its_copies_and_says_why(cli, vault, card):
    from .test_denied_folders import memsync  # the installed memsync, without root's rights

    cli("delete", card["id"])
    rel = ".trash/" + card["path"]
    locked = vault / os.path.dirname(rel)
    locked.chmod(0o555)
    try:
        code, out = memsync("delete", "--purge", rel, "--json")
        assert code == 2 and isinstance(out, dict), out
        assert f"{rel} cannot be deleted" in out["error"]["message"] and f"chmod u+w {locked}" in out["error"]["message"]
        code, out = memsync("delete", "--purge", "--all", "--json")
        assert code == 0 and isinstance(out, dict), out
        assert out["purged"] == 0 and out["kept"] == [os.path.dirname(rel)]
    finally:
        locked.chmod(0o755)
    assert (vault / rel).is_file()


def test_stats_says_which_trash_folders_it_could_not_count(cli, vault, card):
    from .test_denied_folders import memsync  # the installed memsync, without root's reads

    cli("delete", card["id"])
    folder = ".trash/" + os.path.dirname(card["path"])
    assert cli("stats", "--json")[1]["trash"] == {"files": 1, "bytes": (vault / ".trash" / card["path"]).stat().st_size}
    (vault / folder).chmod(0o000)
    try:
        code, data = memsync("stats", "--json")
        assert code == 0 and isinstance(data, dict), data
        assert data["trash"] == {"files": 0, "bytes": 0, "unreadable_folders": [folder]}
        code, text = memsync("stats")
        assert f"trash: 0 files, 0 MiB; not counted: {folder}, which may not be read" in str(text)
    finally:
        (vault / folder).chmod(0o755)


def test_a_copy_the_trash_held_before_is_not_taken_for_a_card_briefly_gone(cli, vault, card, tmp_path):
    """The trash holds an older copy of the same text (deleted before, written again since). A
    reconcile that finds the card's file gone for a moment (an editor's save) keeps its id bound
    to its path, and the copy's id stays the copy's."""
    old_copy = vault / ".trash" / card["path"]
    assert cli("delete", card["id"])[0] == 0 and old_copy.is_file()
    code, again = cli("capture", "--title", "staging db", "--body", BODY, "--json")
    assert code == 0 and again["id"] != card["id"] and old_copy.read_bytes() == (vault / again["path"]).read_bytes()
    away = tmp_path / "saving.md"
    (vault / again["path"]).rename(away)
    assert cli("index")[0] == 0
    away.rename(vault / again["path"])
    assert cli("index")[0] == 0
    assert [h["id"] for h in cli("search", "db-stage-2", "--json")[1]["hits"]] == [again["id"]]
    code, data = cli("delete", "--restore", ".trash/" + card["path"], "--force", "--json")
    assert code == 0 and data["id"] == card["id"]


def test_a_card_copied_into_the_trash_keeps_its_id(cli, vault, card):
    """A sync tool that deletes by copying into the trash (a new inode) is still a move."""
    cli("show", card["id"])
    (vault / ".trash/03-Knowledge").mkdir(parents=True)
    (vault / ".trash" / card["path"]).write_bytes((vault / card["path"]).read_bytes())
    (vault / card["path"]).unlink()
    assert cli("index")[0] == 0
    code, data = cli("delete", "--restore", ".trash/" + card["path"], "--json")
    assert code == 0 and data["id"] == card["id"] and stats_of(card["id"])[0] == 1


def test_a_copy_restored_after_its_namesake_was_removed_by_hand_keeps_its_own_id(cli, vault, card):
    """The first copy of a name, removed from the trash by hand (a purge done without memsync),
    left its id bound to its trash path; the next card restored to that name was handed that id
    by the indexer, which took it for the first copy coming back."""
    cli("delete", card["id"])
    _, again = cli("capture", "--title", "staging db", "--body", BODY + " (rebuilt)", "--json")
    cli("delete", again["id"])  # kept as staging db-2.md
    (vault / ".trash" / card["path"]).unlink()
    code, data = cli("delete", "--restore", ".trash/03-Knowledge/staging db-2.md", "--json")
    assert code == 0 and data["path"] == card["path"] and data["id"] == again["id"]
    assert cli("index")[0] == 0
    code, found = cli("search", "rebuilt", "--json")
    assert [(h["id"], h["path"]) for h in found["hits"]] == [(again["id"], card["path"])]
    assert cli("show", card["id"], "--json")[0] == 1  # the copy removed by hand is gone for good


def test_the_advice_to_list_the_trash_keeps_a_spaced_vault_one_argument(cli, tmp_path):
    import shlex

    spaced = tmp_path / "My Notes"
    spaced.mkdir()
    code, out = cli("--vault", spaced, "delete", "--restore", ".trash/none.md", "--json")
    message = out["error"]["message"]
    assert code != 0 and "nothing at .trash/none.md" in message
    command = message.split("`")[1]  # as a shell splits it
    assert shlex.split(command) == ["ls", str(spaced / ".trash")]
