"""`memsync bench`: the user's own ground truth, through the real CLI and a real index."""

from __future__ import annotations

import json

from .conftest import write_card


def _vault(vault):
    write_card(vault, "03-Knowledge/nginx-root.md", "nginx 站点根目录", "默认根目录是 /var/www/html，配置在 sites-available。",
               tags="[nginx]")
    write_card(vault, "03-Knowledge/docker.md", "docker compose 命令", "compose 里有 api 和 nginx 两个服务，日志用 logs -f 看。")
    write_card(vault, "02-Projects/shop.md", "shop 生产服务器", "ecs-prod 的地址是 198.51.100.7，登录用 deploy 账号。")


def _truth(home, queries, pairs=()):
    home.mkdir(parents=True, exist_ok=True)
    path = home / "bench_queries.json"
    path.write_text(json.dumps({"queries": queries, "pairs": list(pairs)}, ensure_ascii=False))
    return path


QUERIES = [
    {"query": "nginx", "relevant": ["03-Knowledge/nginx-root.md", "03-Knowledge/docker.md"], "group": "keyword"},
    {"query": "ecs-prod", "relevant": ["02-Projects/shop.md"], "group": "keyword"},
    {"query": "kubernetes", "relevant": [], "group": "absent"},
]
PAIRS = [{"query": "nginx", "above": "03-Knowledge/nginx-root.md", "below": "03-Knowledge/docker.md"}]


def test_reports_each_metric_by_group(cli, vault, home):
    _vault(vault)
    _truth(home, QUERIES, PAIRS)
    assert cli("index", "--json")[0] == 0
    code, report = cli("bench", "--json")
    assert code == 0
    kw = report["groups"]["keyword"]
    assert (kw["first_hit"], kw["p_at_5"], kw["noise_at_5"]) == (1.0, 1.0, 0.0)
    assert kw["tiers"] == {"all": 2}
    absent = report["groups"]["absent"]
    assert absent["first_hit"] == 1.0 and absent["p_at_5"] is None  # excluded from precision
    assert report["pairs"] == {"total": 1, "held": 1, "pairs_held": 1.0, "failed": []}
    assert report["unknown_paths"] == []


def test_a_match_for_an_absent_word_is_a_miss_and_noise(cli, vault, home):
    _vault(vault)
    _truth(home, [{"query": "deploy", "relevant": []}])
    cli("index")
    _, report = cli("bench", "--json")
    assert report["overall"]["first_hit"] == 0.0
    assert report["overall"]["noise_at_5"] == 1.0


def test_baseline_round_trip_then_a_regression_exits_1(cli, vault, home, tmp_path):
    _vault(vault)
    _truth(home, QUERIES, PAIRS)
    cli("index")
    base = tmp_path / "base.json"
    assert cli("bench", "--json", "--save", base)[0] == 0
    code, report = cli("bench", "--json", "--baseline", base)
    assert (code, report["regressions"]) == (0, [])
    # A new card titled exactly nginx, saying it everywhere, pushes the relevant ones down.
    write_card(vault, "inbox/noise.md", "nginx", "nginx nginx nginx nginx 只是个测试。")
    cli("index")
    code, report = cli("bench", "--json", "--baseline", base)
    assert code == 1
    assert {"metric": "keyword.first_hit", "baseline": 1.0, "now": 0.5} in report["regressions"]


def test_human_output_names_the_failures(cli, vault, home):
    _vault(vault)
    _truth(home, [{"query": "ecs-prod", "relevant": ["02-Projects/typo.md"]}])
    cli("index")
    code, text = cli("bench")
    assert code == 0
    assert "first hit wrong: 'ecs-prod'" in text
    assert "02-Projects/typo.md" in text  # truth naming a card that is not indexed


def test_missing_truth_file_says_how_to_write_one(cli, vault, home):
    _vault(vault)
    cli("index")
    code, data = cli("bench", "--json")
    assert code == 2
    assert "bench_queries.json" in data["error"]["message"]
    assert '"relevant"' in data["error"]["message"]


def test_malformed_truth_is_rejected_with_the_reason(cli, vault, home):
    _vault(vault)
    cli("index")
    (home / "bench_queries.json").write_text('{"queries": [{"query": "x", "relevant": "a.md"}]}')
    code, data = cli("bench", "--json")
    assert code == 2
    assert "'relevant' must be a list" in data["error"]["message"]
    (home / "bench_queries.json").write_text("{not json")
    assert cli("bench", "--json")[0] == 2


def test_a_baseline_that_is_not_a_report_is_an_error(cli, vault, home, tmp_path):
    _vault(vault)
    _truth(home, QUERIES)
    cli("index")
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    code, data = cli("bench", "--json", "--baseline", bogus)
    assert code == 2
    assert "--save" in data["error"]["message"]


def test_queries_option_and_real_process(run_cli, vault, tmp_path):
    _vault(vault)
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps(QUERIES, ensure_ascii=False))  # a bare list is accepted
    assert run_cli("index", "--json")[0] == 0
    code, report, _err = run_cli("bench", "--json", "--queries", truth)
    assert code == 0
    assert report["overall"]["queries"] == 3
    assert report["queries_file"] == str(truth)


def test_a_truth_entry_of_the_wrong_type_is_named_not_a_traceback(cli, vault, home):
    _vault(vault)
    assert cli("index", "--json")[0] == 0
    for entry, says in (({"query": 5}, "query #1 needs a non-empty 'query' (text)"),
                        ({"query": "nginx", "as_of": 20260101}, "query #1: 'as_of' must be text, not 20260101"),
                        ({"query": "nginx", "kind": ["tool"]}, """query #1: 'kind' must be text, not ["tool"]""")):
        _truth(home, [entry])
        code, out = cli("bench", "--json")
        assert code == 2 and says in out["error"]["message"], out
    _truth(home, [], [{"query": "nginx", "above": "a.md", "below": "b.md", "as_of": 5}])
    code, out = cli("bench", "--json")
    assert code == 2 and "pair #1: 'as_of' must be text" in out["error"]["message"]
