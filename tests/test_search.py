"""Search behaviour through the CLI and the library, on a real vault and index."""

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import write_card
from .helpers import found, found_strict, sync

JAPANESE = Path(__file__).resolve().parents[1] / "bench" / "japanese" / "vault"  # bench/ja_notes.py


@pytest.fixture
def ops_vault(vault):
    write_card(vault, "03-Knowledge/ssh.md", "服务器登录", "生产服务器登录使用私钥，不再用密码。", tags=["ssh"])
    write_card(vault, "02-Projects/ecs.md", "部署地址", "ecs-prod 在阿里云华东，路径 ~/.ssh/id_ed25519。",
               kind="project", tags=["deploy", "aliyun"])
    write_card(vault, "03-Knowledge/db.md", "Local database", "We keep state in sqlite3 with WAL mode.")
    write_card(vault, "03-Knowledge/mon.md", "监控", "用prometheus单独管理告警规则。")
    write_card(vault, "03-Knowledge/tokyo.md", "旅行", "东京的酒店很贵，后来去了京都。")
    write_card(vault, "03-Knowledge/tokyo2.md", "地址", "住在东京都新宿区。")
    sync()
    return vault


@pytest.mark.parametrize("query,path", [
    ("私钥", "03-Knowledge/ssh.md"),
    ("阿里云", "02-Projects/ecs.md"),
    ("ecs-prod", "02-Projects/ecs.md"),
    ("id_ed25519", "02-Projects/ecs.md"),
    ("prometheus", "03-Knowledge/mon.md"),
    ("ＷＡＬ", "03-Knowledge/db.md"),
])
def test_keywords_find_their_card(ops_vault, query, path):
    assert found(query)[0] == path


def test_prefix_tier_finds_sqlite_in_sqlite3(ops_vault, cli):
    code, out = cli("search", "sqlite", "--json")
    assert code == 0
    assert out["hits"][0]["path"] == "03-Knowledge/db.md"
    assert out["matched"] == "all-prefix"


def test_cjk_phrase_is_an_exact_substring(ops_vault):
    assert found_strict("东京都") == ["03-Knowledge/tokyo2.md"]
    assert found("东京都") == ["03-Knowledge/tokyo2.md", "03-Knowledge/tokyo.md"]  # 东京 … 京都, below


@pytest.mark.parametrize("char,path", [
    ("钥", "03-Knowledge/ssh.md"),  # the last character of its run: 私钥，
    ("私", "03-Knowledge/ssh.md"),  # inside a run
    ("贵", "03-Knowledge/tokyo.md"),
])
def test_a_single_cjk_character_is_found_anywhere_in_a_run(ops_vault, cli, char, path):
    code, out = cli("search", char, "--json")
    assert code == 0
    assert [h["path"] for h in out["hits"]] == [path]
    assert out["matched"] == "all"


def test_characters_typed_as_words_match_anywhere_in_the_or_tiers_too(ops_vault):
    # no card has both, so the OR tier answers, and each character still matches inside words
    assert sorted(found("钥 贵")) == ["03-Knowledge/ssh.md", "03-Knowledge/tokyo.md"]


def test_a_single_cjk_character_narrows_a_multi_word_query(ops_vault):
    assert found_strict("京 酒店") == ["03-Knowledge/tokyo.md"]
    assert sorted(found("京")) == ["03-Knowledge/tokyo.md", "03-Knowledge/tokyo2.md"]


def test_any_tier_reports_coverage_and_low_confidence(ops_vault, cli):
    code, out = cli("search", "私钥 kubernetes", "--json")
    assert out["matched"] == "any"
    hit = out["hits"][0]
    assert hit["path"] == "03-Knowledge/ssh.md"
    assert hit["coverage"] == pytest.approx(0.5)
    assert "low confidence" in out["note"]


def test_exact_tiers_have_no_coverage(ops_vault, cli):
    assert cli("search", "私钥", "--json")[1]["hits"][0]["coverage"] is None


