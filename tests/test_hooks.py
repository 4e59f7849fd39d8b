"""`memsync hooks` on real settings files of each client: the entry goes in and out without
touching anything else (other hooks, keys, order, comments), a backup is kept, a second install
changes nothing, and uninstall gives the file back byte for byte. Then the hook run end to end,
as the client runs it: its command line through a shell, JSON on stdin, the context on stdout."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memsync.hooks import jsonc

from .conftest import MEMSYNC_BIN, write_card

CLAUDE = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ]
    }
}
"""
CODEX = """{
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
  }
}
"""
GEMINI = """// Gemini CLI settings: JSON with comments
{
  "theme": "GitHub", // the colours
  /* hooks of my own */
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./audit.sh"}]},
    ],
  },
  "hooksConfig": {"enabled": true},
}
"""
FILES = {"claude-code": (".claude/settings.json", CLAUDE), "codex": (".codex/hooks.json", CODEX),
         "gemini": (".gemini/settings.json", GEMINI)}


@pytest.fixture
def user_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def settings(home: Path, client: str) -> Path:
    path = home / FILES[client][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FILES[client][1])
    return path


def session_start(path: Path) -> list:
    return jsonc.loads(path.read_text())["hooks"]["SessionStart"]


@pytest.mark.parametrize("client", list(FILES))
def test_install_adds_one_entry_keeps_the_rest_and_uninstall_restores_the_bytes(client, user_home, cli):
    path = settings(user_home, client)
    before = path.read_text()
    code, out = cli("hooks", "install", client, "--json")
    assert code == 0 and out["status"] == "installed" and out["settings"] == str(path)
    after = path.read_text()
    old, new = jsonc.loads(before), jsonc.loads(after)
    ours = session_start(path)[-1]
    assert ours["hooks"][0]["command"].endswith(f" brief --hook {client}")
    # everything else as it was, in its order; the text before our entry untouched
    new["hooks"]["SessionStart"] = new["hooks"]["SessionStart"][:-1]
    if not new["hooks"]["SessionStart"]:
        del new["hooks"]["SessionStart"]
    assert new == old and list(new) == list(old) and list(new["hooks"]) == list(old["hooks"])
    if client == "gemini":
        assert "// the colours" in after and "/* hooks of my own */" in after
    assert Path(out["backup"]).read_text() == before
    assert cli("hooks", "install", client, "--json")[1]["status"] == "unchanged"
    assert path.read_text() == after  # idempotent: not even rewritten
    status = cli("hooks", "status", client, "--json")[1]["hooks"][0]
    assert status["status"] == "installed" and status["commands"] == [ours["hooks"][0]["command"]]
    assert status["missing"] == []
    assert cli("hooks", "uninstall", client, "--json")[1]["status"] == "uninstalled"
    assert path.read_text() == before and not Path(out["backup"]).exists()
    assert cli("hooks", "uninstall", client, "--json")[1]["status"] == "not installed"


def test_the_claude_entry_is_a_sessionstart_command_for_every_kind_of_start(user_home, cli):
    path = settings(user_home, "claude-code")
    cli("hooks", "install", "claude-code")
    group = session_start(path)[-1]
    assert group["matcher"] == "startup|resume|clear|compact"
    assert group["hooks"][0]["type"] == "command" and group["hooks"][0]["timeout"] == 10
    assert session_start(path)[0] == {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}


def test_gemini_gets_no_matcher_and_a_timeout_in_milliseconds(user_home, cli):
    path = settings(user_home, "gemini")
    cli("hooks", "install", "gemini")
    group = session_start(path)[-1]
    assert "matcher" not in group and group["hooks"][0]["timeout"] == 10_000


def test_an_edit_made_after_install_survives_uninstall(user_home, cli):
    path = settings(user_home, "gemini")
    cli("hooks", "install", "gemini")
    edited = path.read_text().replace('"theme": "GitHub",', '"theme": "Dracula", // changed later\n  "vimMode": true,')
    path.write_text(edited)
    assert cli("hooks", "uninstall", "gemini")[0] == 0
    text = path.read_text()
    data = jsonc.loads(text)
    assert data["theme"] == "Dracula" and data["vimMode"] is True and "SessionStart" not in data["hooks"]
    assert "// changed later" in text and "/* hooks of my own */" in text
    assert data["hooks"]["BeforeTool"][0]["matcher"] == "run_shell_command"


def test_a_file_memsync_created_is_removed_again(user_home, cli):
    code, out = cli("hooks", "install", "codex", "--json")
    path = user_home / ".codex" / "hooks.json"
    assert code == 0 and "backup" not in out and session_start(path)[0]["matcher"]
    cli("hooks", "uninstall", "codex")
    assert not path.exists()


