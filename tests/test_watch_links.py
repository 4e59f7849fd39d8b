"""Links to notes that come into a watched folder while the watcher runs resolve in the batch
that brings the note, not at the next full rescan; a link to a note of another source resolves
neither then nor in a rebuild (links resolve within the linking note's source)."""

from __future__ import annotations

import os

from memsync import api

from .conftest import write_card
from .watching import cfg, source_view, wait_until


def inlinks() -> dict[str, int]:
    with api.open_index(cfg()) as index:
        return dict(index._conn.execute("SELECT source || ':' || path, inlinks FROM cards"))


def test_a_link_resolves_in_the_batch_that_brings_its_note(vault, tmp_path, live_watcher):
    outside = tmp_path / "outside"
    write_card(outside, "Moved In.md", "Moved in", "a note from outside the vault")
    write_card(outside, "folder/Deep.md", "Deep", "a note in a folder from outside")
    write_card(vault, "a.md", "A", "see [[Moved In]], [[Deep]] and [[Later]]")
    wait_until(lambda: "vault:a.md" in inlinks(), "the linking note is indexed")
    os.rename(outside / "Moved In.md", vault / "Moved In.md")  # a note moved in
    os.rename(outside / "folder", vault / "folder")  # a folder moved in
    write_card(vault, "new/Later.md", "Later", "a note in a folder made while watching")
    want = {"vault:a.md": 0, "vault:Moved In.md": 1, "vault:folder/Deep.md": 1, "vault:new/Later.md": 1}
    wait_until(lambda: inlinks() == want, f"every link resolves: {want}")
    assert "reconciling vault" not in live_watcher.stderr()  # by the events, not a rescan


def test_a_link_to_a_note_of_another_source_resolves_in_neither(vault, tmp_path, live_watcher, run_cli):
    extra = tmp_path / "extra"
    write_card(extra, "Elsewhere.md", "Elsewhere", "a note of another source; back to [[a]]")
    write_card(vault, "a.md", "A", "see [[Elsewhere]]")
    assert run_cli("sources", "--add", "extra", "--path", extra)[0] == 0
    wait_until(lambda: "Elsewhere.md" in source_view("extra"), "the new source is read")
    wait_until(lambda: "vault:a.md" in inlinks(), "the linking note is indexed")
    assert inlinks() == {"vault:a.md": 0, "extra:Elsewhere.md": 0}
    assert live_watcher.stop() == 0
    assert run_cli("index", "--rebuild")[0] == 0
    assert inlinks() == {"vault:a.md": 0, "extra:Elsewhere.md": 0}  # a rebuild agrees