@pytest.mark.parametrize("query", ['a*b -c NEAR( "x" OR:', '"', "AND OR NOT", "*", "col:val", "^x"])
def test_fts5_syntax_never_errors(ops_vault, run_cli, query):
    code, out, err = run_cli("search", query, "--json")
    if query in ('"', "*"):  # no word to search for: refused as an empty query is, saying what to send
        assert code == 2 and out["error"]["code"] == "bad_argument", (out, err)
        assert "pass keywords or identifiers" in out["error"]["message"]
        return
    assert code in (0, 1), err
    assert "hits" in out


def test_no_hits_exits_1(ops_vault, cli):
    code, out = cli("search", "nonexistentword", "--json")
    assert code == 1 and out["hits"] == []


def test_a_page_that_does_not_hold_every_match_says_so(vault, cli):
    for i in range(3):
        write_card(vault, f"n/{i}.md", f"card {i}", "common word here")
    sync()
    page = cli("search", "common", "-n", "2", "--json")[1]
    assert len(page["hits"]) == 2 and page["more"] is True
    assert "more cards matched than the 2 shown" in page["note"]
    whole = cli("search", "common", "-n", "3", "--json")[1]
    assert len(whole["hits"]) == 3 and whole["more"] is False and whole["note"] is None


def test_an_unknown_kind_or_tag_is_named_in_the_note(ops_vault, cli):
    code, out = cli("search", "ecs", "--kind", "Project", "--json")
    assert code == 1 and "no card has kind 'Project'" in out["note"] and "project" in out["note"]
    code, out = cli("search", "ecs", "--tag", "aliy", "--json")
    assert code == 1 and "no card has the tag 'aliy'" in out["note"]
    code, out = cli("search", "私钥", "--kind", "project", "--json")
    assert code == 1 and out["note"].startswith("no card matched with kind project")


def test_words_found_apart_are_not_called_partial_coverage(vault, cli):
    write_card(vault, "trip.md", "旅行", "下周去东京，住在京都附近")
    sync()
    out = cli("search", "东京都", "--json")[1]
    assert out["matched"] == "any" and out["hits"][0]["coverage"] == 1.0
    assert "matched apart" in out["note"] and "only some" not in out["note"]


def test_limit_is_clamped(vault, cli):
    for i in range(25):
        write_card(vault, f"n/{i}.md", f"card {i}", "common word here")
    sync()
    assert len(cli("search", "common", "-n", "100", "--json")[1]["hits"]) == 20
    assert len(cli("search", "common", "-n", "-1", "--json")[1]["hits"]) == 1
    assert len(cli("search", "common", "-n", "0", "--json")[1]["hits"]) == 1


def test_filters_kind_tag_source(ops_vault, cli):
    assert [h["path"] for h in cli("search", "ssh", "--tag", "ssh", "--json")[1]["hits"]] == [
        "03-Knowledge/ssh.md"]
    assert cli("search", "ssh", "--kind", "project", "--json")[1]["hits"][0]["path"] == "02-Projects/ecs.md"
    assert cli("search", "ssh", "--source", "vault", "--json")[0] == 0
    code, out = cli("search", "ssh", "--source", "nope", "--json")
    assert code == 2 and "unknown source" in out["error"]["message"]


def test_tag_filter_is_exact(ops_vault, cli):
    assert cli("search", "ecs", "--tag", "aliy", "--json")[1]["hits"] == []


def test_title_hit_ranks_above_body_mention(vault):
    write_card(vault, "body.md", "Something else", "this mentions nginx once among many other words")
    write_card(vault, "title.md", "nginx", "configuration notes for the web server")
    sync()
    assert found("nginx") == ["title.md", "body.md"]


def test_aliases_are_searchable_like_titles(vault):
    write_card(vault, "a.md", "正式名称", "body text here", aliases=["别名甲"])
    sync()
    assert found("别名甲") == ["a.md"]


@pytest.fixture
def superseded(vault):
    write_card(vault, "03-Knowledge/old.md", "ECS 地址", "ECS 部署在 10.0.0.1 端口 8080，管理端口 8081，监控端口 8082",
               created="2026-01-10T09:00:00+08:00", invalid_at="2026-03-01T10:00:00+08:00",
               superseded_by="03-Knowledge/new.md")
    write_card(vault, "03-Knowledge/new.md", "ECS 地址（新）", "ECS 迁到 10.0.0.9 端口 9090",
               created="2026-03-01T10:00:00+08:00", supersedes="03-Knowledge/old.md")
    sync()