@pytest.mark.parametrize("scope", ["user", "project"])
def test_an_install_for_a_client_not_used_here_leaves_no_folder_behind(user_home, tmp_path, cli, scope):
    """The empty ~/.gemini it left made the next `init --yes` take Gemini CLI for one in use
    and install its hook."""
    where = ("--project", tmp_path) if scope == "project" else ()
    base = tmp_path if scope == "project" else user_home
    (base / ".gemini").mkdir()
    (base / ".gemini" / "GEMINI.md").write_text("the user's own\n")  # a folder in use stays
    for name in ("codex", "gemini"):
        assert cli("hooks", "install", name, *where)[0] == 0
        assert cli("hooks", "uninstall", name, *where)[0] == 0
    assert not (base / ".codex").exists() and (base / ".gemini" / "GEMINI.md").exists()
    if scope == "user":
        code, out = cli("init", "--yes", "--json")
        assert code == 0 and [h["client"] for h in out["hooks"]] == ["gemini"]


def test_project_scope_writes_the_projects_own_file(user_home, tmp_path, cli):
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    code, out = cli("hooks", "install", "claude-code", "--project", project / "src", "--json")
    assert code == 0 and out["settings"] == str(project / ".claude" / "settings.local.json")
    assert not (user_home / ".claude").exists()
    assert cli("hooks", "status", "--project", project, "--json")[1]["hooks"][0]["status"] == "installed"


def test_a_settings_file_that_is_not_json_is_left_alone(user_home, cli):
    path = user_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus",,}')
    code, out = cli("hooks", "install", "claude-code", "--json")
    assert code == 2 and "not valid JSON" in out["error"]["message"]
    assert path.read_text() == '{"model": "opus",,}' and not path.with_name("settings.json.memsync-backup").exists()


def test_status_says_what_may_stop_codex_and_gemini(user_home, cli):
    (user_home / ".codex").mkdir()
    (user_home / ".codex" / "config.toml").write_text('model = "o3"\n[features]\nhooks = false\n')
    found = {h["client"]: h for h in cli("hooks", "status", "--json")[1]["hooks"]}
    assert all(h["status"] == "not installed" for h in found.values())
    assert any("turns hooks off" in note for note in found["codex"]["notes"])
    assert "end-of-session" in found["claude-code"]["end_of_session"]


def _shop(tmp_path, vault, cli) -> Path:
    shop = tmp_path / "shop"
    (shop / ".git").mkdir(parents=True)
    write_card(vault, "02-Projects/shop-deploy.md", "Shop deploy", "Deploy with make deploy from the ops box.\n",
               project="shop")
    assert cli("index")[0] == 0
    return shop


def _run_hook(command: str, payload: dict, env: dict) -> subprocess.CompletedProcess:
    """As the client runs a command hook: through a shell, its JSON on stdin."""
    return subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=30, env=env)


@pytest.mark.parametrize("client", list(FILES))
def test_the_installed_hook_run_as_the_client_runs_it(client, user_home, tmp_path, vault, cli, home):
    shop = _shop(tmp_path, vault, cli)
    cli("hooks", "install", client)
    command = session_start(user_home / FILES[client][0])[-1]["hooks"][0]["command"]
    env = {**os.environ, "HOME": str(user_home)}
    payload = {"session_id": "s1", "cwd": str(shop), "hook_event_name": "SessionStart", "source": "startup"}
    proc = _run_hook(command, payload, env)
    assert proc.returncode == 0 and proc.stderr == ""
    context = json.loads(proc.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert context["additionalContext"].startswith(f"# Memory brief: shop ({shop})")
    assert "Shop deploy" in context["additionalContext"]
    # a broken index: the session still starts, with nothing added and one line on stderr
    (home / "memsync.db").write_bytes(b"not a database" * 200)
    for sidecar in home.glob("memsync.db-*"):
        sidecar.unlink()
    broken = _run_hook(command, payload, env)
    assert broken.returncode == 0 and json.loads(broken.stdout) == {}
    assert len(broken.stderr.strip().splitlines()) == 1 and "no brief this time" in broken.stderr


def test_a_hook_for_a_client_memsync_does_not_know_still_lets_the_session_start(tmp_path, vault, cli):
    """A usage error exited 2, which Gemini CLI takes as a blocking hook: now `{}`, exit 0 and
    one line on stderr that names the clients, as every other failure of a hook run."""
    shop = _shop(tmp_path, vault, cli)
    payload = {"session_id": "s1", "cwd": str(shop), "hook_event_name": "SessionStart"}
    proc = _run_hook(f"{MEMSYNC_BIN} brief --hook cursor", payload, dict(os.environ))
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}
    (line,) = proc.stderr.strip().splitlines()
    assert "--hook 'cursor' is no client memsync knows" in line and "claude-code, codex, gemini" in line


