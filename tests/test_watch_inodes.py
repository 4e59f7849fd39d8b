"""`memsync watch` as a real process while a card's inode, not its text, changes: its mode
(chmod 000 and back), a second name for it (a hard link), two cards swapped in one rename (and
then moved on before the watcher looked)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from memsync import api, config
from memsync.model.indexing import Signature
from memsync.store.index import Index
from memsync.watch.pairing import Pairing
from memsync.watch.pending import Batch

from .helpers import indexer, settle_to_rebuild
from .watching import DEADLINE, card_id, converge, mark, put, view


def without_root_reads() -> tuple[str, ...]:
    """What runs the watcher so that a mode of 000 keeps it out: nothing for an ordinary user;
    for root, setpriv without the two capabilities that let root read any file."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a mode of 000 does not stop root reading")
    caps = "-dac_override,-dac_read_search"
    return ("setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}")


def problems() -> dict[str, str]:
    with api.open_index(config.load()) as index:
        return {p["path"]: p["message"] for p in index.problems()}


def wait_for_problem(rel: str, present: bool) -> None:
    deadline = time.monotonic() + DEADLINE
    while (rel in problems()) != present:
        if time.monotonic() > deadline:
            pytest.fail(f"problem of {rel} {'never recorded' if present else 'still there'}: {problems()}")
        time.sleep(0.02)


def test_an_unreadable_card_leaves_the_index_with_a_problem_and_comes_back(vault, watcher):
    proc = watcher(under=without_root_reads())
    a, b, other = mark(), mark(), mark()
    put(vault, "locked.md", a)
    put(vault, "moved.md", b)
    put(vault, "other.md", other)
    converge({"locked.md": a, "moved.md": b, "other.md": other})
    locked = card_id("locked.md")
    os.chmod(vault / "locked.md", 0)
    converge({"moved.md": b, "other.md": other}, gone={a})
    wait_for_problem("locked.md", present=True)
    assert "permission denied" in problems()["locked.md"]
    # An unreadable card renamed is looked at under its new name: a problem, not a retry for ever.
    os.chmod(vault / "moved.md", 0)
    os.rename(vault / "moved.md", vault / "renamed.md")
    converge({"other.md": other}, gone={b})
    wait_for_problem("renamed.md", present=True)
    for rel in ("locked.md", "renamed.md"):
        os.chmod(vault / rel, 0o644)
    converge({"locked.md": a, "renamed.md": b, "other.md": other})
    wait_for_problem("locked.md", present=False)
    wait_for_problem("renamed.md", present=False)
    assert card_id("locked.md") == locked  # the id waited at its path
    assert proc.stop() == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


def test_an_edit_through_one_name_of_a_hard_linked_card_updates_every_name(vault, tmp_path, watcher):
    proc = watcher()
    first, edited, again = mark(), mark(), mark()
    put(vault, "a.md", first)
    converge({"a.md": first})
    os.link(vault / "a.md", vault / "b.md")
    settle_to_rebuild(config.load(), tmp_path)  # b indexed, and a's row has its new link count
    with open(vault / "b.md", "a", encoding="utf-8") as handle:  # in place: both names change
        handle.write(f"Later {edited}.\n")
    settle_to_rebuild(config.load(), tmp_path)
    with open(vault / "a.md", "a", encoding="utf-8") as handle:
        handle.write(f"Then {again}.\n")
    settle_to_rebuild(config.load(), tmp_path)
    assert all(again in text for text in view(config.load()).values())
    assert proc.stop() == 0, proc.stderr()


def test_a_name_of_a_hard_linked_card_removed_leaves_the_other_as_a_rebuild_has_it(vault, tmp_path, watcher):
    """Removing one name changes the link count, so the ctime, of the others, and no event names
    them: the watcher looks at them all the same, and `memsync index` then has nothing to read."""
    text = mark()
    put(vault, "a/one.md", text)
    (vault / "b").mkdir()
    os.link(vault / "a/one.md", vault / "b/two.md")  # both names indexed by the start-up reconcile
    proc = watcher()
    settle_to_rebuild(config.load(), tmp_path)
    kept = card_id("b/two.md")
    os.unlink(vault / "a/one.md")
    settle_to_rebuild(config.load(), tmp_path, timeout=DEADLINE)  # b/two.md's row with its new ctime too
    assert card_id("b/two.md") == kept
    assert proc.stop() == 0, proc.stderr()
    report = api.reindex(config.load())
    assert (report["hashed"], report["unchanged"]) == (0, 1), report


