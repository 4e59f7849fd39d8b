"""The brief's "Changed since your last brief": each agent's own mark, updates and supersedes,
edits of other agents' files told by the file's time (once, and not for a touch or a clock
ahead), and the queries that find the changed files through indexes, newest change first."""

from __future__ import annotations

import json
import os
import time

from memsync.store.index import Index

from . import briefing
from .briefing import brief, titles

two_projects, brief_home = briefing.two_projects, briefing.brief_home  # fixtures


def test_changed_since_the_last_brief_after_an_update_and_a_supersede(brief_home, cli):
    ids = brief_home["ids"]
    first = brief(cli, brief_home["shop"])
    assert first["since"] is None and titles(first, "changed") == []
    marks = json.loads((brief_home["home"].parent / "home" / "brief.json").read_text())["last_brief"]
    first_mark = marks[f"cli:{brief_home['shop']}"]
    assert cli("update", ids["Shop cache"], "--body", "Pages are cached in redis for five minutes now.")[0] == 0
    assert cli("supersede", ids["Git habits"], "--title", "Git habits 2",
               "--body", "Merge main into a branch with a merge commit now.")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    data = brief(cli, brief_home["shop"])
    assert data["since"] == first_mark
    project = {i["title"]: i for s in data["sections"] if s["key"] == "project" for i in s["items"]}
    assert project["Shop cache"]["note"] == "updated"  # a project card: shown in its section
    assert project["Shop cache"]["line"] == "Pages are cached in redis for five minutes now."
    changed = {i["title"]: i for s in data["sections"] if s["key"] == "changed" for i in s["items"]}
    new_id = changed["Git habits 2"]["id"]
    assert changed["Git habits 2"]["note"] == f"new, supersedes {ids['Git habits']}"
    assert changed["Git habits"]["note"] == f"superseded by {new_id} Git habits 2"
    assert changed["Git habits"]["line"] == ""
    assert "## Changed since your last brief, " in data["text"]
    again = brief(cli, brief_home["shop"])  # nothing changed since the brief just made
    assert titles(again, "changed") == [] and "(updated)" not in again["text"]


def test_each_agent_has_its_own_last_brief(brief_home, cli):
    ids = brief_home["ids"]
    brief(cli, brief_home["shop"])
    cli("update", ids["Shop cache"], "--body", "Pages are cached in redis for an hour at night.")
    cli("brief", "--project", brief_home["shop"], "--hook", "codex", stdin="{}")
    assert "(updated)" in brief(cli, brief_home["shop"])["text"]  # the CLI's own mark is older


def test_a_secret_in_the_title_of_a_newer_card_is_not_shown_beside_the_old_one(brief_home, cli):
    """The old card is shown (superseded by ...) while the new one is held back: the note names
    the new card by its id alone."""
    ids = brief_home["ids"]
    brief(cli, brief_home["shop"])
    key = "AKIA" + "IOSFODNN7" + "EXAMPLE"
    code, new = cli("supersede", ids["Shop cache"], "--title", f"Shop cache key {key}",
                    "--body", "The cache now lives in the managed redis of the shop.", "--json")
    assert code == 0
    time.sleep(1.01 - time.time() % 1)
    data = brief(cli, brief_home["shop"])
    assert key not in data["text"] and key not in json.dumps(data)
    notes = [i["note"] for s in data["sections"] for i in s["items"] if i["title"] == "Shop cache"]
    assert notes and all(n == f"superseded by {new['id']}" for n in notes)


def test_a_change_written_in_another_time_zone_is_still_told(brief_home, run_cli, monkeypatch):
    """The mark is written 14 hours ahead of UTC, the update 11 hours behind, a moment later:
    25 hours apart on the clock, so always on an earlier day (up to two)."""
    ids, shop = brief_home["ids"], brief_home["shop"]
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    assert run_cli("brief", "--project", shop)[0] == 0
    time.sleep(1.01 - time.time() % 1)
    monkeypatch.setenv("TZ", "Pacific/Pago_Pago")
    assert run_cli("update", ids["Shop cache"], "--body", "Pages are cached in redis for an hour now.")[0] == 0
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    code, data, _err = run_cli("brief", "--project", shop, "--json")
    project = {i["title"]: i for s in data["sections"] if s["key"] == "project" for i in s["items"]}
    assert code == 0 and project["Shop cache"]["note"] == "updated"


def test_an_edit_of_another_agents_file_is_told_by_the_files_time(brief_home, cli, tmp_path):
    # CLAUDE.md, AGENTS.md and Claude Code's memories carry no `updated` date of their own
    gemini = tmp_path / "code" / "GEMINI.md"
    gemini.write_text("## Gemini Added Memories\n- the linter is ruff-9\n")
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    assert brief(cli, brief_home["shop"])["since"] is None
    time.sleep(1.01 - time.time() % 1)
    agents = brief_home["shop"] / "AGENTS.md"
    drafts = next(brief_home["home"].glob(".claude/projects/*/memory/drafts.md"))
    agents.write_text("# Shop agents\n\nRun `make check` and `make lint` before every commit.\n")
    drafts.write_text("Drafts live in the drafts branch of the blog, published on Fridays.\n")
    gemini.write_text("## Gemini Added Memories\n- the linter is ruff-9\n- the formatter is black-3\n")
    assert cli("index")[0] == 0
    data = brief(cli, brief_home["shop"])
    notes = {i["title"]: i["note"] for s in data["sections"] for i in s["items"]}
    assert notes["AGENTS.md (shop)"] == "changed"  # a project card: in the project section
    assert notes["drafts"] == "changed"
    # of a file of many cards (the Gemini bullets) the time does not say which changed: the file
    # is told, with its cards
    assert sorted(titles(data, "changed")) == ["code:GEMINI.md", "drafts"]
    assert notes["code:GEMINI.md"] == "changed: one or more of its 2 cards"


