"""`memsync init` finds the vault: it offers the vaults of Obsidian's obsidian.json (wherever the
system and the install put it), `--yes` takes the last opened one, an empty vault is said aloud,
and a declined agent memory file is not offered twice. A fake HOME per test."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memsync import obsidian_vaults

from .conftest import MEMSYNC_BIN, write_card

LAYOUTS = {
    "linux": ".config/obsidian",
    "flatpak": ".var/app/md.obsidian.Obsidian/config/obsidian",
    "snap": "snap/obsidian/current/.config/obsidian",
    "macos": "Library/Application Support/obsidian",
    "windows": "AppData/Roaming/obsidian",  # %APPDATA%\obsidian
}


@pytest.fixture(autouse=True)
def fake_home(fake_user, monkeypatch) -> Path:
    """No vault named: init is to find one (Obsidian's places under the fake HOME only)."""
    monkeypatch.setenv("APPDATA", str(fake_user / "AppData" / "Roaming"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("MEMSYNC_VAULT")
    return fake_user


def obsidian_install(user: Path, layout: str, vaults: dict[str, tuple[int, bool]]) -> None:
    """obsidian.json as Obsidian writes it: vault id -> {path, ts, open}."""
    folder = user / LAYOUTS[layout]
    folder.mkdir(parents=True)
    entries = {f"id{n}": {"path": path, "ts": ts, **({"open": True} if is_open else {})}
               for n, (path, (ts, is_open)) in enumerate(vaults.items())}
    (folder / "obsidian.json").write_text(json.dumps({"vaults": entries}))


def notes(user: Path, name: str, text: str) -> Path:
    vault = user / name
    write_card(vault, "notes/one.md", None, text)
    (vault / ".obsidian").mkdir()
    return vault


def config_json(home: Path) -> dict:
    return json.loads((home / "config.json").read_text())


def test_parse_orders_by_last_opened_and_skips_what_it_cannot_read():
    text = json.dumps({"vaults": {
        "a": {"path": "/v/old", "ts": 10}, "b": {"path": "/v/new", "ts": 30},
        "c": {"path": "/v/open", "ts": 20, "open": True}, "d": {"ts": 40}, "e": "junk"}})
    assert [str(v.path) for v in obsidian_vaults.parse(text)] == ["/v/new", "/v/open", "/v/old"]
    assert obsidian_vaults.parse("{not json") == [] and obsidian_vaults.parse("[]") == []


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_init_offers_obsidians_vaults_and_takes_the_one_chosen(home, fake_home, cli, layout):
    work = notes(fake_home, "Work", "the deploy key of the shop lives in vault-east")
    private = notes(fake_home, "Private", "the boat is moored at pier eleven")
    obsidian_install(fake_home, layout, {str(work): (200, True), str(private): (100, False)})
    code, text = cli("init", stdin="2\n")
    assert code == 0
    assert config_json(home)["vault"] == str(private)
    code, out = cli("search", "pier", "--json")
    assert code == 0 and [h["path"] for h in out["hits"]] == ["notes/one.md"]


def test_the_question_lists_each_vault_and_memsyncs_own_folder(home, fake_home, run_cli):
    work = notes(fake_home, "Work", "the deploy key of the shop lives in vault-east")
    obsidian_install(fake_home, "linux", {str(work): (200, False)})
    code, _out, err = run_cli("init", stdin="\n")  # Enter: the first, the last opened
    assert code == 0 and config_json(home)["vault"] == str(work)
    assert f"1  {work}  (Obsidian vault, last opened)" in err
    assert f"2  {home / 'vault'}  (memsync's own folder, empty)" in err


def test_yes_takes_the_last_opened_vault(home, fake_home, cli):
    vaults = {str(notes(fake_home, name, f"a note of the {name} vault, long enough")): (ts, False)
              for name, ts in (("Old", 100), ("Latest", 300), ("Middle", 200))}
    obsidian_install(fake_home, "macos", vaults)
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and out["vault"] == str(fake_home / "Latest")
    assert config_json(home)["vault"] == str(fake_home / "Latest") and out["cards"] == 1


def test_a_vault_folder_obsidian_lost_is_not_offered(home, fake_home, cli):
    obsidian_install(fake_home, "linux", {str(fake_home / "Gone"): (500, True)})
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and out["vault"] == str(home / "vault")


def test_yes_without_obsidian_uses_the_default_folder_and_says_it_is_empty(home, cli):
    code, out = cli("init", "--yes", "--json")
    assert code == 0 and out["vault"] == str(home / "vault")
    assert any("holds no notes" in n and "memsync init --vault DIR" in n for n in out["notes"])
    code, text = cli("init")
    assert "holds no notes yet" in text and "`memsync init --vault DIR`" in text


def test_without_an_answer_nothing_is_set_up_and_the_vaults_found_are_named(home, fake_home, cli):
    work = notes(fake_home, "Work", "the deploy key of the shop lives in vault-east")
    obsidian_install(fake_home, "snap", {str(work): (200, True)})
    code, out = cli("init", "--json")
    assert code == 2 and not home.exists()  # memsync's own folder is not written as the vault
    message = out["error"]["message"]
    assert f"`memsync init --vault {work}` (Obsidian vault, last opened)" in message
    assert "`memsync init --vault DIR`" in message and "`--yes` takes the first" in message


def test_init_from_a_script_with_vaults_to_choose_from_refuses_and_writes_nothing(home, fake_home, run_cli):
    work = notes(fake_home, "Work", "the deploy key of the shop lives in vault-east")
    obsidian_install(fake_home, "linux", {str(work): (200, True)})
    code, out, err = run_cli("init", stdin="")  # `memsync init </dev/null`
    assert code == 2 and not home.exists()
    assert "no vault chosen, so nothing was set up" in err and "Traceback" not in err
    named = pasted(err, "memsync init --vault")
    assert named == ["init", "--vault", "DIR"]
    code, out, err = run_cli(*pasted(err.split("one of those on offer: ")[1], "memsync init --vault"),
                             "--json")
    assert code == 0 and config_json(home)["vault"] == str(work)


@pytest.mark.parametrize("how", [["init"], ["init", "--json"]])
def test_init_from_a_script_with_no_vault_to_choose_takes_memsyncs_own_folder_and_says_so(home, fake_home,
                                                                                         run_cli, how):
    # what `make run` does on a fresh machine with no terminal: the documented default vault
    code, out, err = run_cli(*how, stdin="")
    assert code == 0 and config_json(home)["vault"] == str(home / "vault"), err
    said = out["notes"] if isinstance(out, dict) else out
    assert "nobody to ask which folder is the vault" in str(said) and "Traceback" not in err


def test_without_obsidian_init_still_asks_and_enter_takes_memsyncs_own_folder(home, run_cli):
    code, _out, err = run_cli("init", stdin="\n")
    assert f"1  {home / 'vault'}  (memsync's own folder, empty)" in err
    assert code == 0 and config_json(home)["vault"] == str(home / "vault")


def test_a_configured_vault_is_not_asked_about_again(home, fake_home, cli, tmp_path):
    work = notes(fake_home, "Work", "the deploy key of the shop lives in vault-east")
    other = notes(fake_home, "Other", "the other vault has a note as well")
    obsidian_install(fake_home, "linux", {str(work): (200, True)})
    assert cli("init", "--vault", other)[0] == 0
    code, out = cli("init", "--json")
    assert code == 0 and out["vault"] == str(other) and out["status"] == "unchanged"


def test_a_declined_source_is_not_offered_again_until_ask_again(home, fake_home, cli):
    (fake_home / ".gemini").mkdir()
    (fake_home / ".gemini" / "GEMINI.md").write_text(
        "# Gemini\n\n## Gemini Added Memories\n- the staging box is called tern-3\n")
    code, text = cli("init", stdin="\nn\n")  # Enter: memsync's own folder; no to GEMINI.md
    assert code == 0 and "sources" not in config_json(home)
    code, text = cli("init", stdin="y\n")  # an answer it does not ask for is never read
    assert code == 0 and "sources" not in config_json(home)
    assert "declined before" in text and "--ask-again" in text
    code, out = cli("init", "--yes", "--json")
    assert out["sources_added"] == [] and out["sources_offered"] == []
    code, text = cli("init", "--ask-again", stdin="y\n")
    assert code == 0 and [s["name"] for s in config_json(home)["sources"]] == ["gemini"]
    assert config_json(home)["declined"] == []


def interrupted_at(question: str, answers: str = "") -> tuple[int, str]:
    """The installed `memsync init`, given `answers`, then Ctrl-C (SIGINT) once `question` is
    asked: its exit code and stderr."""
    proc = subprocess.Popen([MEMSYNC_BIN, "init"], stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, env=os.environ.copy())
    assert proc.stdin and proc.stderr
    proc.stdin.write(answers.encode())
    proc.stdin.flush()
    err, deadline = b"", time.monotonic() + 30
    while question.encode() not in err.split(b"\n")[-1] and time.monotonic() < deadline:
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break
        err += chunk
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=30)[1]
    return proc.returncode, (err + rest).decode()


def test_ctrl_c_at_the_vault_question_stops_init_before_anything_is_written(home, fake_home):
    work = notes(fake_home, "Work", "the deploy key of the shop lives in vault-east")
    obsidian_install(fake_home, "linux", {str(work): (200, True)})
    code, err = interrupted_at("Number, or the path of another folder")
    assert code == 1 and "Aborted!" in err and "Traceback" not in err
    assert not home.exists()  # no data home, no config.json naming memsync's own folder
    assert "Add it as the read-only source" not in err


def test_ctrl_c_at_a_source_question_leaves_the_vault_chosen_and_config_valid(home, fake_home):
    work = notes(fake_home, "Work", "the deploy key of the shop lives in vault-east")
    obsidian_install(fake_home, "linux", {str(work): (200, True)})
    (fake_home / ".gemini").mkdir()
    (fake_home / ".gemini" / "GEMINI.md").write_text("# Gemini\n\n- the staging box is tern-3\n")
    code, err = interrupted_at("Add it as the read-only source 'gemini'?", answers="1\n")
    assert code == 1 and "Aborted!" in err and "Traceback" not in err
    assert config_json(home) == {"vault": str(work)}  # not declined: asked again next time


def pasted(text: str, start: str) -> list[str]:
    """The arguments of the first command in backticks that starts with `start`, as a shell
    would split the line pasted (without the leading `memsync`)."""
    command = text.split("`" + start, 1)[1].split("`", 1)[0]
    return shlex.split(start + command)[1:]


def test_the_commands_init_prints_keep_a_folder_with_a_space_one_argument(
        home, fake_home, cli, monkeypatch):
    user = fake_home / "Jo Doe"  # a home whose name holds a space, as on many Macs
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    work = notes(user, "My Notes", "the deploy key of the shop lives in vault-east")
    obsidian_install(user, "linux", {str(work): (200, True)})
    (user / ".gemini").mkdir()
    (user / ".gemini" / "GEMINI.md").write_text("# Gemini\n\n- the staging box is tern-3\n")
    code, text = cli("init", stdin="2\nn\n")  # memsync's own folder; no to GEMINI.md
    assert code == 0 and config_json(home)["vault"] == str(home / "vault")
    code, out = cli(*pasted(text.split("Obsidian knows")[1], "memsync init --vault"), "--json")
    assert code == 0 and out["vault"] == str(work)
    code, out = cli(*pasted(text, "memsync sources --add"), "--json")
    assert code == 0 and config_json(home)["sources"][0]["path"] == str(user / ".gemini")
    code, out = cli("init", "--vault", user / "New Vault", "--json")
    advice = out["error"]["message"].split("(mkdir -p ")[1].split(") or")[0]
    assert code == 2 and shlex.split(advice) == [str(user / "New Vault")]