def exchange(a: Path, b: Path) -> None:
    """Swap two files in one step, as renameat2(RENAME_EXCHANGE) does (Linux 3.15+)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        pytest.skip("no renameat2 in this C library")
    at_cwd, rename_exchange = -100, 2
    if libc.renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), rename_exchange) != 0:
        err = ctypes.get_errno()
        if err in (errno.EINVAL, errno.ENOSYS):
            pytest.skip("this file system cannot exchange files")
        raise OSError(err, os.strerror(err))


def test_two_cards_swapped_in_one_rename_keep_their_ids_and_stats(vault, tmp_path, watcher):
    proc = watcher()
    one, two, stay = mark(), mark(), mark()
    put(vault, "d/one.md", one)
    put(vault, "e/two.md", two)
    put(vault, "stay.md", stay)
    converge({"d/one.md": one, "e/two.md": two, "stay.md": stay})
    ids = {one: card_id("d/one.md"), two: card_id("e/two.md")}
    api.show(config.load(), ids[two])  # one recorded read, which must stay with its card
    exchange(vault / "d/one.md", vault / "e/two.md")
    converge({"d/one.md": two, "e/two.md": one, "stay.md": stay})
    settle_to_rebuild(config.load(), tmp_path)
    assert {one: card_id("e/two.md"), two: card_id("d/one.md")} == ids
    with api.open_index(config.load()) as index:
        assert index.read_stats(ids[two])[0] == 1
    assert proc.stop() == 0, proc.stderr()


def test_the_first_half_of_a_swap_waits_for_the_second(tmp_path):
    """The worker may wake between the two renames a swap is reported as: a->b alone, with a
    file at a again, waits a moment for b->a; with both in hand, neither waits."""
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text("x")
    pairing = Pairing(lambda _source: str(tmp_path))

    def halves() -> tuple[tuple, tuple]:
        # stamped now, just before their batch: a hold is measured from when the move was seen,
        # and opening an index on a busy machine took longer than the hold itself
        now = time.monotonic()
        return ("vault", "a.md", "b.md", False, now), ("vault", "b.md", "a.md", False, now)

    first, second = halves()
    alone = Batch(moves=[first], paths={"vault": ["a.md", "b.md"]})
    assert pairing.hold_vanished(alone) == ([], [first])
    assert alone.paths == {"vault": []}  # its ends are looked at with it, later
    assert pairing.hold_vanished(Batch(moves=[first, second])) == ([first, second], [])
    (tmp_path / "a.md").unlink()  # a plain rename: nothing to wait for
    assert pairing.hold_vanished(Batch(moves=[first])) == ([first], [])
    # unless it is over a card: what the swap put at a.md may have moved on at once
    index = Index(tmp_path / "index.db")
    try:
        index.replace_file("vault", "b.md", [], [], Signature(1, 0, 0, 1), "h", 0)  # a card at b.md
        first, second = halves()
        assert pairing.hold_vanished(Batch(moves=[first]), index) == ([], [first])
    finally:
        index.close()
    # and the two halves, the second waiting for a rename from a.md, wait together
    first, second = halves()
    assert pairing.hold_vanished(Batch(moves=[first, second])) == ([], [first, second])


def two_cards(vault, first: str, second: str) -> tuple[str, str, dict]:
    """Two cards of texts of their own, indexed by the running watcher: their texts, and each
    text's card id."""
    one, two = mark(), mark()
    put(vault, first, one)
    put(vault, second, two)
    converge({first: one, second: two})
    return one, two, {one: card_id(first), two: card_id(second)}


