"""A command line click refuses, run as a session-start hook: exit 2 blocks the session in Claude
Code, Codex and Gemini CLI, so a `brief --hook` run answers `{}` and says why instead."""

from __future__ import annotations

import json
import subprocess

import pytest

from memsync.brief.hookrun import asked_for

from .conftest import MEMSYNC_BIN


def run(*args: str, stdin: str = "{}") -> subprocess.CompletedProcess:
    return subprocess.run([MEMSYNC_BIN, *args], input=stdin, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(("args", "said"), [
    (("brief", "--hook", "codex", "--budget", "abc"), "'abc' is not a valid integer"),
    (("brief", "--budget", "abc", "--hook", "gemini"), "'abc' is not a valid integer"),
    (("brief", "--hook", "claude-code", "--no-such-option"), "No such option '--no-such-option'"),
    (("brief", "--hook=codex", "extra"), "unexpected extra argument (extra)"),
    (("brief", "--hook"), "'--hook' requires an argument"),
    (("--no-such-global", "brief", "--hook", "codex"), "No such option '--no-such-global'"),
    (("brief", "--hook", "codex\udcff"), "--hook is not UTF-8 text"),
])
def test_a_refused_hook_line_answers_nothing_and_exits_0(args, said):
    proc = run(*args)
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {}
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "memsync hooks install CLIENT" in lines[0]


@pytest.mark.parametrize("args", [("brief", "--budget", "abc"), ("--no-such-global", "brief"),
                                  ("brief", "--budget", "abc", "--", "--hook")])
def test_outside_a_hook_a_usage_error_still_exits_2(args):
    proc = run(*args)
    assert proc.returncode == 2 and proc.stdout == "" and "Usage: memsync" in proc.stderr


def test_hook_mode_is_an_option_before_the_end_of_options():
    assert asked_for(["--hook", "codex"]) and asked_for(["--budget", "x", "--hook=gemini"])
    assert not asked_for(["--budget", "x"]) and not asked_for(["--", "--hook"])
    assert not asked_for(["--hooks"])
