"""`memsync init`: the home, the vault in config.json, a first index, agent memory offered as
sources, the MCP set-up printed. A fake HOME and a project folder of its own for every test, so
the machine's real agent files are never looked at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsync import clients

from .conftest import MEMSYNC_BIN, write_card

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture(autouse=True)
def fake_home(fake_user) -> Path:
    return fake_user


@pytest.fixture
def agent_files(fake_home) -> Path:
    """Claude Code memory and a Gemini CLI file, where those tools keep them."""
    memory = fake_home / ".claude" / "projects" / "shop" / "memory"
    memory.mkdir(parents=True)
    (memory / "deploy.md").write_text("# deploy\nthe shop deploys with kamal-9 on fridays\n")
    (fake_home / ".gemini").mkdir()
    (fake_home / ".gemini" / "GEMINI.md").write_text(
        "# Gemini\n\n## Gemini Added Memories\n- the staging box is called tern-3\n")
    return fake_home


def config_json(home: Path) -> dict:
    return json.loads((home / "config.json").read_text())


def test_first_run_writes_the_vault_indexes_and_prints_the_mcp_setup(home, vault, cli):
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "the site root is /srv/www")
    code, out = cli("init", "--json")
    assert code == 0 and out["status"] == "initialized"
    assert config_json(home)["vault"] == str(vault)
    assert out["cards"] == 1 and out["index"]["added"] == 1
    assert any("config.json" in change for change in out["changed"])
    command = str(clients.installed_command())
    assert Path(command).is_absolute() and Path(command).name == "memsync"
    args = [command, "--home", str(home), "mcp"]
    assert out["mcp"]["claude_code"]["text"] == "claude mcp add -s user memsync -- " + " ".join(args)
    for client in ("claude_desktop", "cursor"):
        entry = json.loads(out["mcp"][client]["text"])["mcpServers"]["memsync"]
        assert [entry["command"], *entry["args"]] == args


def test_an_empty_vault_path_is_refused_and_nothing_is_written(home, tmp_path, run_cli, monkeypatch):
    """`--vault "$VAULT"` with the variable unset: not the current folder taken for the vault."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("init", "--vault", "")
    assert code == 2 and "an empty path; give the vault's folder" in err
    assert not (home / "config.json").exists() and not (home / "memsync.db").exists()


def test_a_second_run_changes_nothing_and_says_so(home, vault, cli):
    write_card(vault, "a.md", "a card", "some text that is long enough")
    assert cli("init")[0] == 0
    before = (home / "config.json").read_text()
    code, out = cli("init", "--json")
    assert code == 0 and out["status"] == "unchanged" and out["changed"] == []
    assert (home / "config.json").read_text() == before
    code, text = cli("init")
    assert code == 0 and "nothing changed" in text


def test_found_agent_memory_is_offered_and_only_what_is_accepted_is_added(home, agent_files, cli):
    code, text = cli("init", stdin="y\nn\n")
    assert code == 0
    names = [s["name"] for s in config_json(home).get("sources", [])]
    assert names == ["claude"]
    assert "not added: Gemini CLI" in text and "--add gemini --adapter agents" in text
    code, out = cli("search", "kamal-9", "--json")
    assert code == 0 and [h["source"] for h in out["hits"]] == ["claude"]


def test_without_an_answer_nothing_is_added(home, agent_files, cli):
    code, out = cli("init", "--json")  # no terminal to ask on: offered, not added
    assert code == 0 and out["sources_added"] == []
    assert {o["name"] for o in out["sources_offered"]} == {"claude", "gemini"}
    assert "sources" not in config_json(home)


def test_yes_adds_every_source_found_and_a_second_run_adds_none(home, agent_files, cli):
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and {s["name"] for s in out["sources_added"]} == {"claude", "gemini"}
    code, found = cli("search", "tern-3", "--json")
    assert code == 0 and found["hits"][0]["source"] == "gemini"
    code, again = cli("init", "--yes", "--json")
    assert again["status"] == "unchanged" and again["sources_offered"] == []


def test_a_project_with_agents_md_and_cursor_rules_is_offered(home, cli):
    project = Path.cwd()
    (project / "AGENTS.md").write_text("# shop\nrun the tests with make check before a push\n")
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "style.mdc").write_text("---\ndescription: style\n---\nuse tabs\n")
    code, out = cli("init", "--json")
    assert {(o["name"], o["adapter"]) for o in out["sources_offered"]} == {
        ("project", "agents"), ("project-cursor", "cursor")}


def test_a_projects_legacy_cursorrules_is_offered_and_indexed(home, fake_home, cli):
    # Cursor's older single rules file at the project's top, with no .cursor/rules beside it
    (Path.cwd() / ".cursorrules").write_text("Always use tabs; name branches after kestrel-5.\n")
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and [(s["name"], s["adapter"]) for s in out["sources_added"]] == [
        ("project-cursor", "cursor")]
    assert ".cursorrules" in out["sources_added"][0]["what"]
    code, found = cli("search", "kestrel-5", "--json")
    assert [(h["path"], h["title"], h["kind"]) for h in found["hits"]] == [
        (".cursorrules", "Cursor rules", "prompt")]


@pytest.mark.parametrize("where, name", [
    ("codex", "AGENTS.override.md"), ("project", "AGENTS.override.md"), ("project", ".claude/CLAUDE.md")])