def test_default_search_hides_invalid_cards(superseded):
    assert found("ECS") == ["03-Knowledge/new.md"]


def test_include_invalid_ranks_invalid_below_valid(superseded, cli):
    hits = cli("search", "端口", "--include-invalid", "--json")[1]["hits"]
    # the old card says 端口 three times, but an invalid card never outranks a valid one
    assert [(h["path"], h["valid"]) for h in hits] == [
        ("03-Knowledge/new.md", True), ("03-Knowledge/old.md", False)]


def test_as_of_shows_what_was_true_that_day(superseded):
    assert found("ECS", as_of="2026-02-01") == ["03-Knowledge/old.md"]
    assert found("ECS", as_of="2026-03-01") == ["03-Knowledge/new.md"]  # by day, not by time
    assert found("ECS", as_of="2026-01-09") == []


def test_as_of_treats_missing_created_as_always_existed(vault):
    write_card(vault, "undated.md", "undated", "timeless card")
    sync()
    assert found("timeless", as_of="1999-01-01") == ["undated.md"]


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "2026-02-30", "20260101"])
def test_malformed_as_of_is_an_error(superseded, cli, bad):
    code, out = cli("search", "ECS", "--as-of", bad, "--json")
    assert code == 2 and "YYYY-MM-DD" in out["error"]["message"] or "real date" in out["error"]["message"]


def test_as_of_takes_a_date_typed_in_full_width_digits(superseded, cli):
    """A Chinese input method in full-width mode types `２０２６－０２－０１`: it was refused as
    "not a real date"."""
    code, out = cli("search", "ECS", "--as-of", "２０２６－０２－０１", "--json")
    assert code == 0 and [hit["path"] for hit in out["hits"]] == ["03-Knowledge/old.md"]
    code, out = cli("search", "ECS", "--as-of", "٢٠٢٦-٠٢-٠١", "--json")  # other digits: still refused
    assert code == 2 and "YYYY-MM-DD" in out["error"]["message"]


def test_snippet_is_around_the_match(vault):
    write_card(vault, "long.md", "long", "filler " * 200 + "needleword at the end")
    sync()
    from memsync import api, config
    from memsync.search.lexical import Query

    hit = api.search(config.load(), Query("needleword"))["hits"][0]
    assert "needleword" in hit["snippet"] and hit["snippet"].startswith("…")


def test_search_without_index_says_how_to_build_it(cli):
    code, out = cli("search", "x", "--json")
    assert code == 2 and "memsync index" in out["error"]["message"]


def test_as_of_ranks_by_relevance_alone(vault):
    """On the day asked about, a card that is invalid today was the current fact: no penalty."""
    write_card(vault, "later-invalid.md", "端口 端口", "端口 端口 端口 8080", created="2026-01-01",
               invalid_at="2026-05-01")
    write_card(vault, "still-valid.md", "other", "a passing mention of 端口 among other words here",
               created="2026-01-01")
    sync()
    assert found("端口", as_of="2026-04-01") == ["later-invalid.md", "still-valid.md"]
    assert found("端口", include_invalid=True) == ["still-valid.md", "later-invalid.md"]


def test_a_card_marked_invalid_from_a_future_day_is_valid_until_then(vault, cli):
    write_card(vault, "token.md", "deploy token", "the deploy token rotates yearly",
               invalid_at="2999-01-01")
    sync()
    hits = cli("search", "deploy token", "--json")[1]["hits"]
    assert [(h["path"], h["valid"]) for h in hits] == [("token.md", True)]
    assert found("deploy token", as_of="2998-12-31") == ["token.md"]
    assert found("deploy token", as_of="2999-01-01") == []
    shown = cli("show", hits[0]["id"], "--json")[1]
    assert shown["valid"] is True and shown["text"].startswith("⚠ This card stops being valid on 2999-01-01")
    stats = cli("stats", "--json")[1]
    assert (stats["valid"], stats["invalid"]) == (1, 0)


