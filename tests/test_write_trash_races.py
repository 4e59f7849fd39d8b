"""A delete and a restore raced by a reader or a watcher, or killed between the two names of its
move: the card keeps its id, and the next write finishes the move without losing a newer file."""

from __future__ import annotations

import os

from memsync import config
from memsync.model.indexing import SyncReport
from memsync.write import vaultio
from memsync.write.vaultio import VAULT
from tests.helpers import indexer

from . import trashing

card = trashing.card  # a fixture


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
