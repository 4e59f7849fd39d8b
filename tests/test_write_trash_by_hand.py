"""Cards put into the trash or taken out of it without memsync (Obsidian's "move to .trash", a
person's mv, a sync tool that copies, a purge by hand), with or without a watcher: each
comes back with its own id."""

from __future__ import annotations

import time

from memsync import api, config

from . import trashing
from .trashing import BODY, stats_of

card = trashing.card  # a fixture


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