def test_an_invalid_at_that_is_not_a_date_hides_the_card_and_is_reported(vault, cli):
    write_card(vault, "soon.md", "db host", "the db host moves to a new rack", invalid_at="soon")
    sync()
    assert found("db host") == []
    assert found("db host", as_of="2026-01-01") == []  # the same rule on every day
    hits = cli("search", "db host", "--include-invalid", "--json")[1]["hits"]
    assert [(h["path"], h["valid"]) for h in hits] == [("soon.md", False)]
    shown = cli("show", hits[0]["id"], "--json")[1]
    assert "not a date" in shown["text"].splitlines()[0]
    problems = cli("stats", "--json")[1]["problems"]
    assert any(p["path"] == "soon.md" and "invalid_at 'soon' is not a date" in p["message"] for p in problems)



@pytest.mark.parametrize("mark", ["2026-02-30", "2026-02-29", "2026-13-01", "0000-01-01",
                                  "2026-02-30T10:00:00+08:00"])
def test_an_invalid_at_on_a_day_that_cannot_be_is_no_date(vault, cli, mark):
    """It was ordered by its text: `2026-02-30` left the card valid on 2026-02-27 and not on
    2026-03-01, and no problem said why."""
    write_card(vault, "feb.md", "quota limit", "the quota limit is ten thousand", invalid_at=mark)
    sync()
    for day in ("2026-02-27", "2026-03-01", "2025-01-01"):
        assert found("quota limit", as_of=day) == [], day
    hits = cli("search", "quota limit", "--include-invalid", "--json")[1]["hits"]
    assert [(h["path"], h["valid"]) for h in hits] == [("feb.md", False)]
    assert "not a date" in cli("show", hits[0]["id"], "--json")[1]["text"].splitlines()[0]
    stats = cli("stats", "--json")[1]
    assert (stats["valid"], stats["invalid"]) == (0, 1)
    assert any(p["path"] == "feb.md" and f"invalid_at '{mark}' is not a date" in p["message"]
               for p in stats["problems"])


@pytest.mark.parametrize("mark", ["[]", "{}", '""', "''", '"  "', "", "null", "[null, '']"])
def test_an_empty_invalid_at_retires_no_card(vault, cli, mark):
    write_card(vault, "empty.md", "quota limit", "the quota limit is ten thousand", invalid_at=mark)
    sync()
    assert found("quota limit") == ["empty.md"]
    stats = cli("stats", "--json")[1]
    assert (stats["valid"], stats["invalid"], stats["problems"]) == (1, 0, [])

def test_an_empty_as_of_is_an_error_not_no_filter(ops_vault, cli):
    code, out = cli("search", "私钥", "--as-of", "", "--json")
    assert code == 2 and "YYYY-MM-DD" in out["error"]["message"]


def test_snippet_keeps_the_cards_own_characters_and_starts_at_a_word():
    from memsync.search.snippets import snippet

    assert snippet("登录使用私钥，不再用密码。", ("私钥",)) == "登录使用私钥，不再用密码。"
    body = " ".join(f"word{i}" for i in range(80)) + " needle here"
    piece = snippet(body, ("needle",))
    assert piece.startswith("…word") and "needle" in piece


def test_a_body_that_fits_the_window_is_shown_whole_and_a_match_near_the_end_fills_it():
    from memsync.search.snippets import SNIPPET_CHARS, snippet

    body = "The site root is /srv/www; the config is in /etc/nginx/sites-enabled."
    assert snippet(body, ("sites-enabled",)) == body  # once cut to "…e site root is"
    longer = " ".join(f"word{i}" for i in range(40)) + " the needle"
    piece = snippet(longer, ("needle",))
    assert piece.startswith("…") and piece.endswith("the needle") and len(piece) >= SNIPPET_CHARS - 10


def test_a_snippet_finds_a_full_width_match_and_opens_a_card_found_by_its_title_alone():
    from memsync.search.snippets import SNIPPET_CHARS, snippet

    # only NFKC folding finds ＳＹＮＣ for the query `sync`; the window is the card's own text
    assert "ＳＹＮＣ" in snippet("The vault uses ＳＹＮＣ nightly.", ("sync",))
    # a long body without the words (the title matched): its opening, marked as cut
    body = " ".join(f"word{i}" for i in range(400))
    piece = snippet(body, ("needle",))
    assert piece == body[:SNIPPET_CHARS] + "…"


