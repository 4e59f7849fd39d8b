"""`memsync watch` as a real process on a real vault: every edit a human, an editor, a sync tool
or git makes to notes and folders ends with the index holding exactly the live cards.

Each test keeps `live` (path -> the unique marker written into that card) and waits, with a
deadline, until the index holds exactly those paths with exactly those markers; markers of cards
that were removed must not be found by search (tests/watching.py).
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from memsync import api

from .watching import (
    atomic_put,
    card_id,
    cfg,
    converge,
    mark,
    put,
    vim_put,
)

# --- everyday edits -----------------------------------------------------------------------------


def test_create_modify_delete(vault, live_watcher):
    a, b = mark(), mark()
    put(vault, "a.md", a)
    converge({"a.md": a})
    put(vault, "a.md", b)
    converge({"a.md": b}, gone={a})
    (vault / "a.md").unlink()
    converge({}, gone={b})


def test_vim_style_save(vault, live_watcher):
    first, second = mark(), mark()
    put(vault, "notes/v.md", first)
    converge({"notes/v.md": first})
    before = card_id("notes/v.md")
    vim_put(vault, "notes/v.md", second)
    converge({"notes/v.md": second}, gone={first})
    assert card_id("notes/v.md") == before
    assert not (vault / "notes/v.md~").exists()


@pytest.mark.parametrize("temp", [".v.md.tmp123", ".syncthing.v.md.tmp", "v.md.tmp", "v.md___jb_tmp___"])
def test_temp_file_and_rename_save(vault, live_watcher, temp):
    first, second = mark(), mark()
    put(vault, "v.md", first)
    converge({"v.md": first})
    atomic_put(vault, "v.md", second, temp)
    converge({"v.md": second}, gone={first})


def test_rename_keeps_id_and_read_stats(vault, live_watcher):
    m = mark()
    put(vault, "old.md", m)
    converge({"old.md": m})
    before = card_id("old.md")
    api.show(cfg(), before)  # one recorded read
    os.makedirs(vault / "elsewhere")
    os.rename(vault / "old.md", vault / "elsewhere/new.md")
    converge({"elsewhere/new.md": m})
    assert card_id("elsewhere/new.md") == before
    with api.open_index(cfg()) as index:
        assert index.read_stats(before)[0] == 1


def test_case_only_rename(vault, live_watcher):
    m = mark()
    put(vault, "note.md", m)
    converge({"note.md": m})
    before = card_id("note.md")
    os.rename(vault / "note.md", vault / "Note.md")
    converge({"Note.md": m})
    assert card_id("Note.md") == before


def test_trash_and_back_keeps_id_and_stats(vault, live_watcher):
    m, other = mark(), mark()
    put(vault, "d/t.md", m)
    put(vault, "keep.md", other)
    converge({"d/t.md": m, "keep.md": other})
    before = card_id("d/t.md")
    api.show(cfg(), before)
    (vault / ".trash/d").mkdir(parents=True)
    os.rename(vault / "d/t.md", vault / ".trash/d/t.md")
    converge({"keep.md": other}, gone={m})
    os.rename(vault / ".trash/d/t.md", vault / "d/t.md")
    converge({"d/t.md": m, "keep.md": other})
    assert card_id("d/t.md") == before
    with api.open_index(cfg()) as index:
        assert index.read_stats(before)[0] == 1


def test_create_and_delete_inside_the_debounce_window(vault, live_watcher):
    keep, brief = mark(), mark()
    put(vault, "keep.md", keep)
    put(vault, "brief.md", brief)
    (vault / "brief.md").unlink()
    converge({"keep.md": keep}, gone={brief})


def test_twenty_rapid_saves_last_content_wins(vault, live_watcher):
    markers = [mark() for _ in range(20)]
    for m in markers:
        put(vault, "busy.md", m)
    converge({"busy.md": markers[-1]}, gone=set(markers[:-1]))


# --- folders ------------------------------------------------------------------------------------


def test_directory_rename_with_fifty_cards_keeps_ids(vault, live_watcher):
    live = {f"proj/sub{i % 3}/c{i}.md": mark() for i in range(50)}
    for rel, m in live.items():
        put(vault, rel, m)
    converge(live)
    ids = {rel: card_id(rel) for rel in live}
    os.rename(vault / "proj", vault / "archive")
    moved = {"archive/" + rel[len("proj/"):]: m for rel, m in live.items()}
    converge(moved)
    assert {rel: card_id("archive/" + rel[len("proj/"):]) for rel in live} == ids


def test_folder_moved_in_from_outside_and_out_again(vault, tmp_path, live_watcher):
    outside = tmp_path / "outside" / "box"
    stay = mark()
    put(vault, "stay.md", stay)
    inside = {f"c{i}.md": mark() for i in range(10)} | {"deep/er/x.md": mark()}
    for rel, m in inside.items():
        put(outside, rel, m)
    converge({"stay.md": stay})
    shutil.move(str(outside), str(vault / "box"))
    converge({"stay.md": stay} | {f"box/{rel}": m for rel, m in inside.items()})
    shutil.move(str(vault / "box"), str(tmp_path / "outside" / "box"))
    converge({"stay.md": stay}, gone=set(inside.values()))


def test_a_note_replaced_by_a_folder_of_its_name_leaves_no_row(vault, live_watcher):
    """The delete and the new folder land in one batch: the folder's reconcile looks below it,
    so the file of its own name must still be looked at."""
    note, child = mark(), mark()
    put(vault, "fd/Topic.md", note)
    converge({"fd/Topic.md": note})
    time.sleep(1.5)  # the watcher idle again: the next events start a batch of their own
    os.remove(vault / "fd/Topic.md")
    (vault / "fd/Topic.md").mkdir()
    put(vault, "fd/Topic.md/child.md", child)
    converge({"fd/Topic.md/child.md": child}, gone={note})


def test_a_vault_folder_renamed_away_and_back_loses_no_card(vault, live_watcher, tmp_path):
    """Obsidian's "rename vault": the watches follow the folder, so an edit made meanwhile is
    reported under the old name, where nothing is. It must wait, not drop the card."""
    a, b, edited = mark(), mark(), mark()
    put(vault, "notes/a.md", a)
    put(vault, "b.md", b)
    converge({"notes/a.md": a, "b.md": b})
    away = tmp_path / "renamed"
    os.rename(vault, away)
    put(away, "notes/a.md", edited)
    time.sleep(1.5)  # the edit's batch comes due while the folder is away
    os.rename(away, vault)
    converge({"notes/a.md": edited, "b.md": b}, gone={a})
    live_watcher.wait_for("has moved or gone; its changes wait until it is back")


def test_files_written_into_a_brand_new_folder_tree(vault, live_watcher):
    # Files created before watchdog has put a watch on their new folder are found by the
    # reconcile of that folder, not lost.
    live = {}
    for i in range(20):
        rel = f"n{i}/n2/n3/f.md"
        live[rel] = mark()
        put(vault, rel, live[rel])
    converge(live)


def test_git_checkout_like_burst(vault, live_watcher):
    live = {f"notes/r{i}.md": mark() for i in range(500)}
    doomed = {f"notes/d{i}.md": mark() for i in range(200)}
    for rel, m in {**live, **doomed}.items():
        put(vault, rel, m)
    converge({**live, **doomed})
    old = set(live.values()) | set(doomed.values())
    # git: unlink + create for every changed file, unlink for deleted ones, create new ones
    for rel in live:
        (vault / rel).unlink()
        live[rel] = mark()
        put(vault, rel, live[rel])
    for rel in doomed:
        (vault / rel).unlink()
    for i in range(200):
        live[f"notes/new/a{i}.md"] = mark()
        put(vault, f"notes/new/a{i}.md", live[f"notes/new/a{i}.md"])
    converge(live, gone=old)
