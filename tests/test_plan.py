"""memsync.watch.plan: events -> actions, and per-path coalescing. Pure: no disk, no clock."""

from __future__ import annotations

import pytest

from memsync.adapters import MarkdownAdapter
from memsync.watch.plan import (
    Action,
    Event,
    Pending,
    actions,
    covered,
    keep_sources,
    outermost,
    relative,
)

ROOT = "/v"
wants = MarkdownAdapter().wants


def E(kind, src, dest="", is_dir=False):  # noqa: N802 - reads like a table row
    return Event(kind, ROOT + "/" + src if src else ROOT, ROOT + "/" + dest if dest else "", is_dir)


OUT = "/elsewhere/x.md"


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        # plain writes: whatever the event type, "look at this path"
        (E("created", "a.md"), [Action("sync", "a.md")]),
        (E("modified", "d/a.md"), [Action("sync", "d/a.md")]),
        (E("deleted", "a.md"), [Action("sync", "a.md")]),
        (E("closed", "a.md"), [Action("sync", "a.md", settled=True)]),
        # a mode change may make a card readable again (or not)
        (E("attrib", "a.md"), [Action("sync", "a.md")]),
        # noise: our own reads, non-cards, hidden places
        (E("opened", "a.md"), []),
        (E("closed_no_write", "a.md"), []),
        (E("created", "4913"), []),
        (E("modified", "a.md~"), []),
        (E("created", ".obsidian/workspace.json"), []),
        (E("created", ".git/index.md"), []),
        (E("modified", ".a.md.swp"), []),
        # renames between two card paths keep identity
        (E("moved", "a.md", "b.md"), [Action("move", "a.md", "b.md")]),
        (E("moved", "note.md", "Note.md"), [Action("move", "note.md", "Note.md")]),
        # a temp file renamed over a card is a save of the card (Syncthing, write-file-atomic)
        (E("moved", ".syncthing.a.md.tmp", "a.md"), [Action("sync", "a.md")]),
        (E("moved", "a.md.tmp", "a.md"), [Action("sync", "a.md")]),
        (E("moved", "a.md___jb_tmp___", "a.md"), [Action("sync", "a.md")]),
        # vim's backup rename and a move into the trash remove the card (for now)
        (E("moved", "a.md", "a.md~"), [Action("sync", "a.md")]),
        (E("moved", "d/a.md", ".trash/d/a.md"), [Action("sync", "d/a.md")]),
        (E("moved", ".trash/d/a.md", "d/a.md"), [Action("sync", "d/a.md")]),
        # moves across the vault's edge: only the inside end matters
        (Event("moved", ROOT + "/a.md", OUT), [Action("sync", "a.md")]),
        (Event("moved", OUT, ROOT + "/a.md"), [Action("sync", "a.md")]),
        (Event("created", OUT), []),
        (Event("moved", ROOT + "x/a.md", ROOT + "/a.md"), [Action("sync", "a.md")]),  # /vx is not /v
        # folders: a new or vanished folder may hide changes below it
        (E("created", "d", is_dir=True), [Action("tree", "d")]),
        (E("deleted", "d/e", is_dir=True), [Action("tree", "d/e")]),
        (E("attrib", "d", is_dir=True), [Action("tree", "d")]),  # chmod: its files shown or hidden
        (E("attrib", ".obsidian", is_dir=True), []),
        (E("created", ".git/objects/ab", is_dir=True), []),
        (E("modified", "d", is_dir=True), []),
        (E("moved", "d", "e", is_dir=True), [Action("move_tree", "d", "e")]),
        (E("moved", "d", ".trash/d", is_dir=True), [Action("tree", "d")]),
        (E("moved", ".trash/d", "d", is_dir=True), [Action("tree", "d")]),
        (Event("moved", ROOT + "/d", "/elsewhere/d", True), [Action("tree", "d")]),
        (Event("moved", "/elsewhere/d", ROOT + "/d", True), [Action("tree", "d")]),
        (Event("deleted", ROOT, "", True), [Action("tree", "")]),
        # names that are not UTF-8: files go to the indexer (it reports them), folders climb
        # to the nearest storable parent so no bad name reaches SQL
        (E("created", "bad\udcffname.md"), [Action("sync", "bad\udcffname.md")]),
        (E("created", "d/bad\udcffdir", is_dir=True), [Action("tree", "d")]),
        (E("moved", "d/bad\udcffdir", "d/ok", is_dir=True), [Action("tree", "d"), Action("tree", "d/ok")]),
    ],
)
def test_actions(event, expected):
    assert actions(event, ROOT, wants) == expected