def test_in_an_as_of_view_hits_are_valid_on_that_day(superseded, cli):
    hits = cli("search", "ECS", "--as-of", "2026-02-01", "--json")[1]["hits"]
    assert [(h["path"], h["valid"]) for h in hits] == [("03-Knowledge/old.md", True)]


def test_when_only_superseded_cards_match_the_note_says_how_to_see_them(superseded, cli):
    code, out = cli("search", "8081", "--json")  # only the old card mentions this port
    assert code == 1 and out["hits"] == []
    assert "1 no longer valid" in out["note"] and "--include-invalid" in out["note"]


def test_unreadable_dates_are_reported(vault, cli):
    write_card(vault, "list.md", "listed mark", "marked invalid with a list value", invalid_at=["2026-01-01"])
    write_card(vault, "when.md", "vague creation", "created on a day nobody wrote down", created="yesterday")
    sync()
    assert found("listed mark") == [] and found("vague creation") == ["when.md"]
    messages = {p["path"]: p["message"] for p in cli("stats", "--json")[1]["problems"]}
    assert "is not a date" in messages["list.md"]
    assert "created 'yesterday' is not a date" in messages["when.md"]



@pytest.mark.parametrize("question,answer", [
    ("ワンストップ特例が無効になったのはなぜ", "生活/確定申告.md"),  # ふるさと納税 has the heading ワンストップ特例
    ("Dockerの古いイメージを消したら何GB空いた", "日記/2026-11-23.md"),  # Docker Compose メモ: heading 古いイメージの掃除
    ("コンテナのパスワードはどこに書く", "サーバー/Docker Compose メモ.md"),  # SSH 鍵: heading パスワード認証を止める
])
def test_a_heading_sharing_a_few_characters_of_a_question_does_not_outrank_its_answer(vault, question, answer):
    # A Japanese question is one run of characters, matched by its bigrams only. A heading or
    # tag holding a few of them names a topic of its note, not the answer to this question.
    shutil.copytree(JAPANESE, vault, dirs_exist_ok=True)
    sync()
    assert found(question)[0] == answer


@pytest.mark.parametrize("args", [
    ["kubernetes"], ["nginx", "--kind", "mistake"], ["nginx", "--tag", "nope"],
    ["nginx", "--as-of", "2000-01-01"], ["nginx", "--source", "vault", "--kind", "tool"],
])
def test_a_search_that_finds_nothing_always_says_why(ops_vault, run_cli, args):
    code, out, err = run_cli("search", *args)  # the CLI prints the note, and only the note
    assert code == 1 and out == "" and err.startswith("memsync: ") and len(err.strip()) > 20, err


def cli_stderr(*args):
    from click.testing import CliRunner

    from memsync.cli import main

    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stderr


def test_an_invalid_card_matching_closer_than_the_hits_is_named(vault, cli):
    # issue 19: the successor of a pair was deleted; the old card, still marked invalid, holds
    # every word of the query, while valid cards hold only some of them
    write_card(vault, "03-Knowledge/webroot.md", "nginx 站点根目录位置", "ecs-prod 上 nginx 的站点根目录是 /srv/www",
               invalid_at="2026-03-01", superseded_by="03-Knowledge/gone.md")
    write_card(vault, "03-Knowledge/logs.md", "nginx logs", "nginx 的日志在 /var/log/nginx，按天切分")
    cli("index")
    code, out = cli("search", "nginx", "站点根目录", "--json")
    assert code == 0 and [h["path"] for h in out["hits"]] == ["03-Knowledge/logs.md"]
    assert out["matched"].startswith("any")
    assert {"code": "hidden_closer", "count": 1, "more": False, "tier": "all",
            "hits_tier": out["matched"]} in out["notes"]
    _, err = cli_stderr("search", "nginx", "站点根目录")
    assert "1 no longer valid (superseded) card(s) match every word" in err and "--include-invalid" in err
    # a valid card holding every word: nothing to say
    write_card(vault, "03-Knowledge/new.md", "nginx 站点根目录", "迁移后 nginx 的站点根目录是 /data/www")
    cli("index")
    _, out = cli("search", "nginx", "站点根目录", "--json")
    assert out["matched"] == "all" and not any(n["code"] == "hidden_closer" for n in out["notes"])


