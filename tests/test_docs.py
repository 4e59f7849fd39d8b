"""Docs that cannot drift: every link in the README and docs/ leads somewhere, the benchmark
tables in docs/benchmarks.md are exactly what bench.report makes of bench/results/*.json, and
the README's example session prints what the README shows when the installed command runs it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from bench import report

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE = re.compile(r"(`+).+?\1", re.S)
LINK = re.compile(r"\[[^\]]*\]\(<?([^)>\s]+)>?(?:\s+\"[^\"]*\")?\)")


def prose(text: str) -> str:
    """The text without code: a link or a heading written inside code is an example."""
    return CODE.sub("", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """The ids GitHub gives the page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated heading numbered."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        out.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return out


def links(page: Path) -> list[str]:
    found = LINK.findall(prose(page.read_text(encoding="utf-8")))
    return [t for t in found if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # https:, mailto: ...


def test_the_pages_are_found_and_have_links():
    assert ROOT / "docs" / "design.md" in PAGES and ROOT / "docs" / "benchmarks.md" in PAGES
    assert "docs/search.md" in links(ROOT / "README.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(where.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading #{anchor} in {where.name}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_checker_catches_a_missing_file_and_heading(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n[ok](#top) [gone](missing.md) [no](#nowhere) `[code](x.md)`\n"
                    "```\n[fenced](y.md)\n```\n[web](https://example.com)\n")
    assert links(page) == ["#top", "missing.md", "#nowhere"]
    assert anchors(page.read_text()) == {"top"}


def test_anchors_follow_githubs_rules():
    text = "# 5. Writing cards\n## Semantic search (`memsync[semantic]`)\n## Notes\n## Notes\n"
    assert anchors(text) == {"5-writing-cards", "semantic-search-memsyncsemantic", "notes", "notes-1"}


def test_the_benchmark_tables_in_docs_are_the_generated_ones():
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert text.count(report.START) == 1 and text.count(report.END) == 1
    shown = text.split(report.START, 1)[1].split(report.END, 1)[0].strip("\n")
    assert shown == report.docs_tables(report.render()), (
        "docs/benchmarks.md differs from bench/results/*.json: run `python -m bench.report` "
        "and edit the results, not the page")


def test_the_readme_summary_is_the_generated_one():
    from bench import readme_tables

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(readme_tables.START) == 1 and text.count(readme_tables.END) == 1
    assert readme_tables.shown() == "\n".join(readme_tables.render(report._load)).strip(), (
        "README.md's summary differs from bench/results/*.json: run `python -m bench.report`")


def test_the_readme_summary_has_a_row_per_kind_and_every_speed_beside_its_floor():
    from bench import readme_tables

    data = {"commit": "abc", "sets": {"obsidian-de": {
        "systems": {"memsync": {"ndcg@10": 0.9, "queries": 3}},
        "by_kind": {"memsync": {"topic": {"ndcg@10": 0.95, "queries": 2}, "alias": {"ndcg@10": 0.8, "queries": 1}},
                    "semantic": {"topic": {"ndcg@10": 0.97, "queries": 2}}},
        "best_floor_by_kind": {"topic": {"ndcg@10": 0.7}, "alias": {"ndcg@10": 0.5}}}}}
    rows = readme_tables.quality_rows(data)
    assert rows == [["obsidian-de", "alias", "1", "0.500", "0.800", "–"],
                    ["obsidian-de", "topic", "2", "0.700", "0.950", "0.970"]]


def test_results_md_is_the_generated_one():
    assert report.OUT.read_text(encoding="utf-8") == "\n".join(report.render()), (
        "bench/RESULTS.md differs from bench/results/*.json: run `python -m bench.report`")


def test_write_docs_replaces_only_what_is_between_the_markers(tmp_path, monkeypatch):
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# Benchmarks\nintro\n{report.START}\nstale\n{report.END}\nafter\n")
    monkeypatch.setattr(report, "DOCS", page)
    parts = ["# memsync benchmarks", "", "generated", "", "## Retrieval", "", "row",
             "### Detail", "detail row", "## Index size", "size row"]
    report.write_docs(parts)
    assert page.read_text() == (f"# Benchmarks\nintro\n{report.START}\n## Retrieval\n\nrow\n"
                                f"## Index size\nsize row\n{report.END}\nafter\n")


def console_session(text: str) -> list[tuple[list[str], list[str]]]:
    """The first ```console block of a page: each `$ memsync ...` command (its arguments, a
    trailing backslash joining the next line) with the lines it is shown to print."""
    block = text.split("```console\n", 1)[1].split("\n```", 1)[0]
    steps: list[tuple[list[str], list[str]]] = []
    command = ""
    for line in block.split("\n"):
        if command.endswith("\\"):
            command = command[:-1] + line
        elif line.startswith("$ "):
            command = line[2:]
        else:
            steps[-1][1].append(line)
            continue
        if not command.endswith("\\"):
            words = shlex.split(command)
            assert words[0] == "memsync", command
            steps.append((words[1:], []))
    return steps


def test_the_readme_session_prints_what_the_readme_shows(run_cli):
    steps = console_session((ROOT / "README.md").read_text(encoding="utf-8"))
    assert [args[0] for args, _ in steps] == ["capture", "search", "search"]
    # the vault already holds the card the last search finds
    code, _, err = run_cli("capture", "--title", "服务器登录方式",
                           "--body", "生产服务器登录使用私钥 ~/.ssh/id_ed25519，禁止密码登录。")
    assert code == 0, err
    for args, shown in steps:
        code, out, err = run_cli(*args)
        assert code == 0, err
        assert out.rstrip("\n").split("\n") == shown, f"README.md shows other output for memsync {shlex.join(args)}"


def test_mcp_md_names_every_argument_of_every_tool_in_its_row():
    import anyio
    from mcp.client import Client

    from memsync import config
    from memsync.mcp import server as mcp_server

    async def schemas():
        async with Client(mcp_server.build(config.load())) as client:
            return {t.name: set(t.input_schema["properties"]) for t in (await client.list_tools()).tools}

    rows = {line.split("|")[1].strip(" `"): line for line in
            (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8").splitlines() if line.startswith("| `memory_")}
    arguments = anyio.run(schemas)
    assert set(rows) == set(arguments), "docs/mcp.md's tool table and the server's tools differ"
    deprecated = {("memory_supersede", "old_id")}  # said below the table, as deprecated
    missing = [f"{tool}.{name}" for tool, names in arguments.items() for name in sorted(names)
               if f"`{name}`" not in rows[tool] and (tool, name) not in deprecated]
    assert not missing, f"docs/mcp.md's tool table does not name {missing}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    count = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")[len(arguments)]
    assert f"with {count} tools" in readme and all(f"`{tool}`" in readme for tool in arguments), (
        "README.md's list of MCP tools differs from the server's")


def config_rows() -> dict[str, str]:
    """docs/commands.md's config.json table: each key with its default cell."""
    section = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8").split("\n## config.json\n", 1)[1]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    return {cells[1].strip(" `"): cells[2].strip(" `") for cells in rows}


def test_the_config_table_lists_every_key_memsync_reads_with_its_default():
    from memsync import configjson, lifecycle_config

    rows = config_rows()
    assert list(rows) == list(configjson.KEYS), "docs/commands.md's config.json table and configjson.KEYS differ"
    defaults = {**lifecycle_config.DEFAULT._asdict(), "folder_rules": {}, "semantic": False, "sources": []}
    wrong = [f"{key}: {rows[key]}, not {json.dumps(value)}" for key, value in defaults.items()
             if json.loads(rows[key]) != value]
    assert not wrong, f"docs/commands.md gives other defaults: {wrong}"


def test_sources_md_shows_every_adapter():
    import memsync.adapters as adapters

    page = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    assert [name for name in adapters.NAMES if f"--adapter {name}" not in page] == []


def test_cards_md_names_every_kind_with_its_folder():
    from memsync.write.rules import KIND_FOLDERS

    page = (ROOT / "docs" / "cards.md").read_text(encoding="utf-8").replace("\n", " ")
    assert [kind for kind, folder in KIND_FOLDERS.items() if f"`{kind}` → `{folder}`" not in page] == []


def json_fields() -> dict[str, set[str]]:
    """design.md §8's JSON contract: the fields each bullet names, by its label (`search`,
    `show / get`, ...), from its first sentence (what follows is about the values)."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8").split("**JSON.**", 1)[1].split("**MCP.**", 1)[0]
    bullets = re.findall(r"^- ([^:\n]+): (.+?)(?=^- |\Z)", text, re.M | re.S)
    return {label: set(re.findall(r"`(\w+)`", body.split(". ", 1)[0])) for label, body in bullets}


def keys(data: object) -> set[str]:
    if isinstance(data, dict):
        return set(data).union(*map(keys, data.values()))
    return set().union(*map(keys, data)) if isinstance(data, list) else set()


def test_the_json_fields_design_md_names_are_what_the_commands_print(cli, vault):
    fields = json_fields()
    assert {"search", "show / get", "capture, update, supersede, delete", "index / reindex"} <= set(fields)
    (vault / "nginx.md").write_text("---\ntitle: nginx root\n---\nthe site root is /srv/www on ecs-prod\n")
    index = cli("index", "--json")[1]
    search = cli("search", "nginx", "--json")[1]
    show = cli("show", search["hits"][0]["id"], "--json")[1]
    writes = [cli("capture", "--title", "nginx root", "--on-conflict", "reject", "--body", "the root is /srv/www",
                  "--json")[1],
              cli("capture", "--title", "db", "--body", "the url is postgres://app:s3cretPassw0rd@db:5432/shop",
                  "--json")[1],
              cli("update", search["hits"][0]["id"], "--body", "the site root is /srv/www2 on ecs-prod", "--json")[1]]
    printed = {"search": keys(search), "show / get": keys(show), "index / reindex": keys(index),
               "capture, update, supersede, delete": keys(writes) | {"reminder"}}  # past 200 trashed cards
    missing = {label: sorted(fields[label] - shown) for label, shown in printed.items() if fields[label] - shown}
    assert not missing, f"design.md §8 names fields the commands do not print: {missing}"


def test_the_bench_ground_truth_commands_md_shows_is_one_memsync_bench_reads(tmp_path):
    from memsync import benchmark

    section = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8").split("## The ground truth", 1)[1]
    shown = tmp_path / "bench_queries.json"
    shown.write_text(section.split("```json\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    cases, pairs = benchmark.load(shown)
    assert [(c.query, c.group, c.as_of, len(c.relevant)) for c in cases] == [
        ("ecs-prod", "keyword", None, 1), ("数据库 地址", "default", "2026-03-01", 1), ("kafka retention", "default", None, 0)]
    assert [(p.above, p.below) for p in pairs] == [("03-Knowledge/nginx.md", "03-Knowledge/old-nginx.md")]
    for key in ("as_of", "kind", "source", "include_invalid", "group"):  # what the page says a query may carry
        assert f"`{key}`" in section and hasattr(cases[0], key)
