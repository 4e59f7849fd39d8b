"""`consolidate --apply --plan`: the plan saved for review is the plan carried out."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from .conftest import write_card
from .test_lifecycle_consolidate import _vault, vault_bytes

TWIN = "The staging database lives on db-stage-2, port 5433; connect as app_ro from the bastion only."


def _saved(cli) -> str:
    code, shown = cli("consolidate", "--save", "--json")
    assert code == 0 and shown["merges"] and shown["moves"]
    return Path(shown["saved"]).name


def test_a_saved_plan_is_applied_as_saved_not_planned_anew(cli, vault, home):
    _vault(vault, cli, home)
    name = _saved(cli)
    shown = json.loads((home / "consolidate" / name).read_text())
    write_card(vault, "03-Knowledge/db.md", "staging db", TWIN)  # duplicates written after the review
    write_card(vault, "03-Knowledge/db-copy.md", "staging db copy", TWIN + " Ask ops for the key.")
    cli("index")
    twins = {p: (vault / p).read_bytes() for p in ("03-Knowledge/db.md", "03-Knowledge/db-copy.md")}
    code, done = cli("consolidate", "--apply", "--plan", name, "--json")
    assert code == 0 and done["run"] and done["merges"] == shown["merges"] and done["moves"] == shown["moves"]
    assert {p: (vault / p).read_bytes() for p in twins} == twins  # not in the reviewed plan: untouched
    after = vault_bytes(vault)
    # A merge writes the time it is carried out where the saved plan wrote the time of its
    # making (`updated`, `invalid_at`): the same second, or a later one when the clock ticked.
    written = set()
    for item in shown["changes"]:
        if item["after"] is not None:
            text = after[item["to"]].decode()
            written |= set(re.findall(r"^(?:updated|invalid_at): (.+)$", text, flags=re.M))
            applied_at = _stamp_in(text, item["after"], shown["stamped"])
            assert text == item["after"].replace(shown["stamped"], applied_at)
    assert len(written) <= 1 and all(when >= shown["stamped"] for when in written)


def _stamp_in(text: str, saved: str, stamped: str) -> str:
    """The time `text` holds on the line where `saved` held the plan's making, `stamped`."""
    for line, saved_line in zip(text.splitlines(), saved.splitlines()):
        if stamped in saved_line:
            return line.partition(": ")[2]
    return stamped


def test_the_steps_whose_files_changed_since_are_left_out_and_said(cli, vault, home):
    _vault(vault, cli, home)
    name = _saved(cli)
    edited = vault / "03-Knowledge/deploy.md"
    edited.write_text(edited.read_text() + "\nA line written after the review.\n")
    by_hand = edited.read_bytes()
    code, done = cli("consolidate", "--apply", "--plan", name, "--json")
    assert code == 0 and edited.read_bytes() == by_hand
    assert all("03-Knowledge/deploy" not in m["path"] for m in done["merges"]) and len(done["merges"]) == 1
    left = [s for s in done["skipped"] if "left out" in s["why"]]
    assert [s["why"].split(" was edited")[0] for s in left] == ["03-Knowledge/deploy.md"]
    assert (vault / "08-Mistakes/oops.md").exists()  # the steps it does not touch are carried out
    code, text = cli("consolidate", "--apply", "--plan", name)
    assert code == 0 and "is already as the plan leaves it" in text
    assert "carried out" not in text and "was left to carry out; nothing changed" in text


def test_a_plain_apply_says_when_its_plan_is_not_the_saved_one(cli, vault, home):
    _vault(vault, cli, home)
    name = _saved(cli)
    write_card(vault, "03-Knowledge/db.md", "staging db", TWIN)
    write_card(vault, "03-Knowledge/db-copy.md", "staging db copy", TWIN + " Ask ops for the key.")
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["differs_from"].endswith(name)


def test_a_plain_apply_of_the_saved_plan_says_nothing_more(cli, vault, home):
    _vault(vault, cli, home)
    _saved(cli)
    time.sleep(1.01 - time.time() % 1)  # its merges write a later time than the saved plan's
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["run"] and "differs_from" not in done


def test_a_plan_saved_without_its_file_contents_is_refused(cli, vault, home):
    _vault(vault, cli, home)
    name = _saved(cli)
    _edit_saved(home, name, lambda plan: plan.pop("changes"))
    before = vault_bytes(vault)
    code, out = cli("consolidate", "--apply", "--plan", name, "--json")
    assert code == 1 and "--save" in out["error"]["message"] and vault_bytes(vault) == before
    assert cli("consolidate", "--plan", name, "--json")[0] == 2


