"""`memsync init` where nobody can answer (`< /dev/null`, a closed stdin, a script's empty pipe):
it printed every question, each answered by the end of input, before saying nobody answered.
Now it asks nothing, and says once what to run instead."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from memsync.cli.init import NO_ANSWERS_SAID

from .conftest import MEMSYNC_BIN

QUESTIONS = ("Add it as the read-only source", "session with the memsync brief")
HOW = {  # stdin as a script or a client may leave it
    "an empty pipe": {"input": ""},
    "/dev/null": {"stdin": subprocess.DEVNULL},
    "closed": None,
}


@pytest.fixture
def agent_files(fake_user):
    """Claude Code's memory and Gemini CLI's file: two sources and two hooks to offer."""
    memory = fake_user / ".claude" / "projects" / "shop" / "memory"
    memory.mkdir(parents=True)
    (memory / "deploy.md").write_text("# deploy\nthe shop deploys with kamal-9 on fridays\n")
    (fake_user / ".gemini").mkdir()
    (fake_user / ".gemini" / "GEMINI.md").write_text("# Gemini\n\n## Gemini Added Memories\n- tern-3\n")
    return fake_user


def init(how: str) -> subprocess.CompletedProcess:
    if HOW[how] is None:  # the shell's `<&-`: no file descriptor 0 at all
        return subprocess.run(["sh", "-c", f"exec {shlex.quote(MEMSYNC_BIN)} init <&-"],
                              capture_output=True, text=True, timeout=120)
    return subprocess.run([MEMSYNC_BIN, "init"], capture_output=True, text=True, timeout=120, **HOW[how])


@pytest.mark.parametrize("how", sorted(HOW))
def test_with_nobody_to_answer_init_asks_nothing_and_says_once_what_to_run(home, agent_files, how):
    proc = init(how)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(NO_ANSWERS_SAID) == 1, proc.stderr
    assert not any(question in proc.stderr for question in QUESTIONS), proc.stderr
    config = json.loads((home / "config.json").read_text())
    assert "sources" not in config and "declined" not in config  # nothing taken for a no
    assert "not added: Gemini CLI" in proc.stdout and "--add gemini --adapter agents" in proc.stdout


def test_answers_piped_are_taken_and_once_they_run_out_nothing_more_is_asked(home, agent_files, run_cli):
    code, out, err = run_cli("init", stdin="y\n")
    assert code == 0 and err.count(NO_ANSWERS_SAID) == 1, err
    assert "session with the memsync brief" not in err  # the hooks come after the answers ran out
    config = json.loads((home / "config.json").read_text())
    assert len(config["sources"]) == 1 and "declined" not in config


def test_a_terminal_or_piped_answers_are_asked_as_before(home, agent_files, run_cli):
    code, out, err = run_cli("init", stdin="y\nn\nn\nn\n")
    assert code == 0 and NO_ANSWERS_SAID not in err
    assert err.count("Add it as the read-only source") == 2 and err.count("session with the memsync brief") == 2
    config = json.loads((home / "config.json").read_text())
    assert len(config["sources"]) == 1 and len(config["declined"]) == 3