def test_instruction_files_codex_and_claude_code_read_are_offered_and_indexed(home, fake_home, cli, where, name):
    # Codex reads AGENTS.override.md before AGENTS.md; Claude Code reads .claude/CLAUDE.md
    folder = fake_home / ".codex" if where == "codex" else Path.cwd()
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("# rules\nreleases are cut by heron-8\n")
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and [(s["name"], s["adapter"]) for s in out["sources_added"]] == [(where, "agents")]
    assert name in out["sources_added"][0]["what"]
    code, found = cli("search", "heron-8", "--json")
    assert [h["path"] for h in found["hits"]] == [name]


GRAPH_LINE = '{"type": "entity", "name": "Ann", "entityType": "person", "observations": ["drinks oolong-7"]}\n'


@pytest.mark.parametrize("name", ["memory.jsonl", "memory.json"])
def test_a_memory_server_graph_is_offered_and_indexed_by_either_name(home, fake_home, cli, name):
    # memory.json is the name the memory server used by default before memory.jsonl
    (fake_home / ".memory").mkdir()
    (fake_home / ".memory" / name).write_text(GRAPH_LINE)
    (fake_home / ".memory" / "settings.json").write_text('{"not": "a graph"}\n')
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and [(s["name"], s["adapter"]) for s in out["sources_added"]] == [("mcp-memory", "mcp-memory")]
    assert name in out["sources_added"][0]["what"]
    code, found = cli("search", "oolong-7", "--json")
    assert [h["path"].split("#")[0] for h in found["hits"]] == [name]
    assert cli("search", "graph", "--json")[1]["hits"] == []  # settings.json is not read


def test_the_graph_memory_file_path_names_is_offered_whatever_its_name(home, fake_home, tmp_path, cli, monkeypatch):
    graph = tmp_path / "mcp" / "graph.jsonl"
    graph.parent.mkdir()
    graph.write_text(GRAPH_LINE)
    monkeypatch.setenv("MEMORY_FILE_PATH", str(graph))
    code, out = cli("init", "--json")
    assert [(o["adapter"], o["path"]) for o in out["sources_offered"]] == [("mcp-memory", str(graph.parent))]


def test_a_vault_that_does_not_exist_is_refused_and_nothing_is_written(home, tmp_path, cli):
    code, out = cli("init", "--vault", tmp_path / "Obsidan", "--json")
    assert code == 2 and "does not exist" in out["error"]["message"]
    assert not (home / "config.json").exists()


def test_init_vault_makes_later_commands_use_it_without_env(home, tmp_path, monkeypatch, run_cli):
    notes = tmp_path / "notes"
    write_card(notes, "x.md", "redis port", "redis listens on 6380 on the cache box")
    assert run_cli("init", "--vault", notes)[0] == 0
    monkeypatch.delenv("MEMSYNC_VAULT")
    code, out, _err = run_cli("paths", "--json")
    assert out["vault"] == {"path": str(notes), "from": "config"}
    assert out["db"]["path"] == str(home / "memsync.db")
    assert run_cli("search", "6380", "--json")[1]["hits"][0]["title"] == "redis port"


def test_the_readme_shows_the_mcp_setup_as_init_prints_it():
    readme = README.read_text(encoding="utf-8")
    example = clients.snippets(Path("/home/me/.local/bin/memsync"), Path("/home/me/.memsync"))
    for client, snippet in example.items():
        assert snippet["text"] in readme, f"README lacks the {client} set-up as init prints it"


def test_the_installed_command_path_is_the_one_init_prints(run_cli, home, vault):
    code, out, _err = run_cli("init", "--json")
    assert code == 0 and out["mcp"]["claude_code"]["text"].split(" -- ")[1].split()[0] == MEMSYNC_BIN


def test_before_init_the_commands_that_need_the_index_send_the_user_to_init(home, run_cli,
                                                                           monkeypatch):
    """`memsync index` there would index memsync's own empty folder, not the user's notes."""
    monkeypatch.delenv("MEMSYNC_VAULT")
    for command in (["search", "nginx"], ["doctor"], ["stats"], ["audit"], ["brief"]):
        code, _, err = run_cli(*command)
        assert code == 2 and "not set up here yet; run `memsync init`" in err, (command, err)
        assert "memsync index" not in err
    code, text, _ = run_cli("paths")
    assert code == 0 and "not set up here yet: `memsync init`" in text
    assert run_cli("init", "--yes")[0] == 0
    (home / "memsync.db").unlink()  # set up, index lost: now it is `memsync index`
    code, _, err = run_cli("search", "nginx")
    assert code == 2 and "run `memsync index`" in err
    assert "not set up" not in run_cli("paths")[1]


def test_an_index_of_memsyncs_own_empty_folder_before_init_sends_the_user_to_init(
        home, run_cli, monkeypatch):
    monkeypatch.delenv("MEMSYNC_VAULT")
    assert run_cli("index")[0] == 0  # before init: memsync's own folder, empty
    code, out, _err = run_cli("search", "nginx", "--json")
    assert code == 1 and out["notes"] == [{"code": "vault_empty", "path": str(home / "vault"),
                                           "set_up": False}]
    assert "run `memsync init`" in out["note"] and "write one in Obsidian" not in out["note"]


def test_a_watcher_started_before_init_says_to_run_init(monkeypatch, watcher, run_cli):
    monkeypatch.delenv("MEMSYNC_VAULT")
    proc = watcher()
    assert proc.stop() == 0
    assert "WARNING: memsync is not set up here yet" in proc.stderr()
    assert "run `memsync init`" in proc.stderr()
    assert run_cli("init", "--yes")[0] == 0  # memsync's own folder, named on purpose now
    proc = watcher()
    assert proc.stop() == 0 and "not set up" not in proc.stderr()