def _refused(cli, vault, name) -> str:
    """Apply the saved plan `name`: it is refused and the vault left as it was; the message."""
    before = vault_bytes(vault)
    code, out = cli("consolidate", "--apply", "--plan", name, "--json")
    assert code == 1 and vault_bytes(vault) == before, out
    return out["error"]["message"]


def _edit_saved(home, name, edit) -> None:
    """Change the saved plan `name` by hand: `edit` is given its JSON to change in place."""
    path = home / "consolidate" / name
    plan = json.loads(path.read_text())
    edit(plan)
    path.write_text(json.dumps(plan))


def _edit_move(home, name, **fields) -> None:
    def edit(plan: dict) -> None:
        for item in plan["changes"]:
            if item["to"] != item["rel"]:
                item.update(fields)
                for key in [k for k, v in fields.items() if v is None]:
                    del item[key]

    _edit_saved(home, name, edit)


@pytest.mark.parametrize("fields", [{"to": "../outside.md"}, {"to": ".obsidian/oops.md"},
                                    {"to": ".trash/oops.md"}, {"to": "08-Mistakes/oops.txt"},
                                    {"rel": "/etc/passwd"}, {"to": None}, {"after": 3}])
def test_a_plan_edited_by_hand_to_leave_the_cards_is_refused_whole(cli, vault, home, fields):
    _vault(vault, cli, home)
    name = _saved(cli)
    _edit_move(home, name, **fields)
    message = _refused(cli, vault, name)
    assert "is damaged" in message and "--save" in message
    assert not (vault / ".obsidian").exists()
    assert not (vault / "08-Mistakes").exists()
    code, done = cli("consolidate", "--apply", "--json")  # a plan made now is not held up by it
    assert code == 0 and done["run"] and "differs_from" not in done


def test_a_plan_edited_to_end_two_files_at_one_name_is_refused_whole(cli, vault, home):
    _vault(vault, cli, home)
    name = _saved(cli)
    plan = json.loads((home / "consolidate" / name).read_text())
    move = next(item for item in plan["changes"] if item["to"] != item["rel"])

    def edit(plan: dict) -> None:
        next(item for item in plan["changes"] if item["rel"].endswith("backup.md"))["to"] = move["to"]

    _edit_saved(home, name, edit)
    assert f"two of its file changes name {move['to']}" in _refused(cli, vault, name)


def _drop_a_merged_cards_change(plan: dict) -> None:
    merged = plan["merges"][0]["merged"][0]["path"]
    plan["changes"] = [item for item in plan["changes"] if item["rel"] != merged]


def _keep_a_change_without_its_step(plan: dict) -> None:
    plan["merges"] = []


def _move_a_merged_keeper(plan: dict) -> None:
    keeper = next(item for item in plan["changes"] if item["rel"] == plan["merges"][0]["path"])
    keeper["to"] = "03-Knowledge/elsewhere.md"


def _end_at_another_file_by_a_double_slash(plan: dict) -> None:
    move = next(item for item in plan["changes"] if item["to"] != item["rel"])
    other = next(item for item in plan["changes"] if item["to"] == item["rel"])
    move["to"] = other["rel"].replace("/", "//", 1)
    plan["moves"][0]["to"] = move["to"]


@pytest.mark.parametrize("edit", [_drop_a_merged_cards_change, _keep_a_change_without_its_step,
                                  _move_a_merged_keeper, _end_at_another_file_by_a_double_slash])
def test_a_plan_whose_steps_and_file_changes_part_ways_is_refused_whole(cli, vault, home, edit):
    """A merge carried out without one of its files' changes left the keeper saying it
    supersedes a card that was never marked superseded."""
    _vault(vault, cli, home)
    name = _saved(cli)
    _edit_saved(home, name, edit)
    message = _refused(cli, vault, name)
    assert "is damaged" in message and "--save" in message


def test_a_plan_applied_later_writes_the_time_of_the_apply_not_of_the_review(cli, vault, home):
    # Saved by the daily timer, applied hours later: until then the merged cards were the
    # current fact, and a brief had in between must still hear of the merge.
    from memsync import dates, notes

    _vault(vault, cli, home)
    name = _saved(cli)
    time.sleep(1.01 - time.time() % 1)
    applied_from = dates.now_iso()
    code, done = cli("consolidate", "--apply", "--plan", name, "--json")
    assert code == 0 and done["run"] and len(done["merges"]) == 2
    for merge in done["merges"]:
        keeper = notes.parse((vault / merge["path"]).read_bytes(), merge["path"])
        assert keeper.updated and keeper.updated >= applied_from
        for merged in merge["merged"]:
            card = notes.parse((vault / merged["path"]).read_bytes(), merged["path"])
            assert card.invalid_at == keeper.updated
    time.sleep(1.01 - time.time() % 1)
    code, text = cli("consolidate", "--apply", "--plan", name)  # applied, at another time: done
    assert code == 0 and "was edited" not in text and text.count("is already as the plan leaves it") == 4
    assert cli("consolidate", "--undo", done["run"])[0] == 0  # and undone byte for byte