def test_relative():
    assert relative("/v", "/v/a/b.md") == "a/b.md"
    assert relative("/v/", "/v/a.md") == "a.md"
    assert relative("/v", "/v") == ""
    assert relative("/v", "/vault/a.md") is None
    assert relative("/v", "") is None


def test_outermost_and_covered():
    assert outermost(["a/b", "a", "c/d", "c/de", ""]) == [""]
    assert outermost(["a/b", "a", "c/d", "c/de"]) == ["a", "c/d", "c/de"]
    assert covered("a/b.md", ["a"]) and not covered("ab.md", ["a"])


# --- coalescing ---------------------------------------------------------------------------------


def sync(path, settled=False):
    return Action("sync", path, settled=settled)


def test_a_path_waits_for_its_quiet_window():
    p = Pending(quiet=0.05, cap=0.5, settle=0.01)
    p.add("vault", sync("a.md"), now=0.0)
    assert p.next_due() == pytest.approx(0.05)
    assert not p.take(0.04)
    assert p.take(0.05).paths == {"vault": ["a.md"]}
    assert len(p) == 0 and p.next_due() is None


def test_every_new_event_restarts_the_window_and_many_events_cost_one_look():
    p = Pending(quiet=0.05, cap=0.5)
    for i in range(10):
        p.add("vault", sync("a.md"), now=i * 0.01)
    assert not p.take(0.12)
    assert p.take(0.14).paths == {"vault": ["a.md"]}


def test_a_file_written_without_pause_is_still_taken_at_the_cap():
    p = Pending(quiet=0.05, cap=0.5)
    t = 0.0
    while t < 0.5:
        p.add("vault", sync("log.md"), now=t)
        t += 0.02
    assert p.take(0.5).paths == {"vault": ["log.md"]}


def test_a_closed_file_is_due_almost_at_once_unless_written_again():
    p = Pending(quiet=0.05, cap=0.5, settle=0.01)
    p.add("vault", sync("a.md", settled=True), now=0.0)
    assert p.next_due() == pytest.approx(0.01)
    p.add("vault", sync("a.md"), now=0.005)  # reopened and written: wait the full window again
    assert not p.take(0.02)
    assert p.take(0.055).paths == {"vault": ["a.md"]}


def test_only_due_paths_are_taken():
    p = Pending(quiet=0.05, cap=0.5, settle=0.01)
    p.add("vault", sync("old.md"), now=0.0)
    p.add("vault", sync("new.md"), now=0.04)
    p.add("vault", sync("closed.md", settled=True), now=0.045)
    batch = p.take(0.06)
    assert sorted(batch.paths["vault"]) == ["closed.md", "old.md"]
    assert len(p) == 1


def test_renames_keep_their_order_and_bring_their_ends():
    p = Pending()
    p.add("vault", Action("move", "a.md", "t.md"), now=0.0)
    p.add("vault", Action("move", "b.md", "a.md"), now=0.0)
    p.add("vault", Action("move", "t.md", "b.md"), now=0.0)
    p.add("vault", sync("b.md"), now=0.0)
    batch = p.take(0.0)  # renames are due at once
    assert [(m[1], m[2]) for m in batch.moves] == [("a.md", "t.md"), ("b.md", "a.md"), ("t.md", "b.md")]
    assert sorted(batch.paths["vault"]) == ["a.md", "b.md", "t.md"]
    assert len(p) == 0


def test_held_renames_go_back_to_the_head_of_the_line():
    p = Pending()
    p.add("vault", Action("move", "a.md", "b.md"), now=0.0)
    first = p.take(0.0).moves
    p.add("vault", Action("move", "b.md", "c.md"), now=0.01)
    p.hold(first, until=0.05)
    assert p.next_due() == pytest.approx(0.05)
    assert not p.take(0.02).moves  # the later rename may not overtake the held one
    assert [(m[1], m[2]) for m in p.take(0.05).moves] == [("a.md", "b.md"), ("b.md", "c.md")]


