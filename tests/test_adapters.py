"""Adapters for other agents' memory files, read in place through real sources."""

import json
import subprocess
import sys
import time

import pytest

from memsync.adapters import NAMES, get

from .helpers import found, sync


def test_gemini_added_memories_become_one_card_each():
    text = (
        b"# Project notes\nUse pnpm.\n\n## Gemini Added Memories\n"
        b"- The staging host is stg-01.\n- Deploys happen on Tuesdays.\n\n## Other\nmore text\n"
    )
    cards = get("agents").read(text, "GEMINI.md")
    memories = [c for c in cards if "#" in c.path]
    assert [c.body for c in memories] == ["The staging host is stg-01.", "Deploys happen on Tuesdays."]
    rest = next(c for c in cards if c.path == "GEMINI.md")
    assert "pnpm" in rest.body and "more text" in rest.body and "stg-01" not in rest.body


def test_gemini_anchor_is_stable_when_bullets_are_reordered():
    a = get("agents").read(b"## Gemini Added Memories\n- one fact\n- two fact\n", "GEMINI.md")
    b = get("agents").read(b"## Gemini Added Memories\n- two fact\n- one fact\n", "GEMINI.md")
    assert {c.path: c.body for c in a} == {c.path: c.body for c in b}


def test_agents_adapter_picks_instruction_files_and_claude_memory():
    adapter = get("agents")
    assert adapter.wants("AGENTS.md") and adapter.wants("repo/CLAUDE.md")
    assert adapter.wants(".claude/projects/web/memory/decisions.md")
    assert adapter.wants(".claude/CLAUDE.md")
    assert not adapter.wants("notes/other.md")
    assert not adapter.wants(".git/CLAUDE.md")
    assert adapter.enters(".claude") and not adapter.enters(".git")


def test_memory_jsonl_entities_become_cards():
    lines = [
        {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["likes tea"]},
        {"type": "entity", "name": "ProjectX", "entityType": "project", "observations": ["due in May"]},
        {"type": "relation", "from": "Alice", "to": "ProjectX", "relationType": "leads"},
    ]
    data = ("\n".join(json.dumps(x) for x in lines) + "\nnot json\n").encode()
    cards = {c.title: c for c in get("mcp-memory").read(data, "memory.jsonl")}
    assert cards["Alice"].kind == "person"
    assert "likes tea" in cards["Alice"].body and "Alice leads ProjectX" in cards["Alice"].body
    assert cards["ProjectX"].path.startswith("memory.jsonl#")
    assert "[4]" in cards["Alice"].problem and cards["ProjectX"].problem is None  # said once


def test_an_entity_on_two_lines_keeps_the_observations_of_both():
    lines = [
        {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["likes tea"]},
        {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["owns the quokka service", "likes tea"]},
    ]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    (alice,) = get("mcp-memory").read(data, "memory.jsonl")
    assert alice.body == "- likes tea\n- owns the quokka service"


def test_a_large_graph_gives_each_entity_the_relations_at_either_end():
    lines = [{"type": "entity", "name": f"e{i}", "entityType": "thing", "observations": [f"fact {i}"]}
             for i in range(10_000)]
    lines += [{"type": "relation", "from": f"e{i}", "to": f"e{(i * 7) % 10_000}", "relationType": "uses"}
              for i in range(20_000)]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    cards = {c.title: c for c in get("mcp-memory").read(data, "memory.jsonl")}
    assert len(cards) == 10_000
    for name in ("e0", "e1", "e7", "e9999"):  # in file order, a relation to itself once
        ends = [r for r in lines[10_000:] if name in (r["from"], r["to"])]
        expected = [f"- fact {name[1:]}", *(f"- {r['from']} uses {r['to']}" for r in ends)]
        assert cards[name].body.splitlines() == expected


def test_a_claude_code_memory_is_titled_by_its_name_and_summed_up_by_its_description():
    memory = (b"---\nname: User is a data scientist\ndescription: Works on the gharial churn model\n"
              b"type: user\n---\nPrefers pandas over polars.\n")
    card = get("agents").read(memory, ".claude/projects/shop/memory/user_role.md")[0]
    assert card.title == "User is a data scientist" and card.summary == "Works on the gharial churn model"
    own = get("agents").read(b"---\ntitle: Mine\nname: Other\n---\nx\n", ".claude/projects/shop/memory/a.md")[0]
    assert own.title == "Mine"
    plain = get("agents").read(b"---\nname: Not a memory\n---\nx\n", "CLAUDE.md")[0]
    assert plain.title == "CLAUDE.md" and plain.summary is None  # only Claude Code's memory folders


