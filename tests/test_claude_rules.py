"""Claude Code's rules: `.claude/rules/**/*.md` in a project, and `~/.claude/rules/**/*.md` for
every project. Claude Code loads them as it loads CLAUDE.md, so an `agents` source reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import found
from .test_watch_adapters import wait_for  # a watcher's search, polled until it gives the paths

RULE = "---\npaths:\n  - \"src/api/**/*.py\"\n---\n# API rules\nendpoints validate with pydantic-{}\n"


@pytest.fixture
def user_home(tmp_path) -> Path:
    """A home with user rules in ~/.claude and project rules in ~/src/shop, one in a subfolder."""
    home = tmp_path / "ana"
    (home / ".claude/rules").mkdir(parents=True)
    (home / ".claude/rules/testing.md").write_text("# Testing\nrun pytest with -x before committing\n")
    (home / "src/shop/.claude/rules/api").mkdir(parents=True)
    (home / "src/shop/.claude/rules/api/validation.md").write_text(RULE.format(2))
    return home


@pytest.mark.parametrize("root, user_rule, project_rule", [
    (".claude", "rules/testing.md", None),
    (".", ".claude/rules/testing.md", "src/shop/.claude/rules/api/validation.md"),
    ("src", None, "shop/.claude/rules/api/validation.md"),
    ("src/shop", None, ".claude/rules/api/validation.md"),
])
def test_rules_are_read_wherever_claude_code_reads_them(user_home, cli, root, user_rule, project_rule):
    code, out = cli("sources", "--add", "agents", "--adapter", "agents", "--path", user_home / root, "--json")
    assert code == 0, out
    assert found("pytest") == ([user_rule] if user_rule else [])
    assert found("pydantic-2") == ([project_rule] if project_rule else [])


def test_a_rule_is_titled_by_its_file_and_its_paths_are_no_problem(user_home, cli):
    cli("sources", "--add", "shop", "--adapter", "agents", "--path", user_home / "src/shop")
    code, out = cli("search", "pydantic-2", "--json")
    (hit,) = out["hits"]
    assert (hit["title"], hit["source"]) == ("validation", "shop")
    code, stats = cli("stats", "--json")
    assert stats["problems"] == []


def test_only_the_rules_folder_of_a_projects_claude_folder_is_read(user_home, cli):
    shop = user_home / "src/shop"
    noise = {"rules/.drafts/x.md": "a draft", "commands/x.md": "a command", "agents/x.md": "a subagent",
             "worktrees/fix/.claude/rules/x.md": "a worktree's copy", "rules/x.txt": "not markdown"}
    for rel, text in noise.items():
        (shop / ".claude" / rel).parent.mkdir(parents=True, exist_ok=True)
        (shop / ".claude" / rel).write_text(f"{text}: heron-noise\n")
    (shop / "rules").mkdir()
    (shop / "rules/style.md").write_text("the project's own docs: heron-noise\n")
    cli("sources", "--add", "src", "--adapter", "agents", "--path", user_home / "src")
    assert found("heron-noise") == []
    assert found("pydantic-2") == ["shop/.claude/rules/api/validation.md"]


def test_a_watcher_follows_rules_written_renamed_and_deleted(user_home, cli, watcher):
    cli("sources", "--add", "claude", "--adapter", "agents", "--path", user_home / ".claude")
    cli("sources", "--add", "src", "--adapter", "agents", "--path", user_home / "src")
    proc = watcher()
    rules = user_home / "src/shop/.claude/rules"
    (rules / "db").mkdir()  # a new subfolder, made while watched
    (rules / "db/migrations.md").write_text("# Migrations\nnever edit an applied alembic-4 migration\n")
    wait_for("alembic-4", ["shop/.claude/rules/db/migrations.md"], proc)
    (user_home / ".claude/rules/testing.md").rename(user_home / ".claude/rules/tests.md")
    wait_for("pytest", ["rules/tests.md"], proc)
    (rules / "api/validation.md").unlink()
    wait_for("pydantic-2", [], proc)


def test_init_offers_claude_codes_rules(fake_user, home, cli, monkeypatch):
    (fake_user / ".claude/rules").mkdir(parents=True)
    (fake_user / ".claude/rules/testing.md").write_text("# Testing\nrun pytest with -x first\n")
    project = fake_user / "src/shop"
    (project / ".claude/rules").mkdir(parents=True)
    (project / ".claude/rules/style.md").write_text("# Style\nformat with ruff-format\n")
    (project / "CLAUDE.local.md").write_text("my sandbox url is sandbox-17\n")
    monkeypatch.chdir(project)
    code, out = cli("init", "--yes", "--json")
    assert code == 0
    assert [(s["name"], s["what"]) for s in out["sources_added"]] == [
        ("claude", "Claude Code: rules"), ("shop", "project shop: CLAUDE.local.md, .claude/rules")]
    assert found("pytest") == ["rules/testing.md"]
    assert found("ruff-format") == [".claude/rules/style.md"]
    assert found("sandbox-17") == ["CLAUDE.local.md"]