def test_a_second_save_the_same_day_keeps_the_first_and_each_can_be_applied(cli, vault, home):
    _vault(vault, cli, home)
    first = _saved(cli)
    first_bytes = (home / "consolidate" / first).read_bytes()
    write_card(vault, "03-Knowledge/db.md", "staging db", TWIN)  # a second review's plan differs
    write_card(vault, "03-Knowledge/db-copy.md", "staging db copy", TWIN + " Ask ops for the key.")
    cli("index")
    code, shown = cli("consolidate", "--save", "--json")
    second = Path(shown["saved"]).name
    assert code == 0 and second == first.replace(".json", "-2.json") and Path(shown["kept"]).name == first
    assert (home / "consolidate" / first).read_bytes() == first_bytes  # not replaced
    code, text = cli("consolidate", "--save")
    assert code == 0 and f"{first.replace('.json', '-3.json')} (the plan saved before it today stays in" in text
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and "differs_from" not in done  # the newest saved is the third, this plan
    code, done = cli("consolidate", "--undo", done["run"], "--json")
    assert code == 0
    twins = {p: (vault / p).read_bytes() for p in ("03-Knowledge/db.md", "03-Knowledge/db-copy.md")}
    code, done = cli("consolidate", "--apply", "--plan", first, "--json")
    assert code == 0 and done["run"] and done["plan"].endswith(first)
    assert {p: (vault / p).read_bytes() for p in twins} == twins  # the first plan did not hold them


def test_a_save_after_the_days_first_plan_was_removed_is_numbered_after_the_last(cli, vault, home):
    """The day's first plan reviewed and deleted by hand: the next save took its free name,
    which sorts before -2, so a plain --apply compared its plan with the older -2."""
    _vault(vault, cli, home)
    first = _saved(cli)
    twins = ("03-Knowledge/db.md", "03-Knowledge/db-copy.md")
    write_card(vault, twins[0], "staging db", TWIN)  # the second plan merges these too
    write_card(vault, twins[1], "staging db copy", TWIN + " Ask ops for the key.")
    cli("index")
    second = _saved(cli)
    (home / "consolidate" / first).unlink()  # reviewed
    for rel in twins:
        (vault / rel).unlink()
    cli("index")
    code, shown = cli("consolidate", "--save", "--json")
    assert code == 0 and Path(shown["saved"]).name == first.replace(".json", "-3.json")
    assert Path(shown["kept"]).name == second
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["run"] and "differs_from" not in done  # compared with the newest


def test_a_plan_name_that_is_not_there_is_told_with_the_plans_that_are(cli, vault, home):
    """Which numbers a day's saves took is not guessable: the refusal names the saved plans."""
    _vault(vault, cli, home)
    first, second = _saved(cli), _saved(cli)
    for day in range(1, 6):
        (home / "consolidate" / f"plan-202001{day:02}.json").write_text("{}")  # older days
    before = vault_bytes(vault)
    code, out = cli("consolidate", "--apply", "--plan", first.replace(".json", "-9.json"), "--json")
    assert code == 1 and out["error"]["code"] == "not_found"
    message = out["error"]["message"]
    assert f"plan-20200103.json, plan-20200104.json, plan-20200105.json, {first}, {second} (newest last; 2 older)" in message
    assert "plan-20200102.json" not in message
    assert vault_bytes(vault) == before


def test_saved_plans_are_ordered_by_day_then_number():
    from memsync.lifecycle import saved

    names = ["plan-20261201-10.json", "plan-20261201.json", "plan-20261130-3.json", "plan-20261201-2.json",
             "plan-mine.json"]
    assert [p.name for p in sorted(map(Path, names), key=saved._order)] == [
        "plan-mine.json", "plan-20261130-3.json", "plan-20261201.json", "plan-20261201-2.json",
        "plan-20261201-10.json"]


@pytest.mark.parametrize("emptied", [b"", b"  \n\n", b"---\ntitle: emptied\n---\n\n"],
                         ids=["0 bytes", "blank lines", "frontmatter alone"])
