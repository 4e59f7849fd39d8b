"""`memsync consolidate`: a step whose file cannot be read as a card is left out and named, with
what to do; the rest of the plan is still made (never the whole plan failing for one file)."""

from __future__ import annotations

import json
import os

import pytest

from .conftest import write_card
from .test_lifecycle_audit import EN

LONG = "The backup job runs nightly at two and keeps thirty days. It writes to the NAS. " * 9
FINE = "A mistake filed under knowledge, about rsync flags and their trailing slashes."


def _rules(home, folder="Mistakes"):
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"folder_rules": {"mistake": folder}}))


def _skipped(plan: dict) -> dict:
    return {(s["step"], s.get("path")): s["why"] for s in plan["skipped"]}


def test_a_misfiled_card_with_broken_frontmatter_is_left_out_and_the_rest_moves(cli, vault, home):
    """08-Mistakes/ makes the card a mistake even with broken YAML; the rules want it in Mistakes/."""
    broken = vault / "08-Mistakes/broken.md"
    broken.parent.mkdir()
    broken.write_text("---\ntitle: broken\ntags: [unclosed\n---\nA mistake card whose frontmatter is broken.\n")
    write_card(vault, "03-Knowledge/oops.md", "oops", FINE, kind="mistake")
    _rules(home)
    cli("index")
    for args in (("consolidate", "--json"), ("consolidate", "--apply", "--json")):
        code, plan = cli(*args)
        assert code == 0, plan
        assert [(m["from"], m["to"]) for m in plan["moves"]] == [("03-Knowledge/oops.md", "Mistakes/oops.md")]
        why = _skipped(plan)[("move", "08-Mistakes/broken.md")]
        assert "08-Mistakes/broken.md" in why and "frontmatter is not valid YAML" in why and "fix it" in why
    assert broken.exists() and (vault / "Mistakes/oops.md").exists()


@pytest.mark.parametrize("change", ["broken yaml", "not utf-8", "gone"])
def test_files_changed_after_the_index_leave_their_steps_out_and_named(cli, vault, home, change):
    """No watcher saw the files change: the audit still lists every step, the plan reads the files."""
    write_card(vault, "03-Knowledge/deploy.md", "deploy", EN + "Check the logs after a reload.")
    write_card(vault, "03-Knowledge/deploy-notes.md", "deploy notes", EN)
    write_card(vault, "03-Knowledge/deploy-copy.md", "deploy copy", EN)
    write_card(vault, "03-Knowledge/backup.md", "backup", LONG)
    write_card(vault, "03-Knowledge/cron.md", "cron", "The cron table of the build host lists every job. " * 12)
    write_card(vault, "03-Knowledge/oops.md", "oops", FINE, kind="mistake")
    write_card(vault, "03-Knowledge/slip.md", "slip", "Never run the migration twice on staging.", kind="mistake")
    _rules(home)
    cli("index")
    code, before = cli("consolidate", "--json")
    assert code == 0 and len(before["moves"]) == 2 and len(before["summaries"]) == 2
    merge = before["merges"][0]
    other = merge["merged"][-1]["path"]
    summed = next(s["path"] for s in before["summaries"] if s["path"] not in {merge["path"], other})
    for rel in (other, summed, "03-Knowledge/slip.md"):
        path = vault / rel
        if change == "gone":
            path.unlink()
        elif change == "not utf-8":
            path.write_bytes(path.read_bytes().replace(b"---\n", b"---\n# caf\xe9\n", 1))
        else:
            path.write_text(path.read_text().replace("title: ", "title: [", 1))
    code, plan = cli("consolidate", "--json")
    assert code == 0, plan
    what = {"gone": "run `memsync index`", "not utf-8": "not valid UTF-8",
            "broken yaml": "frontmatter is not valid YAML"}[change]
    assert [(m["from"], m["to"]) for m in plan["moves"]] == [("03-Knowledge/oops.md", "Mistakes/oops.md")]
    assert what in _skipped(plan)[("move", "03-Knowledge/slip.md")]
    assert [s["path"] for s in plan["summaries"]] == [p for p in [s["path"] for s in before["summaries"]] if p != summed]
    assert [s["why"] for s in plan["skipped"] if s["step"] == "summary" and summed in s["why"] and what in s["why"]]
    if change == "gone":  # the group's other cards are still merged
        assert what in _skipped(plan)[("merge", other)]
        assert [m["path"] for m in plan["merges"]] == [merge["path"]]
        assert other not in {m["path"] for m in plan["merges"][0]["merged"]}
    else:  # a group is merged whole or not at all
        assert plan["merges"] == []
        assert [s for s in plan["skipped"] if s["step"] == "merge" and other in s["why"] and what in s["why"]]


