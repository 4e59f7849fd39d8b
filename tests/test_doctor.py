"""`memsync doctor`: each finding built by damaging a real home, checked for its exit code, its
message and fix, and for a vault that neither the check nor `--fix` changed by one byte."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memsync import config
from memsync.store import fts
from memsync.store.index import Index
from memsync.write import journal

from .conftest import MEMSYNC_BIN, write_card
from .helpers import snapshot

BODY = "The ECS deploy address is 10.0.0.5, port 8080; health check on /ping."
NEWER = "Since the move the ECS deploy address is 10.0.0.9, port 9090, same health check."


def checksums(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def indexed(vault, cli):
    write_card(vault, "03-Knowledge/ecs.md", "ECS deploy address", BODY)
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "The nginx site root is /srv/www.")
    assert cli("index")[0] == 0
    return vault


@pytest.fixture
def doctor(cli, vault):
    """Run `memsync doctor --json [args]`, asserting the vault is byte-for-byte unchanged."""

    def run(*args):
        before = checksums(vault)
        code, result = cli("doctor", "--json", *args)
        assert checksums(vault) == before
        return code, result

    return run


def only(result: dict, check: str) -> list[dict]:
    found = [f for f in result["findings"] if f["check"] == check]
    assert found, result
    return found


def rebuilt_equals_incremental() -> None:
    cfg = config.load()
    index = Index(cfg.db.path)
    try:
        now = snapshot(index)
    finally:
        index.close()
    assert subprocess.run([MEMSYNC_BIN, "index", "--rebuild"], capture_output=True).returncode == 0
    index = Index(cfg.db.path)
    try:
        assert snapshot(index) == now
    finally:
        index.close()


def test_a_fresh_index_is_sound(indexed, doctor):
    code, result = doctor()
    assert code == 0 and result["sound"] is True and result["findings"] == []
    assert result["checked"] == {"cards": 2, "files": 2, "sources": 1}


def test_no_index_cannot_be_checked(vault, cli, home):
    code, result = cli("doctor", "--json")
    assert code == 2
    assert "run `memsync index`" in result["error"]["message"]
    assert not (home / "memsync.db").exists()  # the check created nothing


def test_an_edit_behind_the_index_is_drift_and_fix_resyncs_it(indexed, doctor):
    card = indexed / "03-Knowledge/ecs.md"
    card.write_text(card.read_text() + "\nAlso reachable on the bastion host.\n")
    (indexed / "03-Knowledge/nginx.md").unlink()
    write_card(indexed, "02-Projects/new.md", "a new card", "written while nothing watched")
    code, result = doctor()
    assert code == 1
    messages = {f["message"].split(" without")[0]: f for f in only(result, "drift")}
    assert set(messages) == {"1 file of vault changed", "1 file of vault vanished",
                             "1 file of vault appeared"}
    assert messages["1 file of vault changed"]["paths"] == ["03-Knowledge/ecs.md"]
    assert all("memsync index" in f["fix"] and f["fixable"] for f in messages.values())
    code, result = doctor("--fix")
    assert code == 0, result
    assert len(result["fixed"]) == 3
    rebuilt_equals_incremental()


def test_fix_keeps_the_cards_of_a_vault_whose_files_are_mostly_gone(vault, cli, doctor):
    # What an unmounted disk looks like: `memsync index` refuses to drop most of a vault at once
    # (health.md), and doctor --fix, which its finding also names, must not do it either.
    for n in range(12):
        write_card(vault, f"03-Knowledge/c{n}.md", f"card {n}", f"{BODY} Card number {n}.")
    assert cli("index")[0] == 0
    for n in range(8):
        (vault / f"03-Knowledge/c{n}.md").unlink()
    code, result = doctor()
    [gone] = [f for f in only(result, "drift") if "vanished" in f["message"]]
    assert not gone["fixable"] and "--allow-mass-removal" in gone["fix"]
    code, result = doctor("--fix")
    assert code == 1 and not result["fixed"]
    assert cli("stats", "--json")[1]["cards"] == 12  # nothing dropped: ids and read counts kept
    assert cli("index", "--allow-mass-removal")[0] == 0  # the person's own yes still works
    assert cli("stats", "--json")[1]["cards"] == 4


def test_an_index_of_many_files_stopped_before_its_end_is_finished_by_fix(indexed, doctor):
    db = config.load().db.path
    index = Index(db)
    try:
        with pytest.raises(KeyboardInterrupt), index.carrying_links():
            raise KeyboardInterrupt  # as a `memsync index` interrupted mid-way leaves it
    finally:
        index.close()
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "load")
    assert "merge of the full-text index" in finding["message"] and finding["fixable"]
    assert "memsync index" in finding["fix"]
    code, result = doctor("--fix")
    assert code == 0 and result["fixed"] == ["finished what an index stopped early left to do"]
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT v FROM cards_fts_config WHERE k = 'automerge'").fetchone() == (
            fts.AUTOMERGE,)
    finally:
        conn.close()
    assert doctor()[1]["findings"] == []


def test_a_touched_file_with_the_same_content_is_not_drift(indexed, doctor):
    card = indexed / "03-Knowledge/ecs.md"
    os.utime(card, ns=(1_000_000_000, 1_000_000_000))  # a tool that restores an old mtime
    assert doctor()[0] == 0


def test_a_deleted_superseding_card_leaves_a_dangling_pointer(indexed, cli, doctor):
    old_id = cli("search", "8080", "--json")[1]["hits"][0]["id"]
    code, result = cli("supersede", old_id, "--title", "ECS deploy address now", "--body", NEWER, "--json")
    assert code == 0
    assert doctor()[0] == 0
    (indexed / result["path"]).unlink()
    assert cli("index")[0] == 0
    code, found = doctor()
    assert code == 1
    [dangling] = only(found, "supersede")
    assert dangling["message"] == (f"vault:03-Knowledge/ecs.md says superseded_by: {result['path']}, "
                                   "and no such card is indexed")
    assert "`memsync doctor --fix-pairs` removes the `superseded_by` and `invalid_at` lines" in dangling["fix"]
    assert not dangling["fixable"]
    assert doctor("--fix")[0] == 1  # a vault edit is the person's call


def test_fix_pairs_makes_a_card_whose_successor_was_deleted_valid_and_findable(indexed, cli):
    old_id = cli("search", "8080", "--json")[1]["hits"][0]["id"]
    _, new = cli("supersede", old_id, "--title", "ECS deploy address now", "--body", NEWER, "--json")
    code, deleted = cli("delete", new["id"], "--json")
    assert code == 0 and any("stays marked invalid" in w for w in deleted["warnings"])
    assert cli("search", "8080", "--json")[1]["hits"] == []
    before = (indexed / "03-Knowledge/ecs.md").read_text()
    code, result = cli("doctor", "--fix-pairs", "--json")
    assert code == 0 and result["sound"], result
    assert result["fixed"] == [
        "removed `superseded_by`, `invalid_at` from 03-Knowledge/ecs.md (it is valid again)"]
    after = (indexed / "03-Knowledge/ecs.md").read_text()
    assert "invalid_at" not in after and "superseded_by" not in after
    assert after == "\n".join(line for line in before.split("\n")
                              if not line.startswith(("invalid_at:", "superseded_by:")))
    assert [h["id"] for h in cli("search", "8080", "--json")[1]["hits"]] == [old_id]
    _, shown = cli("show", old_id, "--json")
    assert shown["valid"] is True


def test_fix_pairs_drops_a_supersedes_line_whose_card_is_gone(indexed, cli):
    old_id = cli("search", "8080", "--json")[1]["hits"][0]["id"]
    _, new = cli("supersede", old_id, "--title", "ECS deploy address now", "--body", NEWER, "--json")
    code, deleted = cli("delete", old_id, "--json")
    assert any("stays valid" in w and new["path"] in w for w in deleted["warnings"])
    code, result = cli("doctor", "--fix-pairs", "--json")
    assert code == 0 and result["fixed"] == [f"removed `supersedes` from {new['path']}"]
    assert "supersedes" not in (indexed / new["path"]).read_text()


def test_fix_pairs_leaves_a_pair_whose_partner_came_back(indexed, cli):
    old_id = cli("search", "8080", "--json")[1]["hits"][0]["id"]
    _, new = cli("supersede", old_id, "--title", "ECS deploy address now", "--body", NEWER, "--json")
    _, deleted = cli("delete", new["id"], "--json")
    os.replace(indexed / deleted["trash_path"], indexed / new["path"])  # back, the index not told yet
    code, result = cli("doctor", "--fix-pairs", "--json")
    assert "superseded_by:" in (indexed / "03-Knowledge/ecs.md").read_text()
    assert result["fixed"] == [] or all("nothing to change" in f for f in result["fixed"])


def test_supersede_pointers_that_disagree(indexed, cli, doctor):
    write_card(indexed, "03-Knowledge/ecs-2.md", "ECS now", NEWER, supersedes="03-Knowledge/nginx.md")
    assert cli("index")[0] == 0
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "supersede")
    assert finding["message"] == ("vault:03-Knowledge/ecs-2.md says supersedes: 03-Knowledge/nginx.md, "
                                  "but 03-Knowledge/nginx.md has no superseded_by")
    assert "make the two agree" in finding["fix"]


DIE_BETWEEN_WRITES = """
import os, sys
from memsync.write import supersede
supersede._mark = lambda *a, **k: os._exit(9)   # the new card is written, the old one not marked
from memsync.cli import main
main(sys.argv[1:])
"""


def test_an_interrupted_supersede_is_reported_and_finished_only_when_asked(indexed, cli, doctor, home):
    old_id = cli("search", "8080", "--json")[1]["hits"][0]["id"]
    proc = subprocess.run([sys.executable, "-c", DIE_BETWEEN_WRITES, "supersede", str(old_id),
                           "--title", "ECS deploy address now", "--body", NEWER],
                          capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    code, result = doctor()
    assert code == 1
    [interrupted] = only(result, "journal")
    assert interrupted["message"].startswith("a supersede of 03-Knowledge/ecs.md by 03-Knowledge/")
    assert "--finish-writes" in interrupted["fix"] and not interrupted["fixable"]
    assert doctor("--fix")[0] == 1  # finishing it writes the old card: not without asking
    code, result = cli("doctor", "--json", "--finish-writes")
    assert code == 0, result
    assert result["fixed"] == ["supersede of 03-Knowledge/ecs.md: finished"]
    assert "superseded_by:" in (indexed / "03-Knowledge/ecs.md").read_text()


def test_an_interrupted_move_to_the_trash_is_reported_and_finished(indexed, cli, doctor, home):
    # killed between linking the trash name and unlinking the card's own: both names, one file
    (indexed / ".trash/03-Knowledge").mkdir(parents=True)
    entry = journal.Entry(home, {"op": "move", "vault": str(indexed), "src": "03-Knowledge/ecs.md",
                                 "dst": ".trash/03-Knowledge/ecs.md"})
    os.link(indexed / "03-Knowledge/ecs.md", indexed / ".trash/03-Knowledge/ecs.md")
    entry.release()
    code, result = doctor()
    [interrupted] = only(result, "journal")
    assert interrupted["message"] == "a move of 03-Knowledge/ecs.md to .trash/03-Knowledge/ecs.md was interrupted"
    code, result = cli("doctor", "--json", "--finish-writes")
    assert result["fixed"] == ["move of 03-Knowledge/ecs.md to .trash/03-Knowledge/ecs.md: finished: the card "
                               "is at .trash/03-Knowledge/ecs.md, no longer also at 03-Knowledge/ecs.md"]
    assert not (indexed / "03-Knowledge/ecs.md").exists() and (indexed / ".trash/03-Knowledge/ecs.md").exists()
    assert not [f for f in doctor()[1]["findings"] if f["check"] == "journal"]


def test_a_truncated_journal_entry_is_set_aside_by_fix(indexed, doctor, home):
    entry = journal.Entry(home, {"op": "supersede", "vault": str(indexed), "old": "03-Knowledge/ecs.md",
                                 "new": "03-Knowledge/ecs-2.md", "new_hash": "0" * 32,
                                 "invalid_at": "2026-01-01T00:00:00+00:00"})
    entry.release()  # as if its writer died
    data = entry.path.read_bytes()
    entry.path.write_bytes(data[: len(data) // 2])
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "journal")
    assert "cannot be read (truncated or damaged)" in finding["message"] and finding["fixable"]
    code, result = doctor("--fix")
    assert code == 0, result
    assert (entry.path.parent / (entry.path.name + ".unreadable")).exists()


def test_a_dead_supersede_that_wrote_nothing_is_dropped_by_fix(indexed, doctor, home):
    entry = journal.Entry(home, {"op": "supersede", "vault": str(indexed), "old": "03-Knowledge/ecs.md",
                                 "new": "03-Knowledge/never-written.md", "new_hash": "0" * 32,
                                 "invalid_at": "2026-01-01T00:00:00+00:00"})
    entry.release()
    code, result = doctor()
    assert code == 1 and "(nothing to undo)" in only(result, "journal")[0]["message"]
    code, result = doctor("--fix")
    assert code == 0, result
    assert not entry.path.exists()


@pytest.mark.parametrize("text, problem", [
    ("---\ntitle: [unclosed\n---\nthe body of a card with broken YAML\n", "YAML"),
    ("---\ntitle: dated\ncreated: last tuesday\n---\na card whose created is not a date\n", "created"),
])
def test_cards_with_problems_are_reported_not_fixed(indexed, cli, doctor, text, problem):
    (indexed / "bad.md").write_text(text)
    assert cli("index")[0] == 0
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "problem")
    assert finding["message"].startswith("vault:bad.md: ") and problem in finding["message"]
    assert finding["fix"].startswith("fix the file")
    assert doctor("--fix")[0] == 1


def test_an_oversize_file_is_reported(indexed, cli, doctor):
    (indexed / "huge.md").write_bytes(b"x" * (8 * 1024 * 1024 + 1))
    assert cli("index")[0] == 0
    [finding] = only(doctor()[1], "problem")
    assert "over the" in finding["message"] and "limit; split it" in finding["message"]


def test_an_id_left_in_a_trash_emptied_by_hand_is_retired_by_fix(indexed, cli, doctor):
    old_id = cli("search", "nginx", "--json")[1]["hits"][0]["id"]
    assert cli("delete", old_id)[0] == 0
    assert doctor()[0] == 0  # in the trash, the id waits for a restore
    (indexed / ".trash/03-Knowledge/nginx.md").unlink()
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "id")
    assert finding["paths"] == [".trash/03-Knowledge/nginx.md"] and "retire" in finding["fix"]
    assert doctor("--fix")[0] == 0
    write_card(indexed, ".trash/03-Knowledge/nginx.md", "nginx root", "A different card, written later.")
    assert cli("delete", "--restore", ".trash/03-Knowledge/nginx.md")[0] == 0
    assert cli("search", "different", "--json")[1]["hits"][0]["id"] != old_id


def test_an_id_of_a_card_deleted_by_hand_is_kept_for_its_return(indexed, cli, doctor):
    old_id = cli("search", "nginx", "--json")[1]["hits"][0]["id"]
    card = indexed / "03-Knowledge/nginx.md"
    text = card.read_text()
    card.unlink()
    assert cli("index")[0] == 0
    assert doctor()[0] == 0
    card.write_text(text)  # git checkout brings it back
    assert cli("index")[0] == 0
    assert cli("search", "nginx", "--json")[1]["hits"][0]["id"] == old_id


def test_a_missing_source_is_reported(indexed, cli, doctor, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    assert cli("sources", "--add", "notes", "--path", notes)[0] == 0
    notes.rmdir()
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "source")
    assert finding["message"] == f"source notes: {notes} does not exist; it is not indexed"


def test_a_stale_watcher_lock_is_removed_by_fix(indexed, doctor, home):
    (home / "watch.lock").write_text(json.dumps({"pid": 999999, "vault": str(indexed)}))
    (home / "watch.lock").chmod(0o600)
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "lock")
    assert "pid 999999, which is gone" in finding["message"]
    assert doctor("--fix")[0] == 0
    assert not (home / "watch.lock").exists()


def test_a_held_watcher_lock_is_never_removed(indexed, home):
    """The stale-lock probe doctor --fix shares with a starting watcher leaves a held lock be."""
    from memsync.watch.lock import WatchLock, remove_stale

    lock = WatchLock(home / "watch.lock", str(indexed))
    lock.acquire()
    try:
        assert remove_stale(home / "watch.lock") is False
        assert json.loads((home / "watch.lock").read_text())["pid"] == os.getpid()
    finally:
        lock.release()


def test_an_index_others_can_read_is_tightened_by_fix(indexed, doctor, home):
    (home / "memsync.db").chmod(0o644)
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "permissions")
    assert str(home / "memsync.db") in finding["paths"]
    assert doctor("--fix")[0] == 0
    assert stat.S_IMODE((home / "memsync.db").stat().st_mode) == 0o600


def test_a_damaged_full_text_index_is_rebuilt_by_fix(indexed, doctor, home):
    conn = sqlite3.connect(home / "memsync.db")
    conn.execute("UPDATE card_terms SET headings = 'words the index never saw'")
    conn.commit()
    conn.close()
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "integrity")
    assert finding["message"].startswith("the full-text index is damaged") and finding["fixable"]
    code, result = doctor("--fix")
    assert code == 0, result
    assert result["fixed"] == ["rebuilt the index from the files"]


def test_a_card_without_its_full_text_row_is_found(indexed, doctor, home):
    conn = sqlite3.connect(home / "memsync.db")
    seq, body = conn.execute("SELECT seq, body FROM cards ORDER BY seq").fetchone()
    fts.delete(conn, seq, body)
    conn.commit()
    conn.close()
    [finding] = only(doctor()[1], "integrity")
    assert finding["message"] == "1 card without full-text rows and 0 full-text rows without a card"
    assert doctor("--fix")[0] == 0


def test_a_damaged_database_file_is_reported_with_what_to_do(indexed, doctor, home):
    db = home / "memsync.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    page = 4096
    for offset in range(page, len(data), page):  # scribble over every page but the header
        data[offset + 8 : offset + 40] = b"\xff" * 32
    db.write_bytes(bytes(data))
    code, result = doctor()
    assert code == 1
    [finding] = only(result, "integrity")
    assert "memsync doctor --fix" in finding["fix"] and finding["fixable"]
    code, result = doctor("--fix")
    assert code == 0, result
    assert any(done.startswith("the index was damaged") for done in result["fixed"])
    assert list(home.glob("memsync.db.damaged-*"))


def test_an_older_schema_is_migrated_by_fix(indexed, doctor, home):
    conn = sqlite3.connect(home / "memsync.db")
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    [finding] = only(doctor()[1], "schema")
    assert finding["fixable"]
    assert doctor("--fix")[0] == 0


def test_a_newer_schema_cannot_be_checked(indexed, cli, home):
    conn = sqlite3.connect(home / "memsync.db")
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    code, result = cli("doctor", "--json")
    assert code == 2 and "newer memsync" in result["error"]["message"]


def test_the_installed_command_prints_findings_with_their_fix(indexed, run_cli, home):
    (home / "memsync.db").chmod(0o644)
    code, out, _err = run_cli("doctor")
    assert code == 1
    assert "1 finding:\n✗ permissions: other users can read" in out
    assert "    fix: run `memsync doctor --fix`" in out
    code, out, _err = run_cli("doctor", "--fix")
    assert code == 0 and out.startswith("fixed: made 1 paths private\nthe index is sound")


def test_a_card_restored_behind_the_index_is_drift_and_keeps_its_id(indexed, cli, doctor):
    card_id = cli("search", "nginx", "--json")[1]["hits"][0]["id"]
    assert cli("delete", card_id)[0] == 0
    os.rename(indexed / ".trash/03-Knowledge/nginx.md", indexed / "03-Knowledge/nginx.md")
    code, result = doctor()
    assert code == 1
    assert [f["check"] for f in result["findings"]] == ["drift"]  # not a stray id to retire
    assert doctor("--fix")[0] == 0
    assert cli("search", "nginx", "--json")[1]["hits"][0]["id"] == card_id


def test_any_file_of_the_home_others_can_read_is_found_but_not_the_cards_kept_there(
        indexed, cli, doctor, home):
    (home / "bench_queries.json").write_text("[]")
    (home / "bench_queries.json").chmod(0o644)
    notes = home / "notes"  # a source kept inside the home: the user's own files
    notes.mkdir(mode=0o755)
    notes.chmod(0o755)
    write_card(notes, "mine.md", "mine", "a note the user keeps readable on purpose").chmod(0o644)
    assert cli("sources", "--add", "notes", "--path", notes)[0] == 0
    [finding] = only(doctor()[1], "permissions")
    assert finding["paths"] == [str(home / "bench_queries.json")]
    assert doctor("--fix")[0] == 0
    assert stat.S_IMODE((notes / "mine.md").stat().st_mode) == 0o644


def test_a_trashed_note_with_a_hash_in_its_name_keeps_its_id(indexed, cli, doctor):
    """`.trash/C# tips.md` is there: its id is not a stray one to retire (the part before the
    `#` once counted as the file)."""
    (indexed / "C# tips.md").write_text("Prefer records for quokka data.\n")
    assert cli("index")[0] == 0
    card_id = cli("search", "quokka", "--json")[1]["hits"][0]["id"]
    assert cli("delete", card_id)[0] == 0
    code, result = doctor()
    assert code == 0 and result["findings"] == []
    code, out = cli("delete", "--restore", ".trash/C# tips.md", "--json")
    assert code == 0 and out["id"] == card_id