@pytest.mark.parametrize("rel", ["03-Knowledge/backup.md", "03-Knowledge/deploy.md", "03-Knowledge/oops.md"],
                         ids=["summary", "merge", "move"])
def test_a_file_emptied_after_the_save_leaves_its_steps_out_saying_so(cli, vault, home, emptied, rel):
    """As a plan made now says of a file emptied after the index read it (plan._emptied_why)."""
    _vault(vault, cli, home)
    name = _saved(cli)
    (vault / rel).write_bytes(emptied)
    code, done = cli("consolidate", "--apply", "--plan", name, "--json")
    assert code == 0, done
    left = [s["why"] for s in done["skipped"] if "left out" in s["why"]]
    assert left and all(why.startswith(f"{rel} holds no text now (emptied after the plan was saved")
                        and "put its text back" in why and "run `memsync index`" in why for why in left)
    assert (vault / rel).read_bytes() == emptied
    assert done["run"]  # the steps of the other files are carried out


def test_a_card_that_was_only_frontmatter_and_is_edited_is_told_edited(cli, vault, home):
    _vault(vault, cli, home)
    write_card(vault, "03-Knowledge/slip.md", "slip", kind="mistake")  # no body when saved, none now
    cli("index")
    name = _saved(cli)
    slip = vault / "03-Knowledge/slip.md"
    slip.write_text(slip.read_text().replace("title: slip", "title: a slip"))
    code, done = cli("consolidate", "--apply", "--plan", name, "--json")
    assert code == 0, done
    [why] = [s["why"] for s in done["skipped"] if "03-Knowledge/slip.md" in s["why"]]
    assert why.startswith("03-Knowledge/slip.md was edited after the plan was saved")


def test_a_plan_saved_in_another_zone_is_ordered_with_the_runs_by_its_moment(cli, vault, home, zone):
    """The plan's time was written without a zone: saved at +14:00 and carried out at -11:00 the
    next second, it read as a day newer than that run, so the next plain apply compared its own
    plan with one already carried out (`differs_from`)."""
    zone("Pacific/Kiritimati")
    _vault(vault, cli, home)
    name = _saved(cli)
    saved_at = json.loads((home / "consolidate" / name).read_text())["saved_at"]
    assert saved_at.endswith("+14:00")
    zone("Pacific/Pago_Pago")
    time.sleep(1.01 - time.time() % 1)
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["run"] and "differs_from" not in done
    write_card(vault, "03-Knowledge/db.md", "staging db", TWIN)  # a new plan, not the saved one
    write_card(vault, "03-Knowledge/db-copy.md", "staging db copy", TWIN + " Ask ops for the key.")
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["run"] and "differs_from" not in done  # the saved plan is older


def test_a_plan_saved_without_a_zone_by_an_older_memsync_is_read_as_this_machines_time(cli, vault, home):
    _vault(vault, cli, home)
    name = _saved(cli)
    path = home / "consolidate" / name
    plan = json.loads(path.read_text())
    plan["saved_at"] = plan["saved_at"][:19]  # as it was written before
    path.write_text(json.dumps(plan, ensure_ascii=False, indent=1))
    write_card(vault, "03-Knowledge/db.md", "staging db", TWIN)
    write_card(vault, "03-Knowledge/db-copy.md", "staging db copy", TWIN + " Ask ops for the key.")
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["differs_from"].endswith(name)  # no run since it: the one to compare
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and "differs_from" not in done  # a run was made since

def test_a_run_made_in_the_hour_a_clock_goes_back_is_ordered_by_its_moment(home, zone):
    """New York, 1 November 2026: 01:00-02:00 comes twice. A plan saved at 01:45 (EDT) is older
    than a run made at 01:30 the second time (EST), though the run's name reads earlier."""
    from memsync import config, dates
    from memsync.write import runs

    zone("America/New_York")
    cfg = config.load()
    kept = runs.folder(cfg) / "20261101-013000-abc123"
    kept.mkdir(parents=True)
    (kept / "manifest.json").write_text(json.dumps({"run": kept.name, "at": "2026-11-01T01:30:00-0500",
                                                    "files": [], "vault": "v"}))
    assert runs.made_since(cfg, dates.seconds("2026-11-01T01:45:00-04:00"))
    assert not runs.made_since(cfg, dates.seconds("2026-11-01T01:45:00-05:00"))
    assert not runs.made_since(cfg, dates.seconds("2026-11-05T09:00:00-05:00"))
