"""A reconcile drops the cards that the current rules no longer reach, as a rebuild would: a
file indexed before a release skipped its folder leaves the index at the next `memsync index`."""

import memsync.adapters.base as base

from .conftest import write_card


def paths(cli, query):
    code, data = cli("search", query, "--json")
    assert code == 0
    return [hit["path"] for hit in data["hits"]]


def test_index_drops_a_card_under_a_folder_the_rules_now_skip(vault, cli, monkeypatch):
    write_card(vault, "node_modules/pkg/README.md", "Vendored ocelot", "ocelot readme")
    write_card(vault, "notes/mine.md", "Mine", "ocelot of my own")
    with monkeypatch.context() as old_rules:  # a release that did not yet skip node_modules/
        old_rules.setattr(base, "SKIPPED_FOLDERS", set())
        assert cli("index", "--json")[0] == 0
    assert sorted(paths(cli, "ocelot")) == ["node_modules/pkg/README.md", "notes/mine.md"]
    assert [f["check"] for f in cli("doctor", "--json")[1]["findings"]] == ["drift"]

    code, report = cli("index", "--json")
    assert code == 0 and report["removed"] == 1
    assert paths(cli, "ocelot") == ["notes/mine.md"]
    # doctor's drift check and its fix (`memsync index`) agree: nothing left to report
    assert [f["check"] for f in cli("doctor", "--json")[1]["findings"]] == []


def test_index_drops_the_worktree_copies_an_older_agents_adapter_read(tmp_path, cli, monkeypatch):
    import memsync.adapters.agents as agents

    project = tmp_path / "shop"
    (project / ".claude/worktrees/fix-login").mkdir(parents=True)
    for copy in ("", ".claude/worktrees/fix-login/"):
        (project / copy / "CLAUDE.md").write_text("# Shop\norders go through stripe-12\n")
    with monkeypatch.context() as old_rules:  # before worktrees were left out
        old_rules.setattr(agents, "_CLAUDE_COPIES", ("plugins",))
        assert cli("sources", "--add", "shop", "--adapter", "agents", "--path", project)[0] == 0
    assert sorted(paths(cli, "stripe-12")) == [".claude/worktrees/fix-login/CLAUDE.md", "CLAUDE.md"]

    assert cli("index", "--json")[1]["removed"] == 1
    assert paths(cli, "stripe-12") == ["CLAUDE.md"]
