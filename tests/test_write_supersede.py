"""`memsync supersede`: a new card plus an invalidated old one, both or neither, even across a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memsync import config, notes
from memsync.write import atomic, journal

from .mcp_helpers import server_log

__all__ = ["server_log"]  # a fixture, imported for the MCP test below

OLD_BODY = "The ECS deploy address is 10.0.0.5, port 8080; health check on /ping."
NEW_BODY = "Since the move the ECS deploy address is 10.0.0.9, port 9090; health check on /ping."

# Run the real CLI in a child process that dies at a chosen point (os._exit: no cleanup runs).
DIE_AT = """
import os, sys
from memsync.write import atomic, supersede
point = sys.argv[1]
die = lambda *a, **k: os._exit(9)
if point == "between-writes":
    supersede._mark = die              # the new card is on disk, the old one not yet marked
elif point == "before-new-file":
    atomic.Staged.link = die        # the journal names the new file, which does not exist yet
from memsync.cli import main
main(sys.argv[2:])
"""


@pytest.fixture
def old(cli, vault):
    _, data = cli("capture", "--title", "ECS deploy address", "--body", OLD_BODY, "--kind", "tool",
                  "--tags", "ecs", "--json")
    return data


def journals(home: Path) -> list[str]:
    """Plans and their locks (the long-lived supersede mutex is not one)."""
    folder = journal.folder(home)
    return sorted(p.name for p in folder.glob("*.*") if p.suffix in (".json", ".lock")) if folder.exists() else []


def die_during_supersede(point: str, card_id: int) -> int:
    args = ["supersede", str(card_id), "--title", "ECS deploy address", "--body", NEW_BODY]
    return subprocess.run([sys.executable, "-c", DIE_AT, point, *args], env=os.environ.copy(),
                          capture_output=True, timeout=60).returncode


def test_supersede_writes_the_new_card_and_marks_the_old_one(cli, vault, old):
    old_path = vault / old["path"]
    before = old_path.read_text()
    code, data = cli("supersede", old["id"], "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    assert code == 0 and data["status"] == "superseded" and data["indexed"] is True
    assert data["path"] == "07-Tools/ECS deploy address-2.md" and data["old_id"] == old["id"]
    new = notes.parse((vault / data["path"]).read_bytes(), data["path"])
    assert new.supersedes == old["path"] and new.kind == "tool" and new.body == NEW_BODY
    marked = old_path.read_text()
    assert marked == before.replace(
        "\n---\n", f"\ninvalid_at: {data['invalid_at']}\nsuperseded_by: {data['path']}\n---\n", 1
    )


def test_superseding_under_another_valid_cards_title_says_so(cli, vault, old):
    """Its own title is the usual case and says nothing; a title another valid card holds leaves
    two cards of one title, which the result reports as capture does."""
    code, data = cli("supersede", old["id"], "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    assert code == 0 and "conflict" not in data and "note" not in data
    _, other = cli("capture", "--title", "VPN gateway", "--body", "The VPN gateway is vpn.example.org on 443.",
                   "--kind", "tool", "--json")
    code, data = cli("supersede", data["id"], "--title", "VPN gateway",
                     "--body", "The ECS deploy address is now 10.0.0.12, port 9090.", "--json")
    assert code == 0 and data["status"] == "superseded" and data["path"] == "07-Tools/VPN gateway-2.md"
    assert data["conflict"] is True and data["collision_paths"] == [other["path"]]
    assert "1 other valid card(s) have this title too (07-Tools/VPN gateway.md)" in data["note"]
    code, text = cli("supersede", data["id"], "--title", "VPN gateway",
                     "--body", "The ECS deploy address is now 10.0.0.13, port 9090.")
    assert code == 0 and "  note: 1 other valid card(s) have this title too" in text


def test_searches_then_show_the_new_card_and_history_stays_reachable(cli, vault, old):
    _, new = cli("supersede", old["id"], "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    _, hits = cli("search", "ECS", "deploy", "--json")
    assert [h["id"] for h in hits["hits"]] == [new["id"]]
    _, both = cli("search", "ECS", "deploy", "--include-invalid", "--json")
    assert [(h["id"], h["valid"]) for h in both["hits"]] == [(new["id"], True), (old["id"], False)]
    _, shown = cli("show", old["id"], "--json")
    first_line = shown["text"].splitlines()[0]
    assert "superseded" in first_line and new["path"] in first_line
    # written and superseded on the same day: no --as-of day holds it, so the hint says how to list it
    assert "--include-invalid" in first_line and "--as-of" not in first_line
    assert shown["valid"] is False and shown["superseded_by"] == new["path"]


def test_the_relation_survives_a_rebuild(cli, vault, old):
    _, new = cli("supersede", old["id"], "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    cli("index", "--rebuild")
    _, shown = cli("show", old["id"], "--json")
    assert shown["valid"] is False and shown["superseded_by"] == new["path"]
    assert cli("show", new["id"], "--json")[1]["supersedes"] == old["path"]


def test_a_superseded_card_cannot_be_superseded_again(cli, vault, old):
    _, new = cli("supersede", old["id"], "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    files = sorted(vault.rglob("*.md"))
    code, data = cli("supersede", old["id"], "--title", "ECS again", "--body", NEW_BODY + " Again.", "--json")
    assert code == 1 and data["error"]["code"] == "rejected"
    assert str(new["id"]) in data["error"]["message"]
    assert sorted(vault.rglob("*.md")) == files


def test_the_kind_defaults_to_the_old_cards_and_can_be_given(cli, vault, old):
    _, same = cli("supersede", old["id"], "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    assert same["path"].startswith("07-Tools/")
    _, other = cli("capture", "--title", "release checklist", "--body", OLD_BODY + " (checklist)", "--json")
    _, moved = cli("supersede", other["id"], "--title", "release checklist", "--body", NEW_BODY,
                   "--kind", "project", "--json")
    assert moved["path"] == "02-Projects/release checklist.md"
    assert notes.parse((vault / moved["path"]).read_bytes(), moved["path"]).kind == "project"


def test_a_short_body_is_refused_and_nothing_changes(cli, vault, old):
    before = (vault / old["path"]).read_bytes()
    code, data = cli("supersede", old["id"], "--title", "ECS", "--body", "too short", "--json")
    assert code == 1 and data["status"] == "rejected"
    assert [p.name for p in vault.rglob("*.md")] == ["ECS deploy address.md"]
    assert (vault / old["path"]).read_bytes() == before


def test_a_failure_while_marking_the_old_card_removes_the_new_one(cli, vault, old, home, monkeypatch):
    before = (vault / old["path"]).read_bytes()

    def disk_full(target, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "replace", disk_full)
    code, data = cli("supersede", old["id"], "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    assert code == 2 and data["error"]["code"] == "write_failed"
    assert [p.name for p in vault.rglob("*.md")] == ["ECS deploy address.md"]
    assert (vault / old["path"]).read_bytes() == before
    assert journals(home) == []


def test_a_crash_between_the_two_writes_is_finished_by_the_next_write(cli, run_cli, vault, old, home):
    old_path = vault / old["path"]
    before = old_path.read_bytes()
    assert die_during_supersede("between-writes", old["id"]) == 9
    new_path = vault / "07-Tools/ECS deploy address-2.md"
    assert new_path.exists() and old_path.read_bytes() == before  # half done
    assert len([j for j in journals(home) if j.endswith(".json")]) == 1

    code, data, _ = run_cli("capture", "--title", "unrelated", "--body", "any write command runs recovery first", "--json")
    assert code == 0 and data["recovered"][0]["action"] == "finished"
    assert notes.parse(old_path.read_bytes(), old["path"]).superseded_by == "07-Tools/ECS deploy address-2.md"
    assert journals(home) == []
    _, hits = cli("search", "ECS", "deploy", "--json")
    assert [h["path"] for h in hits["hits"]] == ["07-Tools/ECS deploy address-2.md"]


def test_a_crash_before_the_new_file_exists_leaves_nothing_behind(cli, vault, old, home):
    before = (vault / old["path"]).read_bytes()
    assert die_during_supersede("before-new-file", old["id"]) == 9
    from memsync.write import vault as vault_api

    done = vault_api.recover(config.load())
    assert [d["action"] for d in done] == ["nothing to undo"]
    assert [p.name for p in vault.rglob("*")  if p.is_file()] == ["ECS deploy address.md"]
    assert (vault / old["path"]).read_bytes() == before and journals(home) == []


def test_a_crash_is_rolled_back_when_the_old_card_is_gone(cli, vault, old, home):
    assert die_during_supersede("between-writes", old["id"]) == 9
    (vault / old["path"]).unlink()  # someone deleted the old card meanwhile
    from memsync.write import vault as vault_api

    done = vault_api.recover(config.load())
    assert [d["action"] for d in done] == ["rolled back"]
    assert list(vault.rglob("*.md")) == [] and journals(home) == []


def test_recovery_leaves_a_supersede_that_is_still_running_alone(run_cli, vault, home):
    running = journal.Entry(home, {"op": "supersede", "vault": os.path.realpath(vault), "old": "a.md",
                                   "new": "b.md", "new_hash": "0", "invalid_at": "2026-01-01T00:00:00+00:00"})
    try:
        code, data, _ = run_cli("capture", "--title", "meanwhile", "--body", "another process writes a card now", "--json")
        assert code == 0 and "recovered" not in data
        assert running.path.exists()
    finally:
        running.finish()
    assert journals(home) == []


def test_a_plan_that_cannot_be_replayed_never_blocks_other_writes(run_cli, vault, home):
    folder = journal.folder(home)
    folder.mkdir(parents=True)
    plan = folder / "supersede-tampered.json"
    plan.write_text(json.dumps({"op": "supersede", "vault": os.path.realpath(vault), "old": "../outside.md",
                                "new": "../outside-2.md", "new_hash": "0", "invalid_at": "2026-01-01"}))
    code, data, _ = run_cli("capture", "--title", "still works", "--body", "a write goes ahead regardless", "--json")
    assert code == 0 and data["status"] == "created"
    assert data["recovered"][0]["action"].startswith("left for later") and plan.exists()


def test_two_supersedes_of_one_card_at_once_leave_one_chain(vault, old):
    procs = [
        subprocess.Popen([str(Path(sys.executable).with_name("memsync")), "supersede", str(old["id"]),
                          "--title", f"ECS deploy address v{n}", "--body", f"{NEW_BODY} Variant {n}.", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        for n in (1, 2)
    ]
    outcomes = []
    for proc in procs:
        out, _err = proc.communicate(timeout=60)  # reads both pipes to the end and closes them
        outcomes.append((proc.returncode, out))
    assert sorted(code for code, _ in outcomes) == [0, 1]
    winner = json.loads(next(out for code, out in outcomes if code == 0))
    marked = notes.parse((vault / old["path"]).read_bytes(), old["path"])
    assert marked.superseded_by == winner["path"]
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md")) == sorted([old["path"], winner["path"]])


def test_a_plain_note_without_frontmatter_can_be_superseded(cli, vault):
    note = vault / "ecs.md"
    note.write_text("# ECS deploy address\n\n" + OLD_BODY + "\n")
    cli("index")
    card_id = cli("search", "ECS", "--json")[1]["hits"][0]["id"]
    code, data = cli("supersede", card_id, "--title", "ECS deploy address", "--body", NEW_BODY, "--json")
    assert code == 0 and data["path"] == "ECS deploy address.md"
    assert note.read_text() == (f"---\ninvalid_at: {data['invalid_at']}\nsuperseded_by: ECS deploy address.md\n---\n"
                                "# ECS deploy address\n\n" + OLD_BODY + "\n")
    assert cli("show", card_id, "--json")[1]["title"] == "ecs"  # a note is titled by its file name


def test_a_crash_between_the_two_writes_is_finished_when_the_watcher_starts(cli, vault, old, home):
    from memsync.watch import Watcher

    old_path = vault / old["path"]
    assert die_during_supersede("between-writes", old["id"]) == 9
    watcher = Watcher(config.load())
    watcher.start()
    try:
        assert watcher.wait_idle(30)
    finally:
        watcher.stop()
    assert notes.parse(old_path.read_bytes(), old["path"]).superseded_by == "07-Tools/ECS deploy address-2.md"
    assert journals(home) == []
    _, hits = cli("search", "ECS", "deploy", "--json")
    assert [h["path"] for h in hits["hits"]] == ["07-Tools/ECS deploy address-2.md"]


# --- issue 19: the new card keeps the old one's fields, so filters keep finding the fact ------

def _old_with_fields(cli, vault):
    from tests.conftest import write_card

    write_card(vault, "03-Knowledge/nginx 站点根目录.md", "nginx 站点根目录",
               "ecs-prod 上 nginx 的站点根目录是 /srv/www，配置在 /etc/nginx/conf.d。",
               kind="knowledge", tags="[nginx, ops]", priority="5", ttl="90d",
               aliases="[webroot]", owner="ops-team  # who to ask", summary="old webroot")
    cli("index")
    _, hits = cli("search", "站点根目录", "--json")
    return hits["hits"][0]["id"]


def test_supersede_keeps_tags_priority_and_other_fields_unless_given(cli, vault):
    old_id = _old_with_fields(cli, vault)
    code, new = cli("supersede", old_id, "--title", "nginx 站点根目录",
                    "--body", "迁移后 ecs-prod 上 nginx 的站点根目录是 /data/www。", "--json")
    assert code == 0 and new["status"] == "superseded"
    card = notes.parse((vault / new["path"]).read_bytes(), new["path"])
    assert card.tags == ("nginx", "ops") and card.priority == "5" and card.ttl == "90d"
    assert card.aliases == ("webroot",)
    text = (vault / new["path"]).read_text()
    assert "owner: ops-team  # who to ask\n" in text  # an unknown key, byte for byte
    assert "summary" not in text  # it summed up the old fact
    assert set(new["inherited"]) == {"tags", "priority", "ttl", "aliases", "owner"}
    _, hits = cli("search", "站点根目录", "--tag", "ops", "--json")
    assert [h["id"] for h in hits["hits"]] == [new["id"]]


def test_supersede_given_fields_replace_the_old_ones_and_empty_clears(cli, vault):
    old_id = _old_with_fields(cli, vault)
    _, new = cli("supersede", old_id, "--title", "nginx 站点根目录", "--tags", "web",
                 "--priority", "", "--ttl", "30d",
                 "--body", "迁移后 ecs-prod 上 nginx 的站点根目录是 /data/www。", "--json")
    card = notes.parse((vault / new["path"]).read_bytes(), new["path"])
    assert card.tags == ("web",) and card.priority is None and card.ttl == "30d"
    assert "tags" not in new["inherited"] and "priority" not in new["inherited"]


def test_mcp_supersede_keeps_the_old_cards_tags_and_priority(server_log, vault, cli):
    from tests.conftest import write_card
    from tests.mcp_helpers import hits, scenario, tool

    write_card(vault, "07-Tools/ECS deploy address.md", "ECS deploy address", OLD_BODY,
               kind="tool", tags="[ecs, deploy]", priority="high")
    cli("index")

    async def body(session):
        old_id = (await hits(session, "ECS deploy"))[0]["id"]
        new = await tool(session, "memory_supersede", id=old_id, title="ECS deploy address", body=NEW_BODY)
        card = notes.parse((vault / new["path"]).read_bytes(), new["path"])
        assert card.tags == ("ecs", "deploy") and card.priority == "high"
        given = await tool(session, "memory_supersede", id=new["id"], title="ECS deploy address",
                           body=NEW_BODY + " Again.", priority="low")
        assert notes.parse((vault / given["path"]).read_bytes(), given["path"]).priority == "low"

    scenario(body)(server_log)
