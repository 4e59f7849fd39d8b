"""The brief's "changed since your last brief" with card dates far from now: a year mistyped
ahead, year 1 and year 9999, in zones that push them out of Python's range; dates compared as
moments, in SQL as in Python."""

from __future__ import annotations

import sqlite3
import time

import pytest

from memsync import dates
from memsync.brief import ROWS
from memsync.store import brief as brief_store
from memsync.store import searchsql
from memsync.store.index import Index

from .conftest import write_card


def notes(data) -> dict[str, str]:
    """title -> what the brief says changed, over every section."""
    return {i["title"]: i["note"] for s in data["sections"] for i in s["items"] if i["note"]}


def next_second() -> None:
    """Marks and card dates are whole seconds: a change in the mark's second is told again."""
    time.sleep(1.01 - time.time() % 1)


def brief(run, where):
    code, data, err = run("brief", "--project", where, "--json")
    assert code == 0, err
    return data


def test_a_date_ahead_of_its_file_is_told_once_not_in_every_brief(vault, tmp_path, run_cli):
    card = write_card(vault, "typo.md", "Cache rule", "Pages are cached for five minutes.\n",
                      updated="2999-01-01T10:00:00+00:00")  # 2026 was meant
    assert run_cli("index")[0] == 0
    next_second()
    brief(run_cli, tmp_path)
    next_second()
    assert "Cache rule" not in notes(brief(run_cli, tmp_path))
    card.write_text(card.read_text().replace("five", "ten"))
    assert run_cli("index")[0] == 0
    next_second()
    assert notes(brief(run_cli, tmp_path))["Cache rule"] == "updated"  # the edit, once
    next_second()
    assert "Cache rule" not in notes(brief(run_cli, tmp_path))


def test_cards_of_year_1_and_9999_do_not_stop_the_brief(vault, tmp_path, run_cli, monkeypatch):
    """Read as local times, 0001-01-01 and 9999-12-31T23:59:59 fall out of datetime's range in
    any zone east of UTC or west of it: the brief ended in a traceback."""
    assert run_cli("index")[0] == 0
    for zone in ("Pacific/Pago_Pago", "Pacific/Kiritimati"):
        monkeypatch.setenv("TZ", zone)
        brief(run_cli, tmp_path)
        next_second()
        write_card(vault, "old.md", "Old card", "Written long ago, edited now.\n", created="0001-01-01",
                   updated=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        write_card(vault, "far.md", "Far card", f"Edited at the end of time, in {zone}.\n",
                   created="2020-01-01", updated="9999-12-31T23:59:59")
        assert run_cli("index")[0] == 0
        told = notes(brief(run_cli, tmp_path))
        assert told["Old card"] == "updated" and told["Far card"] == "updated", zone


def test_the_project_section_lists_the_latest_moment_first_whatever_its_zone(vault, tmp_path, run_cli):
    """10:00 at +14:00 is 20:00 the day before in UTC, so before 05:00 UTC that day: as text it
    sorted after it, and the older card led the project's list."""
    write_card(vault, "east.md", "East note", "Deploys go out from the east region first.\n",
               project="shop", updated="2026-11-06T10:00:00+14:00")
    write_card(vault, "utc.md", "UTC note", "Deploys are frozen on Fridays after noon.\n",
               project="shop", updated="2026-11-06T05:00:00+00:00")
    assert run_cli("index")[0] == 0
    (tmp_path / "shop").mkdir()
    data = brief(run_cli, tmp_path / "shop")
    (section,) = [s for s in data["sections"] if s["key"] == "project"]
    assert [i["title"] for i in section["items"]] == ["UTC note", "East note"]


def test_a_card_superseded_now_is_told_past_many_cards_created_since(vault, tmp_path, run_cli):
    """The index ordered the changed cards by created/updated text alone: an old card superseded
    now sorted after every card created since the last brief, and past ROWS of them was never
    told. Its supersede mark is a moment like the others now."""
    write_card(vault, "old.md", "Old fact", "The old fact held all through 2025.\n",
               created="2025-01-01", updated="2025-02-01")
    project = tmp_path / "code" / "other"
    (project / ".git").mkdir(parents=True)
    assert run_cli("index")[0] == 0
    brief(run_cli, project)
    next_second()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for n in range(ROWS["changed"] + 5):
        write_card(vault, f"new/{n}.md", f"New {n}", f"New note {n}.\n", created=stamp)
    assert run_cli("index")[0] == 0
    next_second()
    index = Index(tmp_path / "home" / "memsync.db")
    (old,) = [row["id"] for row in index.cards_titled("vault", "Old fact")]
    index.close()
    assert run_cli("supersede", old, "--title", "New fact", "--body", "The fact changed now, here it is.")[0] == 0
    assert notes(brief(run_cli, project))["Old fact"].startswith("superseded by")


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "America/Sao_Paulo"])
@pytest.mark.parametrize("text", ["2026-12-06", "2026-12-06T10:00:00", "2026-12-07T02:00:00+14:00",
                                  "2026-12-06T10:00:00.5-05:00", "9999-12-31T23:59:59", "2026-02-30",
                                  "soon"])
def test_a_dates_seconds_in_sql_are_those_of_its_python_twin(text, zone, monkeypatch):
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        conn = sqlite3.connect(":memory:")
        got = conn.execute(f"SELECT {searchsql.seconds('x')} FROM (SELECT ? AS x)", (text,)).fetchone()[0]
        conn.close()
        assert got == int(dates.seconds(text))
    finally:
        monkeypatch.undo()
        time.tzset()


def test_changed_cards_at_one_moment_are_cut_at_the_limit_by_id(vault, tmp_path, run_cli):
    """Ties at the limit go by id, the same on every run: the latest moment first, then the lower
    ids, and a card written in another zone at the same moment ties with them."""
    for n in range(6):
        write_card(vault, f"tie/{n}.md", f"Tie {n}", f"Written at one moment, {n}.\n",
                   created="2026-06-01T12:00:00+00:00")
    write_card(vault, "east.md", "East", "Written at that moment in Tokyo.\n",
               created="2026-06-01T21:00:00+09:00")
    write_card(vault, "later.md", "Later", "Written a minute after the others.\n",
               created="2026-06-01T12:01:00+00:00")
    write_card(vault, "before.md", "Before", "Written the day before the mark.\n",
               created="2026-05-30T12:00:00+00:00")
    assert run_cli("index")[0] == 0
    index = Index(tmp_path / "home" / "memsync.db")
    try:
        conn = index._conn
        since = int(dates.seconds("2026-06-01T00:00:00+00:00"))
        tied = sorted(r["id"] for r in conn.execute(
            "SELECT id FROM cards WHERE title LIKE 'Tie %' OR title = 'East'"))
        rows = brief_store.changed_cards(conn, "2026-05-30", since, 4)
        assert [r["title"] for r in rows][:1] == ["Later"]
        assert [r["id"] for r in rows[1:]] == tied[:3]
        everything = brief_store.changed_cards(conn, "2026-05-30", since, 50)
        assert {r["title"] for r in everything} == {"Later", "East", *(f"Tie {n}" for n in range(6))}
    finally:
        index.close()
