"""`memsync audit` reports and changes nothing; its near-duplicate groups (memsync.lifecycle.shingles)."""

from __future__ import annotations

import hashlib
import json

from memsync import config
from memsync.lifecycle import duplicates, shingles

from .conftest import write_card
from .mcp_helpers import server_log

__all__ = ["server_log"]  # a fixture, imported for a test below

EN = ("The deploy script copies the static files to the web root on ecs-prod. It then reloads "
      "nginx so the new files are served. A failed reload leaves the old files in place. ")
ZH = "部署脚本把静态文件复制到 ecs-prod 的站点根目录。然后重新加载 nginx，新文件就生效了。重载失败时旧文件保持不变。"


def tree_digest(*folders) -> dict:
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _vault(vault, cli, home, rules=None):
    write_card(vault, "03-Knowledge/deploy.md", "deploy", EN)
    write_card(vault, "03-Knowledge/deploy-notes.md", "deploy notes", EN.replace("It then", "Then it") + "Check the logs.")
    write_card(vault, "03-Knowledge/部署.md", "部署", ZH)
    write_card(vault, "03-Knowledge/部署笔记.md", "部署笔记", ZH.replace("然后", "之后") + "记得看日志。")
    write_card(vault, "03-Knowledge/other.md", "other", "Backups of the database run nightly at two, kept for thirty days.")
    write_card(vault, "03-Knowledge/long.md", "long", "A long card without a summary. " * 30)
    write_card(vault, "03-Knowledge/oops.md", "oops", "A mistake filed under knowledge, about rsync flags.", kind="mistake")
    write_card(vault, "03-Knowledge/old.md", "old", "This fact expired on its own, nobody replaced it.",
               invalid_at="2020-01-01")
    write_card(vault, "03-Knowledge/orphan.md", "orphan", "Points at a successor that does not exist anywhere.",
               supersedes="03-Knowledge/gone.md")
    if rules:
        home.mkdir(exist_ok=True)
        (home / "config.json").write_text(json.dumps({"folder_rules": rules}))
    cli("index")


def test_audit_reports_each_section(cli, vault, home):
    _vault(vault, cli, home, rules={"mistake": "08-Mistakes"})
    code, data = cli("audit", "--json")
    assert code == 0
    groups = {frozenset(c["path"] for c in g["cards"]) for g in data["duplicates"]}
    assert groups == {frozenset({"03-Knowledge/deploy.md", "03-Knowledge/deploy-notes.md"}),
                      frozenset({"03-Knowledge/部署.md", "03-Knowledge/部署笔记.md"})}
    for group in data["duplicates"]:
        (keeper,) = [c for c in group["cards"] if c["keeper"]]
        assert keeper["id"] == group["keeper"] and group["why"] and 0 < group["similarity"] <= 1
        assert keeper["path"].endswith(("notes.md", "笔记.md")) and "longest" in group["why"]
    assert [e["path"] for e in data["long_without_summary"]] == ["03-Knowledge/long.md"]
    assert [(e["path"], e["to"]) for e in data["misfiled"]] == [("03-Knowledge/oops.md", "08-Mistakes/oops.md")]
    assert [e["path"] for e in data["expired"]] == ["03-Knowledge/old.md"]
    assert any("gone.md" in e["message"] for e in data["loose_chains"])
    code, text = cli("audit")
    assert "near-duplicates: 2 group(s)" in text and "long cards without a summary: 1" in text


def test_no_folder_rule_is_built_in(cli, vault, home):
    _vault(vault, cli, home)
    _, data = cli("audit", "--json")
    assert data["misfiled"] == []


def test_use_shows_in_the_audit(cli, vault, home):
    _vault(vault, cli, home)
    _, found = cli("search", "backups", "--json")
    card = found["hits"][0]["id"]
    cli("feedback", card, "--unhelpful")
    _, data = cli("audit", "--json")
    assert [e["id"] for e in data["unhelpful"]] == [card]


