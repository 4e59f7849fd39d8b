"""Card dates written in one time zone and read in another: a supersede is a moment, and the day
it counts from is the day it fell on where the search runs, not only the day written."""

from __future__ import annotations

import datetime as dt
import itertools
import os

import pytest

from memsync import dates
from memsync.store import searchsql
from memsync.store.index import Index

from .conftest import write_card
from .helpers import found, sync

KIRITIMATI = dt.timezone(dt.timedelta(hours=14))


@pytest.fixture
def moved_on(vault):
    """A fact superseded at 02:00 on 1 June 2020 at +14:00, which is noon on 31 May in UTC; the
    old card was written at 02:00 on 1 May at +14:00, noon on 30 April in UTC."""
    old = {"created": "2020-05-01T02:00:00+14:00", "invalid_at": "2020-06-01T02:00:00+14:00",
           "superseded_by": "new.md"}
    new = {"created": "2020-06-01T02:00:00+14:00", "supersedes": "old.md"}
    for name, meta in (("old", old), ("new", new)):
        write_card(vault, f"{name}.md", f"ECS host ({name})", f"The ECS host is behind the {name} gateway.", **meta)
    sync()


def test_as_of_a_day_in_utc_sees_a_supersede_stamped_the_next_day_at_plus_14(moved_on, zone):
    zone("UTC")
    assert found("ECS host", as_of="2020-05-31") == ["new.md"]
    assert found("ECS host", as_of="2020-05-30") == ["old.md"]
    assert found("ECS host", as_of="2020-04-30") == ["old.md"]  # written that day, in UTC
    assert found("ECS host", as_of="2020-04-29") == []


def test_where_the_day_written_is_the_day_here_nothing_moves(moved_on, zone):
    zone("Pacific/Kiritimati")
    assert found("ECS host", as_of="2020-05-31") == ["old.md"]
    assert found("ECS host", as_of="2020-06-01") == ["new.md"]
    assert found("ECS host", as_of="2020-04-30") == []


def test_show_says_to_look_back_to_a_day_that_holds_the_old_card(moved_on, zone, cli):
    zone("UTC")
    old = cli("search", "ECS host", "--as-of", "2020-05-30", "--json")[1]["hits"][0]
    text = cli("show", old["id"])[1]
    assert "search with --as-of 2020-05-30" in text


def test_a_card_superseded_a_minute_ago_far_east_is_hidden_far_west(vault, run_cli, monkeypatch):
    """Pago Pago (-11:00) is 25 hours behind Kiritimati (+14:00): the day written there is
    always a day still to come here, and the supersede has happened all the same."""
    moment = (dt.datetime.now(KIRITIMATI) - dt.timedelta(minutes=1)).replace(microsecond=0)
    write_card(vault, "old.md", "Deploy box", "Deploys run from the old ops box at the office.",
               created="2020-01-01", invalid_at=moment.isoformat(), superseded_by="new.md")
    write_card(vault, "new.md", "Deploy box 2", "Deploys run from the new ops box in the rack.",
               created=moment.isoformat(), supersedes="old.md")
    monkeypatch.setenv("TZ", "Pacific/Pago_Pago")
    assert run_cli("index")[0] == 0
    code, data, _err = run_cli("search", "deploy box", "--json")
    assert code == 0 and [h["path"] for h in data["hits"]] == ["new.md"]
    old = run_cli("search", "deploy box", "--include-invalid", "--json")[1]["hits"][1]
    assert old["path"] == "old.md" and old["valid"] is False
    shown = run_cli("show", old["id"], "--json")[1]
    assert shown["valid"] is False and shown["text"].startswith("⚠ This card stopped being valid")
    stats = run_cli("stats", "--json")[1]
    assert (stats["valid"], stats["invalid"]) == (1, 1)


STAMPS = ["2020-06-01", "2020-06-01T02:00:00+14:00", "2020-05-31T23:30:00-11:00",
          "2020-06-01T00:00:00+00:00", "2020-05-31T23:59:59.500000+00:00", "2020-06-01T10:00:00",
          "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00", "9999-12-31", "soon",
          "2020-02-30", "2020-02-29", "2021-02-29", "2020-13-01", "0000-01-01",
          "2020-02-30T10:00:00+08:00"]  # days that cannot be, and the leap day that can
DAYS = ["2020-05-30", "2020-05-31", "2020-06-01", "2020-06-02", "0001-01-01", "9999-12-31"]


@pytest.mark.parametrize("name", ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/Berlin"])
def test_the_sql_and_the_python_validity_agree(tmp_path, zone, name):
    zone(name)
    index = Index(tmp_path / "index.db")
    try:
        conn = index._conn
        for day, stamp in itertools.product(DAYS, STAMPS):
            sql_valid = conn.execute(
                f"WITH c(invalid_at) AS (SELECT ?) SELECT {searchsql.VALID_ON} FROM c",
                (stamp, *searchsql.on_day(day))).fetchone()[0]
            assert bool(sql_valid) is not dates.invalid_by(stamp, day), (name, day, stamp)
    finally:
        index.close()


def test_first_day_is_the_day_a_moment_falls_on_here(zone):
    zone("UTC")
    assert dates.first_day("2020-06-01T02:00:00+14:00") == "2020-05-31"
    assert dates.first_day("2020-05-31T23:30:00-11:00") == "2020-05-31"  # its own day is earlier
    assert dates.first_day("2020-06-01T10:00:00") == "2020-06-01"  # no zone: as written
    assert dates.first_day("0001-01-01T00:00:00+14:00") == "0001-01-01"
    assert os.environ["TZ"] == "UTC"


@pytest.mark.parametrize("name,moment,day", [
    ("America/Havana", "2026-03-08T04:30:00+00:00", "2026-03-07"),  # 23:30 there; the clock jumps 00:00 -> 01:00
    ("America/Santiago", "2026-09-06T03:30:00+00:00", "2026-09-05"),  # the same, in September
    ("Europe/Berlin", "2026-03-29T09:30:00+09:00", "2026-03-29"),  # 01:30 there, the night clocks go forward
])
def test_a_moment_counts_on_its_own_day_here_where_a_clock_change_skips_midnight(zone, name, moment, day):
    zone(name)
    assert dates.first_day(moment) == day
    assert dates.invalid_by(moment, day)
    before = (dt.date.fromisoformat(day) - dt.timedelta(days=1)).isoformat()
    assert not dates.invalid_by(moment, before)