def test_a_file_dated_in_the_future_is_told_changed_once_not_at_every_brief(brief_home, cli, vault):
    # A clock set wrong or an archive from a machine ahead: the file's time is always after the
    # last brief, but the file changed once, when it was written.
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    brief(cli, brief_home["shop"])
    time.sleep(1.01 - time.time() % 1)
    ahead = vault / "03-Knowledge/clock-ahead.md"
    ahead.write_text("A note written on a laptop whose clock ran years ahead, about rsync flags.\n")
    os.utime(ahead, (time.time() + 3 * 365 * 86400,) * 2)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    assert titles(brief(cli, brief_home["shop"]), "changed") == ["clock-ahead"]
    time.sleep(1.01 - time.time() % 1)
    assert cli("index")[0] == 0  # read again (its time is after the read): still no change
    assert "clock-ahead" not in titles(brief(cli, brief_home["shop"]), "changed")


def test_a_file_touched_with_its_content_as_it_was_is_no_change(brief_home, cli, vault):
    # `touch`, a `git checkout` to a branch and back, a sync that rewrites a file unchanged:
    # the file's time moves, its content (all the brief shows of it) does not.
    note = vault / "03-Knowledge/untouched.md"
    note.write_text("A note without dates, about the staging database on port 5433.\n")
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    brief(cli, brief_home["shop"])
    time.sleep(1.01 - time.time() % 1)
    os.utime(note)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    assert "untouched" not in titles(brief(cli, brief_home["shop"]), "changed")
    note.write_text(note.read_text() + "It moved to port 5434.\n")  # a real edit still is one
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    assert titles(brief(cli, brief_home["shop"]), "changed") == ["untouched"]


def query_plan(tmp_path, sql: str) -> str:
    """SQLite's plan for a brief query over the newest FILES_LOOKED changes, in a new index."""
    from memsync.store import brief as store

    index = Index(tmp_path / "plan.db")
    try:
        return " | ".join(row[3] for row in index._conn.execute(
            "EXPLAIN QUERY PLAN " + sql, (0, 20, store.FILES_LOOKED)))
    finally:
        index.close()


def test_the_changed_files_are_found_from_the_newest_file_down(tmp_path):
    # Most notes of a vault carry no `updated` date: a plan that began from those cards read
    # every one of them on each brief (160-200 ms at 100,000 cards).
    from memsync.store import brief as store

    plan = query_plan(tmp_path, store.CHANGED_FILES)
    assert "SEARCH file_changes USING COVERING INDEX file_changes_by_time" in plan, plan
    assert "cards_updated" not in plan and "SCAN c" not in plan, plan


def test_the_changed_files_of_many_cards_are_found_through_indexes_only(tmp_path):
    # A memory graph holds up to some 200,000 entities: its cards are counted and named through
    # cards_file, never read row by row, and only the newest changes are looked through.
    from memsync.store import brief as store

    plan = query_plan(tmp_path, store.CHANGED_MANY)
    assert "SEARCH file_changes USING COVERING INDEX file_changes_by_time" in plan, plan
    assert "SEARCH c USING COVERING INDEX cards_file" in plan and "SCAN c" not in plan, plan


def test_only_the_newest_content_changes_are_looked_through_for_undated_cards(tmp_path, monkeypatch):
    # When every file changed since the last brief (a checkout) and the cards carry dates, a
    # look at every change for the few without one read every card (117 ms at 100,000 cards).
    from memsync.store import brief as store

    index = Index(tmp_path / "bound.db")
    try:
        conn = store.connection(index)
        with conn:
            for n in range(4):  # n0 the oldest change and the one card without an `updated` date
                conn.execute("INSERT INTO file_changes VALUES ('vault', ?, ?)", (f"n{n}.md", 100 + n))
                conn.execute("INSERT INTO cards (id, source, path, file, kind, title, body, updated) "
                             "VALUES (?, 'vault', ?, ?, 'note', ?, 'text', ?)",
                             (n + 1, f"n{n}.md", f"n{n}.md", f"n{n}", None if n == 0 else "2026-01-01"))
        monkeypatch.setattr(store, "FILES_LOOKED", 4)
        assert [r["path"] for r in store.changed_files(conn, 0, 20)] == ["n0.md"]
        monkeypatch.setattr(store, "FILES_LOOKED", 3)  # the three newest changes hold no such card
        assert store.changed_files(conn, 0, 20) == []
    finally:
        index.close()