@pytest.mark.parametrize("at_once", [False, True])
@pytest.mark.parametrize("away", ["new folder", "out and back"])
def test_cards_swapped_then_one_moved_where_watchdog_cannot_pair_it_keep_their_ids(
        vault, tmp_path, watcher, at_once, away):
    """After a swap (a.md holds b.md's text and b.md a.md's), a.md moves where watchdog sees no
    rename, only a deletion and a new file: into a folder too new to be watched, or out of the
    vault and back under another name. Whether the watcher took the swap first or takes it with
    the move, each card keeps its id: the file at b.md is not taken for a's card renamed over
    b's, nor the new file for the other card of the swap."""
    proc = watcher()
    one, two, ids = two_cards(vault, "a.md", "b.md")
    # at once: the watcher reads every event of what follows at once, when it goes on
    with proc.paused() if at_once else contextlib.nullcontext():
        exchange(vault / "a.md", vault / "b.md")
        if not at_once:
            converge({"a.md": two, "b.md": one})
        if away == "new folder":
            target = into_new_folder(vault, "a.md", "new")
        else:
            target = "c.md"
            out_and_back(vault, "a.md", tmp_path, target)
    converge({target: two, "b.md": one})
    settle_to_rebuild(config.load(), tmp_path)
    assert {one: card_id("b.md"), two: card_id(target)} == ids
    assert proc.stop() == 0, proc.stderr()


def test_two_cards_swapped_then_their_folder_renamed_at_once_keep_their_ids(vault, tmp_path, watcher):
    """The swap and the folder's rename come in one batch (the watcher stopped meanwhile): the
    folder's rename takes both cards on, and the swap is told from the files where they are now."""
    proc = watcher()
    one, two, ids = two_cards(vault, "d/a.md", "d/b.md")
    with proc.paused():
        exchange(vault / "d/a.md", vault / "d/b.md")
        os.rename(vault / "d", vault / "e")
    converge({"e/a.md": two, "e/b.md": one})
    settle_to_rebuild(config.load(), tmp_path)
    assert {one: card_id("e/b.md"), two: card_id("e/a.md")} == ids
    assert proc.stop() == 0, proc.stderr()


def out_and_back(vault: Path, rel: str, outside: Path, new: str) -> None:
    """Out of the vault and back under another name: watchdog reports a deletion (half a second
    late) and a new file, no rename."""
    os.rename(vault / rel, outside / "away.md")
    os.rename(outside / "away.md", vault / new)


def saved_by_vim(vault: Path, rel: str, marker: str) -> None:
    """vim's default save: the file renamed to a backup name, written anew, the backup removed."""
    os.rename(vault / rel, vault / f"{rel}~")
    put(vault, rel, marker)
    os.unlink(vault / f"{rel}~")


def saved_by_rename(vault: Path, rel: str, marker: str) -> None:
    """A save through a temp file renamed over the card (write-file-atomic, Syncthing)."""
    put(vault, ".save.tmp", marker)
    os.replace(vault / ".save.tmp", vault / rel)


def into_new_folder(vault: Path, rel: str, folder: str) -> str:
    os.mkdir(vault / folder)
    os.rename(vault / rel, vault / folder / rel)
    return f"{folder}/{rel}"


@pytest.mark.parametrize("case", ["both out and back", "both into new folders", "one saved by rename",
                                  "one saved by vim", "one deleted", "one edited in place"])
def test_cards_swapped_then_both_moved_on_at_once_keep_their_ids(vault, tmp_path, watcher, case):
    """After the swap (a.md holds two's text, b.md one's), both files move on before the
    watcher looks (it is stopped meanwhile, so every event comes at once): where neither path
    holds a file of the swap any more, the two renames are still a swap, and each card keeps its
    id where its text went (a new file of its content takes it up, however late watchdog reports
    the deletion); an edit of one waits for the swap."""
    proc = watcher()
    one, two, ids = two_cards(vault, "a.md", "b.md")
    edited = f"{one} edited"
    with proc.paused():
        exchange(vault / "a.md", vault / "b.md")
        if case == "both into new folders":
            at = {two: into_new_folder(vault, "a.md", "n1"), one: into_new_folder(vault, "b.md", "n2")}
        else:
            out_and_back(vault, "a.md", tmp_path, "c.md")
            at = {two: "c.md", one: "b.md"}
        if case == "both out and back":
            out_and_back(vault, "b.md", tmp_path, "d.md")
            at[one] = "d.md"
        elif case == "one saved by rename":
            saved_by_rename(vault, "b.md", edited)
        elif case == "one saved by vim":
            saved_by_vim(vault, "b.md", edited)
        elif case == "one deleted":
            os.unlink(vault / "b.md")
            del at[one]
        elif case == "one edited in place":
            with open(vault / "b.md", "a", encoding="utf-8") as handle:
                handle.write("An edit.\n")
    converge({rel: text for text, rel in at.items()}, gone=set() if one in at else {one})
    settle_to_rebuild(config.load(), tmp_path)
    assert {text: card_id(rel) for text, rel in at.items()} == {text: ids[text] for text in at}
    assert proc.stop() == 0, proc.stderr()