def test_an_end_of_a_held_rename_waits_for_it():
    """An edit of b.md while the swap a<->b waits is looked at with the swap, not before it,
    when the index still has the other card at b.md."""
    p = Pending(quiet=0.05)
    p.hold([("vault", "a.md", "b.md", False, 0.0), ("vault", "b.md", "a.md", False, 0.0)], until=0.5)
    p.add("vault", sync("b.md"), now=0.0)
    p.add("vault", sync("c.md"), now=0.0)
    assert p.take(0.1).paths == {"vault": ["c.md"]}
    assert p.next_due() == pytest.approx(0.5)  # nothing else due meanwhile: no busy wake-ups
    batch = p.take(0.5)
    assert len(batch.moves) == 2 and sorted(batch.paths["vault"]) == ["a.md", "b.md"]


def test_a_folder_reconcile_absorbs_the_paths_below_it():
    p = Pending(quiet=0.05)
    p.add("vault", Action("tree", "d"), now=0.0)
    p.add("vault", Action("tree", "d/e"), now=0.0)
    p.add("vault", sync("d/e/x.md"), now=0.0)
    p.add("vault", sync("other.md"), now=0.0)
    batch = p.take(0.05)
    assert batch.trees == {"vault": ["d"]}
    assert batch.paths == {"vault": ["other.md"]}


def test_everything_is_taken_on_stop():
    p = Pending()
    p.add("vault", sync("a.md"), now=0.0)
    p.add("notes", sync("b.md"), now=0.0)
    p.hold([("vault", "x.md", "y.md", False, 0.0)], until=10.0)
    batch = p.take(0.0, everything=True)
    assert batch.paths == {"vault": ["a.md", "x.md", "y.md"], "notes": ["b.md"]}
    assert len(batch.moves) == 1 and len(p) == 0


def test_a_burst_of_thousands_of_paths_is_taken_in_one_batch():
    p = Pending(quiet=0.05)
    for i in range(5000):
        p.add("vault", sync(f"n/{i}.md"), now=i * 1e-5)
    assert len(p.take(1.0).paths["vault"]) == 5000


def test_due_closed_paths_are_taken_even_behind_one_that_is_not_due():
    p = Pending(quiet=0.05, cap=0.5, settle=0.01)
    p.add("vault", sync("late.md", settled=True), now=0.02)
    p.add("vault", sync("early.md", settled=True), now=0.0)
    p.add("vault", sync("mid.md", settled=True), now=0.01)
    assert p.next_due() == pytest.approx(0.01)
    assert sorted(p.take(0.021).paths["vault"]) == ["early.md", "mid.md"]
    assert p.next_due() == pytest.approx(0.03)


def test_a_folder_is_checked_again_later():
    p = Pending(quiet=0.05)
    p.add_later("vault", "d", when=1.0)
    assert p.next_due() == 1.0 and len(p) == 1
    assert not p.take(0.5)
    assert p.take(1.0).trees == {"vault": ["d"]}


def test_a_path_is_looked_at_again_later_without_holding_up_the_rest():
    p = Pending(quiet=0.05)
    p.add_path_later("vault", "gone.md", when=0.5)
    p.add("vault", sync("a.md"), now=0.0)
    assert p.next_due() == pytest.approx(0.05)
    batch = p.take(0.05)
    assert batch.paths == {"vault": ["a.md"]} and batch.rechecks == 0
    assert p.take(0.5).paths == {"vault": ["gone.md"]}


def test_a_rename_not_taken_yet_explains_a_vanished_path():
    p = Pending()
    p.add("vault", Action("move_tree", "f2", "f4"), now=0.0)
    p.add("vault", Action("move", "a.md", "b.md"), now=0.0)
    assert p.renames_away("vault", "f2/g/note.md") and p.renames_away("vault", "a.md")
    assert not p.renames_away("vault", "f4/g/note.md") and not p.renames_away("notes", "a.md")
    p.take(0.0)
    assert not p.renames_away("vault", "f2/g/note.md")


def test_watchdogs_made_up_renames_below_a_renamed_folder_are_left_to_the_folders_rename():
    child = Event("moved", ROOT + "/f1/g/n.md", ROOT + "/f2/g/n.md", False, True)
    folder = Event("moved", ROOT + "/f1/g", ROOT + "/f2/g", True, True)
    assert actions(child, ROOT, wants) == [] and actions(folder, ROOT, wants) == []
    made_up_arrival = Event("created", ROOT + "/f2/g/n.md", "", False, True)
    assert actions(made_up_arrival, ROOT, wants) == [Action("sync", "f2/g/n.md")]