def test_cursor_rules_titled_by_description():
    adapter = get("cursor")
    assert adapter.wants(".cursor/rules/style.mdc") and not adapter.wants("style.mdc")
    assert adapter.enters(".cursor") and adapter.enters(".cursor/rules") and not adapter.enters(".git")
    card = adapter.read(b"---\ndescription: Python style rules\nglobs: '*.py'\n---\nUse ruff.", ".cursor/rules/style.mdc")[0]
    assert card.title == "Python style rules" and card.body.strip() == "Use ruff."


def test_a_cursor_rule_with_bare_globs_as_cursor_writes_them_keeps_its_description():
    rule = b"---\ndescription: React style for the quetzal app\nglobs: *.tsx, src/**/*.ts\nalwaysApply: false\n---\nUse hooks.\n"
    card = get("cursor").read(rule, ".cursor/rules/style.mdc")[0]
    assert card.title == "React style for the quetzal app" and card.problem is None
    assert card.body == "Use hooks.\n"


@pytest.mark.parametrize("written, title", [
    ('"React style for the quetzal app"', "React style for the quetzal app"),
    ("'The quetzal''s React style'", "The quetzal's React style"),
    ('"Tabs \\u2192 spaces"', "Tabs \u2192 spaces"),
    ('"quoted" twice "here"', '"quoted" twice "here"'),  # not one quoted scalar: as written
])
def test_a_quoted_description_beside_bare_globs_reads_as_yaml_would(written, title):
    rule = f"---\ndescription: {written}\nglobs: *.tsx\nalwaysApply: yes\n---\nUse hooks.\n"
    (card,) = get("cursor").read(rule.encode(), ".cursor/rules/style.mdc")
    assert card.title == title and card.problem is None


@pytest.fixture
def agent_home(tmp_path):
    root = tmp_path / "agenthome"
    (root / ".claude/projects/web/memory").mkdir(parents=True)
    (root / ".claude/projects/web/memory/deploy.md").write_text("# Deploy\nwebapp deploys via argocd")
    (root / "repo/.cursor/rules").mkdir(parents=True)
    (root / "repo/AGENTS.md").write_text("# Agents\nrun tests with tox")
    (root / "repo/GEMINI.md").write_text("## Gemini Added Memories\n- the cache is redis-7\n")
    (root / "repo/node_modules/pkg").mkdir(parents=True)
    (root / "repo/node_modules/pkg/AGENTS.md").write_text("vendored noise")
    return root


def test_sources_add_index_search_and_remove(agent_home, cli, vault):
    code, out = cli("sources", "--add", "agents", "--adapter", "agents", "--path", agent_home, "--json")
    assert code == 0 and out["status"] == "added"
    sync()
    assert found("argocd") == [".claude/projects/web/memory/deploy.md"]
    assert found("redis", source="agents")[0].startswith("repo/GEMINI.md#")
    assert found("vendored") == []
    listing = cli("sources", "--json")[1]["sources"]
    assert {s["name"]: s["cards"] for s in listing}["agents"] == 3
    code, out = cli("sources", "--remove", "agents", "--json")
    assert code == 0 and out["removed"] == 3
    assert found("argocd") == []


@pytest.mark.parametrize("root", [".claude", "."])
def test_claude_code_plugins_are_not_the_users_memory(agent_home, cli, root):
    # plugin repositories Claude Code keeps in ~/.claude/plugins bring their own CLAUDE.md
    plugin = agent_home / ".claude/plugins/marketplaces/tools/plugins/lint"
    plugin.mkdir(parents=True)
    (plugin / "CLAUDE.md").write_text("# Lint plugin\nrun lintwidget-4 before a commit\n")
    (agent_home / ".claude/CLAUDE.md").write_text("# Mine\nalways answer in haiku-form\n")
    (agent_home / "repo/plugins/auth").mkdir(parents=True)  # a project's own plugins: the user's
    (agent_home / "repo/plugins/auth/CLAUDE.md").write_text("# Auth\nauth tokens live in vaultbox-2\n")
    code, _ = cli("sources", "--add", "agents", "--adapter", "agents", "--path", agent_home / root, "--json")
    assert code == 0
    assert found("lintwidget-4") == []
    assert found("haiku-form") == [("" if root == ".claude" else ".claude/") + "CLAUDE.md"]
    if root == ".":
        assert found("vaultbox-2") == ["repo/plugins/auth/CLAUDE.md"]


