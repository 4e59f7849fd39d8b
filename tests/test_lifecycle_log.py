"""The retrieval log and feedback (DESIGN §12), through the CLI and the SDK's MCP client."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import stat

from memsync import config
from memsync.store.index import Index

from .conftest import write_card
from .mcp_helpers import scenario, server_log, text_of

__all__ = ["server_log"]  # a fixture, imported for the tests below

AWS = "AKIA" + "IOSFODNN7" + "EXAMPLE"


def _cards(vault, cli):
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "nginx 在 ecs-prod 上的根目录是 /srv/www")
    write_card(vault, "03-Knowledge/deploy.md", "deploy", "发布时 rsync 到 ecs-prod 的 /srv/www 目录")
    cli("index")


def _log(cli, *args):
    code, data = cli("log", "--json", *args)
    assert code == 0
    return data


def test_each_search_is_logged_with_its_hits_scores_and_filters(cli, vault, home):
    _cards(vault, cli)
    _, found = cli("search", "ecs-prod", "--kind", "knowledge", "--json")
    (entry,) = _log(cli)["entries"]
    assert entry["query"] == "ecs-prod" and entry["filters"] == {"kind": "knowledge", "limit": 10}
    assert [h["id"] for h in entry["hits"]] == [h["id"] for h in found["hits"]]
    assert all(isinstance(h["score"], float) for h in entry["hits"]) and entry["matched"] == "all"
    assert entry["opened"] == [] and entry["client"] is None
    mode = stat.S_IMODE(os.stat(config.load().db.path).st_mode)
    assert mode == 0o600  # the log lives in the private index file


def test_a_filter_that_matches_no_entry_says_so_not_that_the_log_is_empty(cli, vault):
    _cards(vault, cli)
    cli("search", "ecs-prod")
    code, text = cli("log", "--query", "zzz")
    assert code == 0 and text.strip() == "no search in the retrieval log matches (1 entry in all)"
    code, _ = cli("log", "-n", 0)
    assert code == 2  # not one entry shown as if asked for
    # an id no card ever had is a mistyped one, and says so; a real card's id no search returned
    # is the plain no-match
    code, text = cli("log", "--card", 1234567)
    assert code == 0 and text.strip().startswith("no card has this id") and "memsync search" in text
    assert _log(cli, "--card", 1234567)["unknown_card"] is True
    nginx = next(h["id"] for h in cli("search", "nginx", "--json")[1]["hits"])
    data = _log(cli, "--card", nginx, "--query", "zzz")
    assert data["entries"] == [] and "unknown_card" not in data


def test_opening_a_hit_is_noted_in_the_search_that_returned_it(cli, vault):
    _cards(vault, cli)
    _, found = cli("search", "ecs-prod", "--json")
    first = found["hits"][0]["id"]
    cli("show", first)
    cli("show", first)
    (entry,) = _log(cli)["entries"]
    assert entry["opened"] == [first]
    code, shown = cli("show", first, "--json")
    assert shown["use"]["returned"] == 1 and shown["use"]["opened"] == 3
    assert [e["query"] for e in _log(cli, "--card", first)["entries"]] == ["ecs-prod"]
    assert _log(cli, "--query", "nothing-like-it")["entries"] == []


def test_the_log_is_capped_and_kept_across_a_rebuild(cli, vault, home):
    _cards(vault, cli)
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"log_cap": 3}))
    for word in ("nginx", "deploy", "rsync", "srv", "www"):
        cli("search", word)
    data = _log(cli)
    assert data["total"] == 3 and [e["query"] for e in data["entries"]] == ["www", "srv", "rsync"]
    code, _ = cli("index", "--rebuild")
    assert code == 0 and _log(cli)["total"] == 3


def test_a_flagged_secret_in_a_query_is_stored_redacted(cli, vault):
    _cards(vault, cli)
    cli("search", "nginx", AWS)
    (entry,) = _log(cli)["entries"]
    assert AWS not in entry["query"] and "[redacted aws_access_key_id]" in entry["query"]
    with sqlite3.connect(config.load().db.path) as conn:
        dump = "\n".join(conn.iterdump())
    assert AWS not in dump


def test_a_flagged_secret_in_a_filter_or_a_feedback_query_is_stored_redacted(cli, vault):
    _cards(vault, cli)
    cli("search", "nginx", "--tag", AWS)
    (entry,) = _log(cli)["entries"]
    assert entry["filters"]["tag"] == "[redacted aws_access_key_id]"
    card = cli("search", "nginx", "--json")[1]["hits"][0]["id"]
    code, data = cli("feedback", card, "--helpful", "--query", f"nginx {AWS}", "--json")
    assert code == 0 and data["query"] == "nginx [redacted aws_access_key_id]"
    with sqlite3.connect(config.load().db.path) as conn:
        dump = "\n".join(conn.iterdump())
    assert AWS not in dump


def test_a_query_pasted_whole_is_logged_cut_and_a_secret_across_the_cut_is_redacted_first(cli, vault):
    _cards(vault, cli)
    pasted = "nginx " + "word " * 197 + AWS + " tail" * 400  # the key spans character 1,000
    assert len(pasted) > 2500 and pasted.index(AWS) < 1000 < pasted.index(AWS) + len(AWS)
    assert cli("search", pasted)[0] in (0, 1)
    (entry,) = _log(cli)["entries"]
    assert len(entry["query"]) == 1001 and entry["query"].endswith("…")
    assert entry["query"].startswith("nginx word") and AWS[:8] not in entry["query"]
    card = cli("search", "nginx", "--json")[1]["hits"][0]["id"]
    _, data = cli("feedback", card, "--helpful", "--query", pasted, "--json")
    assert len(data["query"]) == 1001 and AWS[:8] not in data["query"]


def test_log_searches_false_keeps_no_log(cli, vault, home):
    _cards(vault, cli)
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"log_searches": False}))
    code, _ = cli("search", "nginx")
    assert code == 0 and _log(cli)["total"] == 0


def test_a_read_only_index_skips_the_log_entry(cli, vault):
    """Root writes through file modes, so the index is opened read-only by SQLite itself."""
    from memsync.store import lifelog

    _cards(vault, cli)
    db = config.load().db.path
    index = Index.__new__(Index)
    index._conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    try:
        assert lifelog.record_search(index, "2026-01-01T00:00:00", "q", {}, None, [(1, 1.0)], None, 10) is False
    finally:
        index._conn.close()
    assert _log(cli)["total"] == 0


def test_a_busy_index_still_searches_without_waiting_for_the_log(cli, vault):
    _cards(vault, cli)
    holder = sqlite3.connect(config.load().db.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        code, data = cli("search", "nginx", "--json")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 0 and data["hits"] and _log(cli)["total"] == 0


def test_feedback_through_the_cli_counts_per_card(cli, vault):
    _cards(vault, cli)
    _, found = cli("search", "nginx", "--json")
    card = found["hits"][0]["id"]
    code, data = cli("feedback", card, "--helpful", "--json")
    assert code == 0 and data["feedback"] == "helpful" and data["query"] == "nginx"
    code, data = cli("feedback", card, "--unhelpful", "--query", "root dir", "--json")
    assert data["use"]["helpful"] == 1 and data["use"]["unhelpful"] == 1
    code, _ = cli("feedback", card)
    assert code == 2
    code, out = cli("feedback", card, "--helpful", "--unhelpful", "--json")
    assert code == 2 and out["error"]["message"] == "give one of --helpful or --unhelpful, not both"
    use = cli("show", card, "--json")[1]["use"]
    assert (use["helpful"], use["unhelpful"]) == (1, 1)  # the refused one counted nothing
    code, _ = cli("feedback", 999, "--helpful")
    assert code != 0
    cli("index", "--rebuild")
    _, shown = cli("show", card, "--json")
    assert (shown["use"]["helpful"], shown["use"]["unhelpful"]) == (1, 1)


def test_feedback_verdicts_are_capped_as_the_log_is_and_the_counts_keep_every_one(cli, vault, home):
    _cards(vault, cli)
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"log_cap": 3}))
    card = cli("search", "nginx", "--json")[1]["hits"][0]["id"]
    for n in range(5):
        cli("feedback", card, "--helpful", "--query", f"q{n}")
    cli("feedback", card, "--unhelpful", "--query", "q5")
    with _open() as index:
        kept = [q for (q,) in index._conn.execute("SELECT query FROM feedback ORDER BY seq")]
    assert kept == ["q3", "q4", "q5"]  # the oldest verdicts went first
    use = cli("show", card, "--json")[1]["use"]
    assert (use["helpful"], use["unhelpful"]) == (5, 1)


def test_purge_clears_a_cards_feedback(cli, vault):
    _cards(vault, cli)
    _, found = cli("search", "deploy", "--json")
    card = found["hits"][0]["id"]
    cli("search", "ecs-prod OR deploy", "--json")  # more cards than the purged one
    cli("feedback", card, "--helpful")

    def logged():
        with _open() as index:
            return [json.loads(h) for (h,) in index._conn.execute("SELECT hits FROM retrieval_log ORDER BY seq")]

    before = logged()
    assert any(i == card for hits in before for i, _ in hits) and any(i != card for hits in before for i, _ in hits)
    _, deleted = cli("delete", card, "--json")
    cli("delete", "--purge", deleted["trash_path"])
    with _open() as index:
        assert index._conn.execute("SELECT count(*) FROM feedback WHERE id = ?", (card,)).fetchone()[0] == 0
    # the searches stay logged; the purged card leaves their hits, the others keep their place
    assert logged() == [[h for h in hits if h[0] != card] for hits in before]


def _open():
    from contextlib import closing

    return closing(Index(config.load().db.path))


def test_mcp_searches_are_logged_with_the_client_name_and_feedback_works(server_log, vault, cli):
    _cards(vault, cli)

    async def body(session):
        found = await session.call_tool("memory_search", {"query": "ecs-prod"})
        card = int(text_of(found).splitlines()[2].split()[0])
        await session.call_tool("memory_get", {"id": card})
        verdict = await session.call_tool("memory_get", {"id": card, "feedback": "helpful"})
        assert not verdict.is_error and "helpful" in text_of(verdict)
        assert "/srv/www" not in text_of(verdict)  # the card is not sent again
        again = await session.call_tool("memory_get", {"id": card})
        assert "helpful 1" in text_of(again)

    scenario(body, options=())(server_log)
    (entry,) = _log(cli)["entries"]
    assert entry["client"] and entry["opened"]


def test_redaction_catches_each_secret_class_the_scanner_knows():
    from memsync import secrets
    from memsync.lifecycle.redact import redacted

    samples = [AWS, "ghp_" + "a1" * 18, "xoxb-" + "123456789", "AIza" + "b" * 35,
               "sk-" + "abc123" * 4, "password=hunter2x9", "密码：abc123xyz", "-----BEGIN PRIVATE KEY-----",
               "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKKF2Q"]
    for sample in samples:
        query = f"登录 {sample} 服务器"
        assert secrets.scan_text(query, "q"), sample
        assert sample not in redacted(query) and "[redacted" in redacted(query), sample
    assert redacted("nginx ecs-prod 根目录") == "nginx ecs-prod 根目录"


def test_the_log_shows_every_search_on_this_machines_clock(vault, run_cli, monkeypatch):
    """A search at +14:00 then one at -11:00 a moment later: written as each process's clock
    read, the later showed a day earlier than the one before it."""
    _cards(vault, lambda *args: run_cli(*args)[:2])
    for zone in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):
        monkeypatch.setenv("TZ", zone)
        assert run_cli("search", "ecs-prod")[0] == 0
    monkeypatch.setenv("TZ", "UTC")
    code, text, _err = run_cli("log")
    shown = [line.split()[0] for line in text.splitlines() if "'ecs-prod'" in line]
    at = [entry["at"] for entry in run_cli("log", "--json")[1]["entries"]]
    in_utc = [dt.datetime.fromisoformat(a).astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") for a in at]
    assert code == 0 and shown == in_utc and shown == sorted(shown, reverse=True)
    code, text, _err = run_cli("show", _log(lambda *a: run_cli(*a)[:2])["entries"][0]["hits"][0]["id"])
    assert f"last returned {in_utc[0][:10]}" in text