_FILLER = st.lists(st.sampled_from(["alpha", "登录", "服务器，", "Ünïcode", "x" * 30, "ﬁle", "ǅ"]), max_size=300)


@settings(max_examples=200, deadline=None)
@given(_FILLER, _FILLER, st.sampled_from(["needle", "beta"]))
def test_a_long_cards_snippet_is_the_window_the_whole_body_gives(before, after, term):
    # Only a stretch around the first match is folded; the window is the one folding all gives.
    from memsync.search.snippets import SNIPPET_CHARS, _window, snippet

    body = " ".join([*before, term, *after])
    whole = _window(body, (term,), SNIPPET_CHARS, False, False)
    piece = snippet(body, (term,))
    assert piece.strip("…") == whole.strip("…")
    assert piece.startswith("…") == whole.startswith("…")


def test_deploy_and_deployment_reach_each_other_by_prefix(vault, cli):
    # porter stems deploy, deploys, deploying to `deploi` and deployment to `deploy`: neither
    # exact form nor its prefix reached the other before the prefix tiers cut back to `deplo`
    for n, verb in enumerate(("deploy", "deploys", "deploying", "deployed")):
        write_card(vault, f"runbook{n}.md", f"Runbook {n}", f"How we {verb} service {n} with the pipeline.")
    write_card(vault, "checklist.md", "Deployment checklist", "Before any deployment: freeze merges.")
    write_card(vault, "other.md", "Hiring", "We deplore long interviews and talk about budgets.")
    sync()
    code, out = cli("search", "deployment", "--json")
    assert [h["path"] for h in out["hits"]][0] == "checklist.md"
    assert {h["path"] for h in out["hits"] if h["matched"] == "all-prefix"} >= {f"runbook{n}.md" for n in range(4)}
    code, out = cli("search", "deploy", "--json")
    assert {h["path"]: h["matched"] for h in out["hits"]}["checklist.md"] == "all-prefix"
    assert all(h["matched"] == "all" for h in out["hits"][:4])


def test_postgres_and_postgresql_reach_each_other(vault, cli):
    # a word that is the head of a longer identifier: a prefix one way, a cut (query.cuts) the other
    write_card(vault, "orders.md", "Orders service", "The orders service keeps its rows in PostgreSQL 16.")
    write_card(vault, "backups.md", "Nightly backups", "Our postgres backups run at 02:00 with pg_dump.")
    write_card(vault, "cache.md", "Cache", "Redis holds the sessions; it is not backed up.")
    sync()
    for text, exact, reached in (("postgres", "backups.md", "orders.md"), ("PostgreSQL", "orders.md", "backups.md")):
        code, out = cli("search", text, "--json")
        assert code == 0 and [(h["path"], h["matched"]) for h in out["hits"]] == [
            (exact, "all"), (reached, "all-prefix")], text
    code, out = cli("search", "postgresql backups", "--json")
    assert out["hits"][0]["path"] == "backups.md" and out["matched"] == "all-prefix"


def test_a_split_compound_finds_the_card_holding_it_as_one_word(vault, cli):
    write_card(vault, "backup.md", "Nightly backup", "Nightly backup of the production database with pg_dump.")
    for n in range(6):
        write_card(vault, f"vendor{n}.md", f"Vendor {n}", f"Follow up with vendor {n}; they back the database contract.")
    for n in range(12):
        write_card(vault, f"db{n}.md", f"Database note {n}", f"The database schema change {n}: migrate the table.")
    sync()
    code, out = cli("search", "back up database", "--json")
    assert out["matched"] == "all" and out["hits"][0]["path"] == "backup.md"
    assert {h["path"] for h in out["hits"] if h["matched"] == "all"} == {"backup.md"} | {
        f"vendor{n}.md" for n in range(6)}