def test_init_offers_the_hook_of_each_agent_it_finds(user_home, cli):
    (user_home / ".claude").mkdir()
    (user_home / ".gemini").mkdir()
    code, out = cli("init", "--json")
    assert code == 0
    offered = {h["client"]: h for h in out["hooks"]}
    assert set(offered) == {"claude-code", "gemini"}
    assert offered["claude-code"]["status"] == "not installed"
    assert offered["claude-code"]["install"] == "memsync hooks install claude-code"
    code, out = cli("init", "--yes", "--json")
    assert {h["client"]: h["status"] for h in out["hooks"]} == {"claude-code": "installed", "gemini": "installed"}
    assert session_start(user_home / ".claude" / "settings.json")
    said = " ".join(cli("init", "--help")[1].split())  # --yes's help says so
    assert "install the session hook of every client found (not those declined before)" in said


def test_a_hook_declined_in_init_is_not_offered_again_until_ask_again(user_home, home, cli,
                                                                      tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no AGENTS.md here to be asked about first
    (user_home / ".claude").mkdir()
    code, text = cli("init", stdin="n\n")
    assert code == 0 and not (user_home / ".claude" / "settings.json").exists()
    code, text = cli("init", stdin="y\n")  # not asked: the y is never read
    assert code == 0 and not (user_home / ".claude" / "settings.json").exists()
    assert "session hook(s) you declined before" in text and "--ask-again" in text
    assert "claude-code: `memsync hooks install claude-code`" in text
    code, out = cli("init", "--yes", "--json")
    assert {h["client"]: h["status"] for h in out["hooks"]} == {"claude-code": "not installed"}
    code, text = cli("init", "--ask-again", stdin="y\n")
    assert code == 0 and session_start(user_home / ".claude" / "settings.json")
    assert json.loads((home / "config.json").read_text())["declined"] == []


def test_init_with_one_clients_settings_broken_sets_up_the_rest(user_home, cli):
    (user_home / ".claude").mkdir()
    (user_home / ".claude" / "settings.json").write_text('{"a": 1,,}')
    (user_home / ".gemini").mkdir()
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and out["mcp"]
    hooks = {h["client"]: h for h in out["hooks"]}
    assert hooks["gemini"]["status"] == "installed"
    assert hooks["claude-code"]["status"] == "not installed" and "is not valid JSON" in hooks["claude-code"]["problem"]
    assert (user_home / ".claude" / "settings.json").read_text() == '{"a": 1,,}'
    code, text = cli("init")
    assert code == 0 and "claude-code: not installed: " in text


def test_a_private_crlf_settings_file_keeps_its_mode_and_line_ends_through_install_and_uninstall(user_home, cli):
    path = user_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    original = b'{\r\n  "env": {"GITHUB_TOKEN": "not-a-real-one"},\r\n  "model": "opus"\r\n}\r\n'
    path.write_bytes(original)
    path.chmod(0o600)
    assert cli("hooks", "install", "claude-code")[0] == 0
    backup = path.with_name(path.name + ".memsync-backup")
    assert backup.read_bytes() == original and backup.stat().st_mode & 0o777 == 0o600
    assert b"\r\n" in path.read_bytes()
    assert cli("hooks", "uninstall", "claude-code")[0] == 0
    assert path.read_bytes() == original and not backup.exists()


def test_a_settings_file_that_is_a_link_stays_a_link_and_its_target_is_edited(user_home, tmp_path, cli):
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}\n')
    link = user_home / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    assert cli("hooks", "install", "claude-code")[0] == 0
    assert link.is_symlink() and "brief --hook claude-code" in dotfiles.read_text()
    assert cli("hooks", "uninstall", "claude-code")[0] == 0
    assert link.is_symlink() and dotfiles.read_text() == '{"model": "opus"}\n'


@pytest.mark.parametrize("original", ['{"model": "opus", "hooks": {}}\n', '{"hooks": {"SessionStart": []}}\n'])
def test_an_empty_hooks_entry_of_the_users_is_put_back_as_it_was(user_home, cli, original):
    path = user_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(original)
    assert cli("hooks", "install", "claude-code")[0] == 0
    assert cli("hooks", "uninstall", "claude-code")[0] == 0
    assert path.read_text() == original and not path.with_name(path.name + ".memsync-backup").exists()