def test_a_projects_claude_folder_below_the_root_gives_its_claude_md(agent_home, cli):
    # Claude Code reads <project>/.claude/CLAUDE.md as it reads <project>/CLAUDE.md
    (agent_home / "repo/.claude/commands").mkdir(parents=True)
    (agent_home / "repo/.claude/CLAUDE.md").write_text("# Repo\nmigrations run through flyway-9\n")
    (agent_home / "repo/.claude/commands/CLAUDE.md").write_text("command noise-3\n")  # Claude Code's own
    (agent_home / "repo/.claude/plugins/p").mkdir(parents=True)
    (agent_home / "repo/.claude/plugins/p/CLAUDE.md").write_text("plugin noise-4\n")
    (agent_home / "repo/.git/.claude").mkdir(parents=True)
    (agent_home / "repo/.git/.claude/CLAUDE.md").write_text("git noise-5\n")
    code, _ = cli("sources", "--add", "agents", "--adapter", "agents", "--path", agent_home, "--json")
    assert code == 0
    assert found("flyway-9") == ["repo/.claude/CLAUDE.md"]
    assert found("noise") == []


def test_a_watcher_follows_a_projects_claude_folder(agent_home, cli, watcher):
    cli("sources", "--add", "agents", "--adapter", "agents", "--path", agent_home)
    proc = watcher()
    (agent_home / "shop/.claude").mkdir(parents=True)  # a project and its folder, made while watched
    (agent_home / "shop/.claude/CLAUDE.md").write_text("# Shop\norders go through stripe-12\n")
    deadline = time.monotonic() + 20
    while found("stripe-12") != ["shop/.claude/CLAUDE.md"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found("stripe-12") == ["shop/.claude/CLAUDE.md"], proc.stderr()


def test_claude_code_worktrees_of_a_project_give_no_second_card(tmp_path, cli):
    # Claude Code makes git worktrees of the project in .claude/worktrees/<name>/: each holds a
    # copy of the project's CLAUDE.md, which a search would otherwise show twice.
    project = tmp_path / "shop"
    (project / ".claude/worktrees/fix-login/.claude").mkdir(parents=True)
    for copy in ("", ".claude/worktrees/fix-login/"):
        (project / copy / "CLAUDE.md").write_text("# Shop\norders go through stripe-12\n")
        (project / copy / "AGENTS.md").write_text("# Agents\nrun tests with tox-7\n")
    (project / ".claude/worktrees/fix-login/.claude/CLAUDE.md").write_text("worktree noise-6\n")
    code, _ = cli("sources", "--add", "shop", "--adapter", "agents", "--path", project, "--json")
    assert code == 0
    assert found("stripe-12") == ["CLAUDE.md"] and found("tox-7") == ["AGENTS.md"]
    assert found("noise-6") == []
    assert get("agents", str(project / ".claude")).wants("worktrees/x/CLAUDE.md") is False


def test_plugins_is_left_out_only_at_the_top_of_claudes_own_folder():
    assert not get("agents", "/home/u/.claude").wants("plugins/x/CLAUDE.md")
    assert get("agents", "/home/u/src/shop").wants("plugins/x/CLAUDE.md")
    assert get("agents", "/home/u/.claude").wants("projects/p/memory/plugins.md")


def test_read_only_source_files_are_never_written(agent_home, cli):
    cli("sources", "--add", "agents", "--adapter", "agents", "--path", agent_home)
    before = {p: p.read_bytes() for p in agent_home.rglob("*") if p.is_file()}
    cli("index")
    cli("index", "--rebuild")
    assert {p: p.read_bytes() for p in agent_home.rglob("*") if p.is_file()} == before


def test_writing_to_a_read_only_source_is_refused(agent_home, cli):
    cli("sources", "--add", "agents", "--adapter", "agents", "--path", agent_home)
    sync()
    card_id = cli("search", "argocd", "--json")[1]["hits"][0]["id"]
    code, out = cli("update", card_id, "--body", "a body long enough to pass the length rule", "--json")
    assert code == 1 and out["error"]["code"] == "read_only_source"


def test_bad_source_arguments(cli, tmp_path):
    assert cli("sources", "--add", "vault", "--path", tmp_path, "--json")[0] == 2
    assert cli("sources", "--add", "x", "--adapter", "nope", "--path", tmp_path, "--json")[0] == 2
    assert cli("sources", "--add", "x", "--path", tmp_path / "missing", "--json")[0] == 2
    assert cli("sources", "--remove", "ghost", "--json")[0] == 1
    code, out = cli("sources", "--add", "笔记", "--path", tmp_path, "--json")  # letters, but not ASCII ones
    assert code == 2 and "ASCII letters" in out["error"]["message"]


def test_every_adapter_is_found_by_its_name_and_says_what_it_reads():
    for name in NAMES:
        adapter = get(name)
        assert adapter.name == name and adapter.suffixes


def test_config_checks_adapter_names_without_loading_the_parsers(tmp_path, home, cli):
    """The read path stays light even with sources configured (the adapters load lazily)."""
    (tmp_path / "notes").mkdir()
    cli("sources", "--add", "notes", "--path", tmp_path / "notes")
    probe = (
        "import sys\n"
        "from memsync import config\n"
        "config.load()\n"
        "print([m for m in ('yaml', 'frontmatter', 'memsync.notes') if m in sys.modules])\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stderr


def test_a_files_problem_is_reported_once_under_the_files_own_path(tmp_path, cli):
    # every bullet of a GEMINI.md shares its frontmatter's problem; the graph's bad line is the
    # file's, not its first entity's
    (tmp_path / "gemini").mkdir()
    (tmp_path / "gemini/GEMINI.md").write_text(
        "---\ntitle: [unclosed\n---\n## Gemini Added Memories\n- uses helix-3\n- likes tabs-5\n")
    (tmp_path / "graph").mkdir()
    (tmp_path / "graph/memory.jsonl").write_text(
        '{"type": "entity", "name": "Ann", "observations": ["drinks oolong-7"]}\nnot json\n')
    cli("sources", "--add", "gemini", "--adapter", "agents", "--path", tmp_path / "gemini")
    cli("sources", "--add", "graph", "--adapter", "mcp-memory", "--path", tmp_path / "graph")
    for name in ("gemini/GEMINI.md", "graph/memory.jsonl"):
        with (tmp_path / name).open("a") as f:
            f.write("\n")  # a change, read by the next index
    code, out = cli("index", "--json")
    assert code == 0 and len(found("helix-3")) == 1
    problems = sorted((p["path"], p["message"].split(" (")[0]) for p in out["problems"])
    assert problems == [("GEMINI.md", "frontmatter is not valid YAML"),
                        ("memory.jsonl", "lines that are not JSON objects: [2]")]


@pytest.mark.parametrize("root, rel, title", [
    ("src", "shop/CLAUDE.md", "CLAUDE.md (shop)"), ("src", "shop/.claude/CLAUDE.md", "CLAUDE.md (shop)"),
    ("src/shop", "AGENTS.md", "AGENTS.md (shop)"), ("src/shop", ".claude/CLAUDE.md", "CLAUDE.md (shop)"),
    ("src/shop", "api/CLAUDE.local.md", "CLAUDE.local.md (api)"), (".gemini", "GEMINI.md", "GEMINI.md (.gemini)"),
])
def test_an_instruction_file_is_titled_by_the_folder_it_instructs(tmp_path, cli, root, rel, title):
    # every project has a CLAUDE.md: a hit, or another project's brief, says whose it is
    (tmp_path / root / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / root / rel).write_text("# Rules\n\n## Gemini Added Memories\n- ships with ibis-5\n")
    cli("sources", "--add", "agents", "--adapter", "agents", "--path", tmp_path / root)
    code, out = cli("search", "rules", "--json")
    assert [(h["path"], h["title"]) for h in out["hits"]] == [(rel, title)]
    (tmp_path / root / rel).write_text("---\ntitle: Our rules\n---\nrules of our own\n")
    cli("index")
    assert [h["title"] for h in cli("search", "rules", "--json")[1]["hits"]] == ["Our rules"]