BATCH_LINE = re.compile(r"INFO batch: \d+ items, (\d+) paths looked at -> \+(\d+) ~(\d+) -(\d+) moved (\d+)")


def test_a_swap_held_back_logs_no_batch_until_it_is_applied(vault, watcher):
    """The swap's second half waits for the rename that moved a.md on (none comes: it was
    deleted) for up to half a second; the worker looks again each quiet window meanwhile. Those
    looks did nothing and each logged a batch of 0 paths; the hold is now said once, at -vv."""
    proc = watcher()
    one, two, ids = two_cards(vault, "a.md", "b.md")
    with proc.paused():  # every event at once: the swap, then a.md gone
        exchange(vault / "a.md", vault / "b.md")
        os.unlink(vault / "a.md")
    converge({"b.md": one}, gone={two})
    assert card_id("b.md") == ids[one]
    assert proc.stop() == 0, proc.stderr()
    log = proc.stderr()
    idle = [m[0] for m in BATCH_LINE.finditer(log) if m.groups() == ("0",) * 5]
    assert idle == [], log
    assert 1 <= log.count("holding back renames") <= 2, log  # the swap's halves may come apart


def test_what_is_known_of_files_follows_renames_and_swaps():
    from memsync.watch import plan

    known = {"a": "A", "b": "B", "c": "C"}
    both = lambda x, y, where: True  # noqa: E731
    swapped = plan.swaps([("a", "b"), ("b", "a")], both)
    assert swapped == {("a", "b")}
    assert plan.carried(known, [("a", "b"), ("b", "a")], swapped) == {"a": "B", "b": "A", "c": "C"}
    # the same renames in turn: b's file was replaced, a's came back
    assert plan.carried(known, [("a", "b"), ("b", "a")], set()) == {"a": "A", "c": "C"}
    assert plan.carried(known, [("a", "b"), ("b", "a"), ("a", "d")], swapped) == {"d": "B", "b": "A", "c": "C"}
    assert plan.swaps([("a", "b"), ("b", "a")], lambda x, y, where: False) == set()
    wheres = []
    plan.swaps([("a", "b"), ("b", "a"), ("a", "d/a"), ("b", "d/b")], lambda x, y, where: wheres.append(where))
    assert wheres == [{"a": "d/a", "b": "d/b"}]  # where the two files went on


def test_a_card_swapped_with_a_file_not_indexed_yet_keeps_its_id(vault):
    """The other file of a swap may be too new to have a card: the indexed one is renamed."""
    one, fresh = mark(), mark()
    put(vault, "one.md", one)
    work, index = indexer()
    try:
        work.reconcile()
        before = index.card_by_path("vault", "one.md")["id"]
        put(vault, "new.md", fresh)
        exchange(vault / "one.md", vault / "new.md")
        work.move_many("vault", [("one.md", "new.md"), ("new.md", "one.md")], ["one.md", "new.md"])
        assert index.card_by_path("vault", "new.md")["id"] == before
        assert one in index.card_by_path("vault", "new.md")["body"]
        assert fresh in index.card_by_path("vault", "one.md")["body"]
        assert index.card_by_path("vault", "one.md")["id"] != before
    finally:
        index.close()


@contextlib.contextmanager
def two_indexed(vault: Path):
    """a.md and b.md indexed, without a watcher: an indexer, and each path's card id."""
    put(vault, "a.md", mark())
    put(vault, "b.md", mark())
    work, index = indexer()
    try:
        work.reconcile()
        yield work, {rel: index.card_by_path("vault", rel)["id"] for rel in ("a.md", "b.md")}
    finally:
        index.close()