def test_audit_changes_nothing(cli, vault, home):
    _vault(vault, cli, home, rules={"mistake": "08-Mistakes"})
    cli("search", "deploy")
    before = tree_digest(vault, home)
    code, _ = cli("audit", "--json")
    assert code == 0
    cli("audit")
    assert tree_digest(vault, home) == before
    assert config.load().db.path.parent == home


def test_shingles_are_cjk_aware():
    assert shingles.grams("部署脚本") == {"部署脚", "署脚本"}
    assert shingles.grams("Deploy the Site") == {"deploy the", "the site"}
    assert shingles.grams("用prometheus单独管理") >= {"单独管"}
    assert len(shingles.shingles("部署脚本")) == 2


def test_near_duplicates_group_and_strangers_do_not():
    texts = [EN, EN + "Check the logs.", ZH, ZH + "记得看日志。",
             "Backups of the database run nightly at two, kept for thirty days."]
    found = shingles.groups([shingles.shingles(t) for t in texts], 0.6)
    assert [g.members for g in found] == [(0, 1), (2, 3)]
    assert all(0.6 <= g.similarity <= 1 for g in found)


def test_memory_stats_check_gives_agents_the_audit_in_short(server_log, vault, cli, home):
    from .mcp_helpers import scenario, text_of

    _vault(vault, cli, home)

    async def body(session):
        result = await session.call_tool("memory_stats", {"check": True})
        text = text_of(result)
        assert "audit:" in text and "duplicates" in text and "memsync consolidate" in text

    scenario(body, options=())(server_log)


def test_the_reason_a_card_is_kept_is_the_rule_that_decided():
    """Each rule is asked only of the cards still level with the keeper on the rules before it."""
    def card(id_, chars, updated="2026-01-01"):
        return duplicates.Candidate(id_, "vault", f"{id_}.md", "t", "x" * chars, updated, True)

    short, long_a, long_b = card(1, 100), card(5, 200), card(3, 200)
    keeper = max([short, long_a, long_b], key=duplicates.keeper_key)
    assert keeper is long_b
    assert duplicates.why_kept(keeper, [short, long_a]) == "lowest id of cards alike in use, date and length"
    older, same_day_short, newest_long = card(7, 900, "2025-01-01"), card(8, 50, "2026-02-01"), card(9, 60, "2026-02-01")
    assert duplicates.why_kept(newest_long, [older, same_day_short]) == "longest (60 characters)"
    assert duplicates.why_kept(card(2, 10, "2026-03-01"), [older, same_day_short]) == "newest (updated 2026-03-01)"


def test_the_newest_of_near_duplicates_is_the_latest_moment_not_the_latest_text(cli, vault):
    """10:00 at +14:00 is 20:00 the day before in UTC, nine hours before 05:00 UTC that day; as
    text it sorted after it, and the older card was kept while the newer was to be merged away."""
    body = ("The staging database lives on the db2 host behind the bastion, port 5433; backups run "
            "nightly at two with pg_dump into the backup bucket, and restore drills run monthly.")
    write_card(vault, "03-Knowledge/east.md", "Staging database", body, updated="2026-11-06T10:00:00+14:00")
    write_card(vault, "03-Knowledge/utc.md", "Staging database notes", body + " Checked.",
               updated="2026-11-06T05:00:00+00:00")
    assert cli("index")[0] == 0
    (group,) = cli("audit", "--json")[1]["duplicates"]
    keeper = next(c for c in group["cards"] if c["keeper"])
    assert keeper["path"] == "03-Knowledge/utc.md" and group["why"].startswith("newest")


def test_an_index_no_card_ever_reached_is_not_reported_as_a_clean_memory(cli, vault, home):
    cli("init")  # the index is made over a vault still empty; cards come later, nothing indexes them
    write_card(vault, "03-Knowledge/long.md", "long", "A long card without a summary. " * 30)
    code, data = cli("audit", "--json")
    assert code == 0 and data["cards"] == 0 and data["notes"] == [{"code": "index_empty"}]
    code, plan = cli("consolidate", "--json")
    assert code == 0 and plan["empty"] and plan["notes"] == [{"code": "index_empty"}]
    code, text = cli("audit")
    assert "nothing to tidy" not in text and "run `memsync index`" in text
    cli("index")
    code, data = cli("audit", "--json")
    assert data["cards"] == 1 and "notes" not in data