def test_a_comment_edited_after_the_install_is_kept_by_the_uninstall(user_home, cli):
    path = settings(user_home, "gemini")
    assert cli("hooks", "install", "gemini")[0] == 0
    path.write_text(path.read_text().replace("// the colours", "// the colours I chose"))
    assert cli("hooks", "uninstall", "gemini")[0] == 0
    assert "// the colours I chose" in path.read_text() and "brief --hook" not in path.read_text()


@pytest.mark.parametrize("bad", ['{"a": 01}', '{"a": "\\x"}', '{"a": "tab\there"}'])
def test_a_settings_file_json_refuses_is_an_error_that_says_so(user_home, run_cli, bad):
    path = user_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(bad)
    for action in ("install", "status", "uninstall"):
        code, _, err = run_cli("hooks", action, "claude-code")
        assert code == 2 and "is not valid JSON" in err and "Traceback" not in err, (action, err)
    assert path.read_text() == bad


def test_a_folder_where_the_settings_file_goes_is_an_error_that_says_what_to_do(user_home, run_cli):
    path = user_home / ".claude" / "settings.json"
    path.mkdir(parents=True)
    for action in ("install", "status", "uninstall"):
        code, _, err = run_cli("hooks", action, "claude-code")
        assert code == 2 and "is a folder" in err and "move it aside" in err, (action, err)
    assert path.is_dir() and not list(path.iterdir())


def test_a_project_folder_that_does_not_exist_is_refused_and_nothing_made(user_home, tmp_path, run_cli):
    missing = tmp_path / "no" / "such" / "project"
    code, _, err = run_cli("hooks", "install", "claude-code", "--project", missing)
    assert code == 2 and "no such folder" in err and not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("")
    code, _, err = run_cli("hooks", "install", "claude-code", "--project", tmp_path / "file")
    assert code == 2 and "file: not a folder" in err


# A key written twice: the client's JSON.parse (as Python's json) keeps the last one.
TWICE = '{\n  "hooks": {\n    "PreToolUse": []\n  },\n  "model": "opus",\n  "hooks": {\n    "Stop": []\n  }\n}\n'


def test_with_hooks_written_twice_the_last_the_client_reads_is_edited(user_home, cli):
    path = user_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(TWICE)
    assert cli("hooks", "install", "claude-code")[0] == 0
    read_by_the_client = json.loads(path.read_text())["hooks"]
    assert "brief --hook claude-code" in read_by_the_client["SessionStart"][0]["hooks"][0]["command"]
    assert read_by_the_client["Stop"] == []
    path.with_name(path.name + ".memsync-backup").unlink()  # no backup to fall back on
    assert cli("hooks", "uninstall", "claude-code")[0] == 0
    assert path.read_text() == TWICE


def test_an_emptied_hooks_written_twice_stays_so_the_first_does_not_come_back(user_home, cli):
    path = user_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    first = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo old"}]}]}, "hooks": {}}\n'
    path.write_text(first)
    assert cli("hooks", "install", "claude-code")[0] == 0
    path.with_name(path.name + ".memsync-backup").unlink()
    assert cli("hooks", "uninstall", "claude-code")[0] == 0
    assert json.loads(path.read_text())["hooks"] == {}


def test_status_says_when_the_hook_runs_a_memsync_that_is_gone_or_another_one(user_home, tmp_path, cli):
    path = settings(user_home, "claude-code")
    cli("hooks", "install", "claude-code")
    ours = path.read_text()
    command = session_start(path)[-1]["hooks"][0]["command"]
    this = command.split(" ")[0]
    other = tmp_path / "other-venv" / "bin" / "memsync"  # another install, still there
    other.parent.mkdir(parents=True)
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    gone = tmp_path / "old-venv" / "bin" / "memsync"
    for binary, key, said in ((gone, "missing", "runs a memsync that is not there"),
                              (other, "elsewhere", "runs another memsync than this one")):
        path.write_text(ours.replace(this, str(binary)))
        found = cli("hooks", "status", "claude-code", "--json")[1]["hooks"][0]
        assert found["status"] == "installed" and found[key] == [command.replace(this, str(binary))]
        assert found["reinstall"] == "memsync hooks install claude-code" and found["this"] == this
        text = cli("hooks", "status", "claude-code")[1]
        assert said in text and "run `memsync hooks install claude-code` again" in text
        assert "now runs `memsync brief`" not in text
    cli("hooks", "install", "claude-code")  # points it at this memsync again
    found = cli("hooks", "status", "claude-code", "--json")[1]["hooks"][0]
    assert found["missing"] == found["elsewhere"] == [] and "reinstall" not in found
