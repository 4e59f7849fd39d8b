"""`memsync consolidate` and `audit` over notes and folders memsync may not read or write: the
step that needs one is left out, saying which and what to do, the rest of the plan is carried
out, and nothing is lost. Run in subprocesses that cannot read or write past a mode
(test_watch_inodes.without_root_reads), as the tests run as root."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import write_card
from .test_denied_folders import memsync  # the installed memsync, without root's reads
from .test_lifecycle_audit import EN
from .test_lifecycle_consolidate import vault_bytes
from .test_lifecycle_plan_skips import FINE, LONG, _rules

KEEPER, MERGED = "03-Knowledge/deploy.md", "04-Other/deploy-notes.md"
LONG_CARD, MISFILED = "05-Long/backup.md", "06-Misc/oops.md"
STEP_OF = {KEEPER: "merge", MERGED: "merge", LONG_CARD: "summary", MISFILED: "move"}
UNREADABLE = "cannot be read (permission denied); make it readable (chmod u+r), then consolidate again"


@pytest.fixture
def four_steps(cli, vault: Path, home: Path) -> Path:
    """A group of two to merge, a long card to summarize and a misfiled one to move, each in a
    folder of its own."""
    write_card(vault, KEEPER, "deploy", EN + "Check the logs after a reload.")
    write_card(vault, MERGED, "deploy notes", EN)
    write_card(vault, LONG_CARD, "backup", LONG)
    write_card(vault, MISFILED, "oops", FINE, kind="mistake")
    (vault / "Mistakes").mkdir()
    _rules(home)
    assert cli("index")[0] == 0
    return vault


def touched(plan: dict) -> set[str]:
    return {rel for key in ("merges", "summaries", "moves") for step in plan[key] for rel in step["touches"]}


def planned(plan: dict) -> set[str]:
    """The notes the plan's steps are about (a merge's two, a summary's, a move's)."""
    return {*touched(plan), *(m["from"] for m in plan["moves"])}


def left_out(plan: dict) -> dict[str, str]:
    return {s.get("path") or str(s.get("keeper") or s.get("id")): s["why"] for s in plan["skipped"]}


@pytest.mark.parametrize("rel", [KEEPER, MERGED, LONG_CARD, MISFILED])
def test_a_note_that_cannot_be_read_leaves_its_step_out_and_the_rest_is_carried_out(four_steps, cli, rel):
    vault = four_steps
    before = vault_bytes(vault)
    others = {KEEPER, MERGED, LONG_CARD, MISFILED} - ({KEEPER, MERGED} if STEP_OF[rel] == "merge" else {rel})
    (vault / rel).chmod(0o000)
    try:
        code, plan = memsync("consolidate", "--json")  # the plan over the index reads the note
        assert code == 0, plan
        assert isinstance(plan, dict) and planned(plan) == others
        assert [s["why"] for s in plan["skipped"]] == [f"{rel} {UNREADABLE}"]
        code, done = memsync("consolidate", "--apply", "--json")  # its catch-up takes the card out
        assert code == 0 and done["run"], done
        assert isinstance(done, dict) and planned(done) == others
        assert left_out(done) == {rel: "this file cannot be read (permission denied), so its cards are out "
                                       "of the index and of this plan; make it readable (chmod u+r), then "
                                       "consolidate again"}
    finally:
        (vault / rel).chmod(0o644)
    assert (vault / rel).read_bytes() == before[rel]  # nothing lost: readable again, it takes its step
    code, done = memsync("consolidate", "--apply", "--json")
    assert code == 0 and done["skipped"] == [] and rel in planned(done), done


@pytest.mark.parametrize("folder", ["03-Knowledge", "04-Other", "05-Long", "06-Misc", "Mistakes"])
def test_a_folder_that_cannot_be_written_leaves_its_step_out_and_the_rest_is_carried_out(four_steps, folder):
    vault = four_steps
    before = vault_bytes(vault)
    rel = next((r for r in STEP_OF if r.startswith(folder + "/")), MISFILED)  # Mistakes/: the move's
    (vault / folder).chmod(0o555)
    try:
        for args in (("consolidate", "--json"), ("consolidate", "--apply", "--json")):
            code, plan = memsync(*args)
            assert code == 0, plan
            assert isinstance(plan, dict) and rel not in planned(plan) and len(plan["skipped"]) == 1
            what = "moved to Mistakes/oops.md" if STEP_OF[rel] == "move" else "changed"
            assert plan["skipped"][0]["why"] == (f"{folder}/ cannot be written (permission denied), so {rel} "
                                                 f"cannot be {what}; make it writable (chmod u+w), then "
                                                 "consolidate again")
    finally:
        (vault / folder).chmod(0o755)
    after = vault_bytes(vault)
    assert {p: b for p, b in after.items() if p.startswith(folder + "/")} == \
        {p: b for p, b in before.items() if p.startswith(folder + "/")}
    assert len(plan["merges"] + plan["summaries"] + plan["moves"]) == 2 and plan["run"]
    assert not [p for p in vault.rglob(".memsync-*")]  # no temp file left behind


def test_a_saved_plan_leaves_out_the_steps_whose_notes_cannot_be_read_or_written_now(four_steps, home):
    vault = four_steps
    code, shown = memsync("consolidate", "--save", "--json")
    assert code == 0 and isinstance(shown, dict) and len(touched(shown)) == 4, shown
    before = vault_bytes(vault)
    (vault / MERGED).chmod(0o000)
    (vault / "05-Long").chmod(0o555)
    try:
        code, done = memsync("consolidate", "--apply", "--plan", Path(shown["saved"]).name, "--json")
    finally:
        (vault / MERGED).chmod(0o644)
        (vault / "05-Long").chmod(0o755)
    assert code == 0 and isinstance(done, dict), done
    assert done["merges"] == [] and done["summaries"] == [] and len(done["moves"]) == 1
    why = left_out(done)
    assert why[KEEPER] == f"{MERGED} {UNREADABLE}: this step is left out"
    assert why[LONG_CARD].startswith("05-Long/ cannot be written (permission denied)")
    after = vault_bytes(vault)
    assert {p: after[p] for p in (KEEPER, MERGED, LONG_CARD)} == {p: before[p] for p in (KEEPER, MERGED, LONG_CARD)}
    assert after["Mistakes/oops.md"] == before[MISFILED]


def test_a_run_stopped_by_a_file_it_cannot_write_puts_back_what_it_wrote(four_steps, cli):
    """The plan saw nothing in the way; at its last file (the move) a file stands where the
    folder it goes to should be: the merge and the summary written before it go back."""
    vault = four_steps
    code, shown = cli("consolidate", "--save", "--json")
    assert code == 0 and len(shown["moves"]) == 1
    before = vault_bytes(vault)
    (vault / "Mistakes").rmdir()
    (vault / "Mistakes").write_text("not a folder")
    code, out = cli("consolidate", "--apply", "--plan", Path(shown["saved"]).name, "--json")
    assert code == 1 and "nothing of it was kept" in out["error"]["message"], out
    assert "Mistakes: File exists" in out["error"]["message"]
    assert vault_bytes(vault) == before
    assert cli("doctor", "--json")[0] == 0  # no run left half done in the journal
    (vault / "Mistakes").unlink()
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["skipped"] == [] and len(touched(done)) == 4


def test_the_audit_reads_only_the_index_so_a_note_it_cannot_read_is_still_reported(four_steps):
    (four_steps / MERGED).chmod(0o000)
    try:
        code, report = memsync("audit", "--json")
    finally:
        (four_steps / MERGED).chmod(0o644)
    assert code == 0 and isinstance(report, dict), report
    assert [sorted(c["path"] for c in g["cards"]) for g in report["duplicates"]] == [[KEEPER, MERGED]]


@pytest.mark.parametrize("rel", [KEEPER, MERGED, LONG_CARD, MISFILED])
def test_a_note_made_a_link_out_of_the_vault_leaves_its_step_out(four_steps, cli, rel, tmp_path):
    """The note became a symbolic link to a file outside the vault after the index read it: its
    step is left out, saying why, and the plan of the rest stands; nothing outside is touched."""
    vault = four_steps
    outside = tmp_path / "outside.md"
    outside.write_bytes((vault / rel).read_bytes())
    (vault / rel).unlink()
    (vault / rel).symlink_to(outside)
    before = outside.read_bytes()
    others = {KEEPER, MERGED, LONG_CARD, MISFILED} - ({KEEPER, MERGED} if STEP_OF[rel] == "merge" else {rel})
    code, plan = cli("consolidate", "--json")
    assert code == 0 and isinstance(plan, dict), plan
    assert planned(plan) == others
    assert [s["why"] for s in plan["skipped"]] == [
        f"{rel} leads outside the vault (to {outside}) through a symbolic link; memsync only writes inside the vault"]
    assert outside.read_bytes() == before