def test_a_folder_rule_leading_out_of_the_vault_leaves_the_move_out(cli, vault, home, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "Mistakes").symlink_to(outside)
    write_card(vault, "03-Knowledge/oops.md", "oops", FINE, kind="mistake")
    write_card(vault, "03-Knowledge/backup.md", "backup", LONG)
    _rules(home)
    cli("index")
    code, plan = cli("consolidate", "--json")
    assert code == 0, plan
    assert plan["moves"] == [] and [s["path"] for s in plan["summaries"]] == ["03-Knowledge/backup.md"]
    assert "outside the vault" in _skipped(plan)[("move", "03-Knowledge/oops.md")]
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("emptied", [b"", b"  \n\n", b"---\ntitle: deploy\nkind: mistake\n---\n\n"],
                         ids=["0 bytes", "blank lines", "frontmatter alone"])
@pytest.mark.parametrize("step", ["keeper", "merged", "summary", "move"])
def test_a_file_emptied_after_the_index_leaves_its_step_out_saying_so(cli, vault, home, emptied, step):
    """No watcher saw the file emptied: its step is not planned on the text it no longer has (a
    merge would supersede an empty file, a move carry it off), and the reason says what happened."""
    write_card(vault, "03-Knowledge/deploy.md", "deploy", EN + "Check the logs after a reload.")
    write_card(vault, "03-Knowledge/deploy-notes.md", "deploy notes", EN)
    write_card(vault, "03-Knowledge/deploy-copy.md", "deploy copy", EN)
    write_card(vault, "03-Knowledge/backup.md", "backup", LONG)
    write_card(vault, "03-Knowledge/oops.md", "oops", FINE, kind="mistake")
    _rules(home)
    cli("index")
    code, before = cli("consolidate", "--json")
    assert code == 0 and len(before["merges"][0]["merged"]) == 2
    rel = {"keeper": "03-Knowledge/deploy.md", "merged": before["merges"][0]["merged"][0]["path"],
           "summary": "03-Knowledge/backup.md", "move": "03-Knowledge/oops.md"}[step]
    (vault / rel).write_bytes(emptied)
    code, plan = cli("consolidate", "--json")
    assert code == 0, plan
    [why] = [s["why"] for s in plan["skipped"]]
    assert why.startswith(f"{rel} holds no text now (emptied after the index last read it)")
    assert "put its text back" in why and "run `memsync index`" in why
    touched = {rel for key in ("merges", "summaries", "moves") for s in plan[key] for rel in s["touches"]}
    assert rel not in touched  # and every other step is still planned:
    assert len(plan["moves"]) == (step != "move") and len(plan["summaries"]) == (step != "summary")
    assert [len(m["merged"]) for m in plan["merges"]] == ([] if step == "keeper" else [1] if step == "merged" else [2])
    assert (vault / rel).read_bytes() == emptied


def test_a_preview_says_how_many_files_the_index_left_out_and_where_they_are_listed(cli, vault, home):
    """A too-large file and one whose name is not UTF-8 have no card: the audit never sees them,
    so the plan cannot name them as steps; it says they are out and which command lists them."""
    write_card(vault, "03-Knowledge/backup.md", "backup", LONG)
    write_card(vault, "03-Knowledge/broken.md", "broken", LONG).write_text(  # a card, though broken
        "---\ntitle: [broken\n---\n" + LONG)
    (vault / "03-Knowledge/huge.md").write_text("---\ntitle: huge\n---\n" + "x" * (8 * 1024 * 1024 + 1))
    (vault / "03-Knowledge").joinpath(os.fsdecode(b"caf\xe9.md")).write_text("---\ntitle: cafe\n---\n" + LONG)
    cli("index")
    code, plan = cli("consolidate", "--json")
    assert code == 0, plan
    assert plan["not_indexed"] == {"files": 2, "folders": 0}
    code, text = cli("consolidate")
    assert code == 0
    [line] = [line for line in text.splitlines() if "not in the index" in line]
    assert line.startswith("2 files of the vault are not in the index") and "`memsync doctor`" in line
    code, doctor = cli("doctor")
    assert "03-Knowledge/huge.md" in doctor and "caf" in doctor


def test_a_preview_of_a_vault_the_index_holds_whole_says_nothing_of_it(cli, vault, home):
    write_card(vault, "03-Knowledge/backup.md", "backup", LONG)
    cli("index")
    code, plan = cli("consolidate", "--json")
    assert code == 0 and "not_indexed" not in plan
    assert "not in the index" not in cli("consolidate")[1]
