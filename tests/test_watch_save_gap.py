"""A reconcile that runs in the moment an editor's save has taken the file away (delete, or
rename to a backup, then the new file renamed in): the card is dropped and comes back, and keeps
what is keyed to its id (DESIGN §12: its use counts, feedback and retrieval log rows) and its
links both ways."""

from __future__ import annotations

import os

from memsync import api
from memsync.search.lexical import Query

from .conftest import write_card
from .watching import card_id, cfg, wait_until


def kept(card: int) -> dict:
    """What is keyed to the card's id, and its links, read through the library."""
    with api.open_index(cfg()) as index:
        def rows(sql: str, *params) -> list[tuple]:
            return [tuple(row) for row in index._conn.execute(sql, params)]

        return {
            "stats": rows("SELECT * FROM card_stats WHERE id = ?", card),
            "feedback": rows("SELECT id, at, helpful, query FROM feedback WHERE id = ?", card),
            "logged": rows("SELECT count(*) FROM retrieval_log, json_each(hits) h WHERE h.value ->> 0 = ?", card),
            "links": rows("SELECT path, link_text, inlinks FROM cards ORDER BY path"),
        }


HERON = "The grey heron nests by the weir; see [[otter]]."


def used_and_linked(vault, run_cli) -> tuple[int, dict]:
    """heron.md, linking otter.md and linked from it, found by a search, opened and called
    helpful: its id and what is keyed to it."""
    write_card(vault, "heron.md", "Heron", HERON)
    write_card(vault, "otter.md", "Otter", "Otters fish below the weir. [[heron|the wader]]")
    assert run_cli("index")[0] == 0
    card = card_id("heron.md")
    code, found, _ = run_cli("search", "heron weir", "--json")
    assert code == 0 and card in [hit["id"] for hit in found["hits"]]
    assert run_cli("show", card)[0] == 0
    assert run_cli("feedback", card, "--helpful", "--query", "heron weir")[0] == 0
    before = kept(card)
    assert before["stats"] and before["feedback"] and before["logged"] == [(1,)]
    assert ("heron.md", "the wader", 1) in before["links"] and ("otter.md", "otter", 1) in before["links"]
    return card, before


def dropped(card: int) -> bool:
    return "heron.md" not in {path for path, *_ in kept(card)["links"]}


def saved_back(vault) -> None:
    """The editor's second step: the new file renamed into place, the backup removed."""
    write_card(vault, ".heron.md.tmp", "Heron", HERON)
    os.rename(vault / ".heron.md.tmp", vault / "heron.md")
    os.unlink(vault / "heron.md~")


def comes_back_whole(card: int, before: dict) -> None:
    wait_until(lambda: kept(card) == before, "the card is back as it was")
    assert card_id("heron.md") == card
    hits = api.search(cfg(), Query("wader"))["hits"]
    assert (hits[0]["path"], hits[0]["id"], hits[0]["inlinks"]) == ("heron.md", card, 1)  # the anchor text's


def test_the_watchers_reconcile_in_the_gap_of_a_save_loses_nothing(vault, run_cli, watcher):
    card, before = used_and_linked(vault, run_cli)
    os.rename(vault / "heron.md", vault / "heron.md~")  # the editor's first step
    running = watcher()  # its reconcile at start (no event: it was not running) finds it gone
    wait_until(lambda: dropped(card), "the card is dropped")
    saved_back(vault)
    comes_back_whole(card, before)
    assert running.stop() == 0


def test_a_reconcile_beside_a_running_watcher_in_the_gap_of_a_save_loses_nothing(vault, run_cli, watcher):
    card, before = used_and_linked(vault, run_cli)
    running = watcher()
    with running.paused():  # the watcher sees the save's events only after the reconcile
        os.rename(vault / "heron.md", vault / "heron.md~")
        assert run_cli("index")[0] == 0
        assert dropped(card)
        saved_back(vault)
    comes_back_whole(card, before)
    assert running.stop() == 0