def test_an_indexed_vault_that_holds_no_note_is_told_so_not_to_index_again(cli, vault, home):
    """Indexed and empty, search said "the index is empty: run `memsync index`", and running it
    changed nothing. A file that is not a note, or a note in a dot-folder, is no note."""
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "workspace.md").write_text("not a note of the vault")
    (vault / "image.png").write_bytes(b"\x89PNG")
    assert cli("index")[0] == 0
    code, out = cli("search", "nginx", "--json")
    empty = {"code": "vault_empty", "path": str(vault), "set_up": True}  # MEMSYNC_VAULT names it
    assert code == 1 and out["notes"] == [empty]
    assert "holds no notes yet" in out["note"] and "memsync capture" in out["note"]
    assert cli("audit", "--json")[1]["notes"] == [empty]
    from memsync.mcp import text as mcp_text  # and a model is told in its own words

    assert "memory_capture" in mcp_text.search_note(out["notes"])
    write_card(vault, "notes/nginx.md", "nginx", "nginx serves /srv/www on the edge box")
    code, out = cli("search", "nginx", "--json")  # a note now, not yet indexed: index it
    assert code == 1 and out["notes"] == [{"code": "index_empty"}]


def _old_cards(vault, cli):
    for name in ("nginx", "backups", "rsync"):
        write_card(vault, f"03-Knowledge/{name}.md", name, f"How {name} is set up on ecs-prod, written long ago.",
                   created="2020-01-01")
    cli("index")


def test_cards_no_search_returned_are_listed_only_once_the_log_spans_stale_days(cli, vault):
    """A log begun today cannot say which cards no search returned in 90 days: it said all of them."""
    import sqlite3
    from datetime import date, timedelta

    _old_cards(vault, cli)
    returned = cli("search", "nginx", "--json")[1]["hits"][0]["id"]
    _, data = cli("audit", "--json")
    assert data["not_returned"] == [] and data["not_returned_known"] is False
    assert data["log_since"][:10] == date.today().isoformat()
    code, text = cli("audit")
    assert "not returned by any search lately: not known yet (the retrieval log began" in text
    with sqlite3.connect(config.load().db.path) as conn:  # a log that has watched for 200 days
        long_ago = (date.today() - timedelta(days=200)).isoformat() + "T09:00:00+00:00"
        conn.execute("UPDATE meta SET value = ? WHERE key = 'log_started'", (long_ago,))
    _, data = cli("audit", "--json")
    assert data["not_returned_known"] is True
    assert sorted(e["path"] for e in data["not_returned"]) == ["03-Knowledge/backups.md", "03-Knowledge/rsync.md"]
    assert returned not in {e["id"] for e in data["not_returned"]}


def test_with_the_log_off_the_audit_says_it_cannot_tell_which_cards_are_not_returned(cli, vault, home):
    _old_cards(vault, cli)
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"log_searches": False}))
    _, data = cli("audit", "--json")
    assert data["not_returned"] == [] and data["not_returned_known"] is False and data["log_since"] is None
    assert '(the retrieval log is off: "log_searches": false in config.json)' in cli("audit")[1]


def test_a_card_returned_often_and_never_opened_is_listed_until_it_is_opened(cli, vault):
    _old_cards(vault, cli)
    for _ in range(10):
        found = cli("search", "rsync", "--json")[1]
    card = found["hits"][0]["id"]
    _, data = cli("audit", "--json")
    assert [(e["id"], e["returned"], e["opened"]) for e in data["returned_never_opened"]] == [(card, 10, 0)]
    cli("show", card)
    assert cli("audit", "--json")[1]["returned_never_opened"] == []