def test_renames_there_and_back_whose_files_both_moved_on_are_taken_for_a_swap(vault, tmp_path):
    """Nothing left at either path tells a swap from a->b over b's file and back: taken for a
    swap, each id goes with its text, to be paired by content where the file turns up (taken in
    turn, b's card was dropped, its id lost)."""
    with two_indexed(vault) as (work, ids):
        exchange(vault / "a.md", vault / "b.md")
        for name in ("a.md", "b.md"):
            os.rename(vault / name, tmp_path / name)
        work.move_many("vault", [("a.md", "b.md"), ("b.md", "a.md")], [])
        assert work.index.card_by_path("vault", "b.md")["id"] == ids["a.md"]
        assert work.index.card_by_path("vault", "a.md")["id"] == ids["b.md"]


def test_renames_there_and_back_that_bring_a_file_back_are_taken_in_turn(vault):
    """a->b over b's file, then b->a: a's own file (its inode) is back at a, b's is gone."""
    with two_indexed(vault) as (work, ids):
        os.rename(vault / "a.md", vault / "b.md")
        os.rename(vault / "b.md", vault / "a.md")
        work.move_many("vault", [("a.md", "b.md"), ("b.md", "a.md")], ["a.md", "b.md"])
        assert work.index.card_by_path("vault", "a.md")["id"] == ids["a.md"]
        assert work.index.card_by_path("vault", "b.md") is None


def test_a_folder_closed_and_opened_again_shows_its_cards(vault, watcher):
    """A folder the watcher may not enter (chmod 000) hides its cards, as from a rebuild; opened
    again (chmod 755) they come back at once, under their ids, and new files in it are seen."""
    a, b, other, later = mark(), mark(), mark(), mark()
    put(vault, "d/a.md", a)
    put(vault, "d/b.md", b)
    put(vault, "other.md", other)
    os.chmod(vault / "d", 0)  # closed before the watcher starts: watchdog cannot watch it
    proc = watcher(under=without_root_reads())
    converge({"other.md": other}, gone={a, b})
    wait_for_problem("d/", True)  # and says why
    os.chmod(vault / "d", 0o755)
    converge({"d/a.md": a, "d/b.md": b, "other.md": other})
    wait_for_problem("d/", False)
    ids = {rel: card_id(rel) for rel in ("d/a.md", "d/b.md")}
    put(vault, "d/c.md", later)  # seen once the folder is watched (after the second look)
    converge({"d/a.md": a, "d/b.md": b, "d/c.md": later, "other.md": other})
    os.chmod(vault / "d", 0)
    os.rename(vault / "d", vault / "e")  # cards renamed into a folder that cannot be read
    converge({"other.md": other}, gone={a, b, later})
    wait_for_problem("e/", True)
    os.chmod(vault / "e", 0o755)
    converge({"e/a.md": a, "e/b.md": b, "e/c.md": later, "other.md": other})
    assert {rel: card_id("e/" + rel[2:]) for rel in ids} == ids
    wait_for_problem("e/", False)
    assert proc.stop() == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


def test_two_folders_swapped_in_one_rename_keep_their_cards_ids(vault, tmp_path, watcher):
    """Folders holding files of the same names: each card's id follows its text."""
    proc = watcher()
    live = {f"{top}/{name}": mark() for top in ("x", "y") for name in ("n1.md", "n2.md", "s/n3.md")}
    live["x/only.md"] = mark()
    for rel, m in live.items():
        put(vault, rel, m)
    converge(live)
    ids = {m: card_id(rel) for rel, m in live.items()}
    exchange(vault / "x", vault / "y")
    swapped = {("y" if rel[0] == "x" else "x") + rel[1:]: m for rel, m in live.items()}
    converge(swapped)
    settle_to_rebuild(config.load(), tmp_path)
    assert {m: card_id(rel) for rel, m in swapped.items()} == ids
    assert proc.stop() == 0, proc.stderr()


def test_a_card_swapped_with_a_file_just_written_keeps_its_id_in_a_watcher(vault, watcher):
    proc = watcher()
    one, fresh = mark(), mark()
    put(vault, "one.md", one)
    converge({"one.md": one})
    before = card_id("one.md")
    put(vault, "new.md", fresh)  # swapped before the watcher has indexed it
    exchange(vault / "one.md", vault / "new.md")
    converge({"one.md": fresh, "new.md": one})
    assert card_id("new.md") == before
    assert proc.stop() == 0, proc.stderr()