def test_expand_moves_follows_files_through_folder_renames():
    from memsync.watch.plan import expand_moves

    moves = [
        ("vault", "x.md", "a/x.md", False, 0.0),
        ("vault", "a", "b", True, 0.0),
        ("vault", "b/y.md", "z.md", False, 0.0),
    ]
    pairs, trees = expand_moves(moves, lambda: {"x.md", "a/y.md", "other.md"})
    assert pairs == [
        ("x.md", "a/x.md"), ("a/x.md", "b/x.md"), ("a/y.md", "b/y.md"), ("b/y.md", "z.md"),
    ]
    assert trees == ["a", "b"]


def test_clear_forgets_everything_pending_and_keeps_the_timings():
    p = Pending(quiet=0.05, cap=0.5)
    p.add("vault", Action("path", "a.md"), 0.0)
    p.add("vault", Action("move", "b.md", "c.md"), 0.0)
    p.add_later("vault", "d", 1.0)
    p.clear()
    assert len(p) == 0 and not p.take(10.0, everything=True) and (p.quiet, p.cap) == (0.05, 0.5)


def test_keep_sources_drops_what_a_removed_source_left_queued():
    p = Pending(quiet=0.05, cap=0.5)
    p.add("vault", Action("path", "a.md"), 0.0)
    p.add("gone", Action("path", "b.md"), 0.0)
    p.add("gone", Action("move", "c.md", "d.md"), 0.0)
    batch = p.take(10.0, everything=True)
    keep_sources(batch, {"vault": None})
    assert batch.paths == {"vault": ["a.md"]} and not batch.moves and not batch.trees


def test_expand_moves_swaps_two_folders_in_one_step():
    """renameat2(RENAME_EXCHANGE) on two folders: a->b then b->a, both still there. Their files
    trade places; a name both hold becomes the two renames a swap of two files is."""
    from memsync.watch.plan import expand_moves

    moves = [("vault", "a", "b", True, 0.0), ("vault", "b", "a", True, 0.0),
             ("vault", "a/only-b.md", "c.md", False, 0.0)]
    indexed = {"a/n.md", "a/only-a.md", "b/n.md", "b/only-b.md", "a/s/deep.md"}
    pairs, trees = expand_moves(moves, lambda: set(indexed), lambda x, y: True)
    assert pairs == [
        ("a/n.md", "b/n.md"), ("b/n.md", "a/n.md"), ("a/only-a.md", "b/only-a.md"),
        ("b/only-b.md", "a/only-b.md"), ("a/s/deep.md", "b/s/deep.md"), ("a/only-b.md", "c.md"),
    ]
    assert trees == ["a", "b"]
    # a->b, then b->a with b gone: the folder went and came back (applied in turn)
    pairs, _ = expand_moves(moves[:2], lambda: set(indexed), lambda x, y: False)
    assert pairs[:2] == [("a/n.md", "b/n.md"), ("a/only-a.md", "b/only-a.md")]


def test_a_burst_of_closed_files_costs_each_event_a_few_looks_not_one_per_file(monkeypatch):
    """`cp -r` of a folder of 20,000 notes: each file is written and closed, and each event asks
    for the next deadline. Scanning every closed file for it cost the watcher minutes of CPU."""
    looks = []
    due_at = Pending._due_at
    monkeypatch.setattr(Pending, "_due_at", lambda self, key: looks.append(key) or due_at(self, key))
    p = Pending(quiet=0.05, cap=0.5, settle=0.01)
    files = 2000
    for i in range(files):
        p.add("vault", sync(f"bulk/{i}.md", settled=True), now=i * 1e-6)
        p.next_due()
    assert len(looks) < 10 * files
    assert len(p.take(1.0).paths["vault"]) == files and p.next_due() is None


def test_a_closed_file_written_again_keeps_only_its_latest_deadline():
    p = Pending(quiet=0.05, cap=0.5, settle=0.01)
    p.add("vault", sync("a.md", settled=True), now=0.0)
    p.add("vault", sync("a.md", settled=True), now=0.03)
    assert p.next_due() == pytest.approx(0.04)
    assert not p.take(0.02)
    p.add("vault", sync("a.md"), now=0.035)  # open again: the quiet window, no settle deadline
    assert p.next_due() == pytest.approx(0.085)
    assert p.take(0.085).paths == {"vault": ["a.md"]} and p.next_due() is None
