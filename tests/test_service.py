"""`memsync service`: the unit and plist as written, and the command on this machine."""

from __future__ import annotations

import os
import plistlib
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memsync import service

from .conftest import MEMSYNC_BIN, write_card

COMMAND = Path("/opt/tools/bin/memsync")
REAL_HOME = os.environ.get("HOME", "")


@pytest.fixture(autouse=True)
def user_dirs(tmp_path, monkeypatch):
    """Unit files go under a throwaway XDG_CONFIG_HOME, never the real ~/.config."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.chdir(tmp_path)


def test_the_systemd_unit_runs_watch_with_the_absolute_command_and_home(tmp_path):
    home = tmp_path / "my home"
    unit = service.describe(COMMAND, home, "linux")
    assert unit.kind == "systemd" and unit.file == tmp_path / "xdg/systemd/user" / unit.name
    lines = unit.text.splitlines()
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert shlex.split(exec_start.removeprefix("ExecStart=")) == [str(COMMAND), "--home", str(home), "watch"]
    for expected in ("Restart=on-failure", "WantedBy=default.target", "KillSignal=SIGTERM"):
        assert expected in lines
    assert unit.log == f"journalctl --user -u {unit.name}"


def test_the_launchd_plist_runs_watch_at_load_and_logs_in_the_home(tmp_path):
    home = tmp_path / "home"
    agent = service.describe(COMMAND, home, "darwin", user_home=tmp_path / "user")
    assert agent.file == tmp_path / "user/Library/LaunchAgents" / f"{agent.name}.plist"
    data = plistlib.loads(agent.text.encode())
    assert data["Label"] == agent.name
    assert data["ProgramArguments"] == [str(COMMAND), "--home", str(home), "watch"]
    assert data["RunAtLoad"] is True and data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["StandardErrorPath"] == str(home / "watch.log") == agent.log


def test_two_homes_get_two_services_and_the_default_home_the_plain_name(tmp_path):
    default = service.describe(COMMAND, Path.home() / ".memsync", "linux")
    assert default.name == "memsync-watch.service"
    a = service.describe(COMMAND, tmp_path / "a", "linux")
    b = service.describe(COMMAND, tmp_path / "b", "linux")
    assert len({default.name, a.name, b.name}) == 3


def test_another_platform_is_told_what_to_do_instead():
    with pytest.raises(Exception, match="memsync watch"):
        service.describe(COMMAND, Path("/h"), "win32")


@pytest.fixture
def configured(home, run_cli, monkeypatch):
    """A vault written into config.json by init, as the service needs."""
    assert run_cli("init")[0] == 0
    monkeypatch.delenv("MEMSYNC_VAULT")


def test_install_writes_the_unit_status_names_the_logs_uninstall_removes_it(home, configured, run_cli):
    code, out, _err = run_cli("service", "install", "--json")
    assert code == 0 and out["status"] == "installed"
    unit = Path(out["file"])
    assert unit.is_file() and f"ExecStart={MEMSYNC_BIN} --home {home} watch" in unit.read_text()
    if out["started"] is False:
        assert "cannot be reached" in out["note"]  # no systemd user manager on this machine
    code, again, _err = run_cli("service", "install", "--json")
    assert again["status"] == "unchanged"
    code, state, _err = run_cli("service", "status", "--json")
    assert code == 0 and state["installed"] is True and state["log"].startswith("journalctl --user")
    code, gone, _err = run_cli("service", "uninstall", "--json")
    assert code == 0 and gone["status"] == "uninstalled" and not unit.exists()
    assert run_cli("service", "status", "--json")[1]["installed"] is False


def test_without_systemctl_install_says_so_and_writes_no_unit(configured, run_cli, tmp_path,
                                                              monkeypatch):
    if not sys.platform.startswith("linux"):
        pytest.skip("systemd is Linux's")
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # a system with no systemd at all
    code, out, _err = run_cli("service", "install", "--json")
    message = out["error"]["message"]
    assert code == 2 and "`systemctl` is not on PATH" in message and "memsync watch" in message
    assert not (tmp_path / "xdg" / "systemd").exists()
    code, state, _err = run_cli("service", "status", "--json")
    assert code == 0 and state["installed"] is False and "`systemctl` is not on PATH" in state["note"]


def test_install_refuses_a_vault_the_service_would_not_see(run_cli):
    code, out, _err = run_cli("service", "install", "--json")  # the fixture's vault is MEMSYNC_VAULT
    assert code == 2 and "memsync init --vault" in out["error"]["message"]


def test_the_init_command_it_names_keeps_a_vault_with_a_space_one_argument(run_cli, tmp_path,
                                                                          monkeypatch):
    vault = tmp_path / "My Notes"
    vault.mkdir()
    monkeypatch.setenv("MEMSYNC_VAULT", str(vault))
    code, out, _err = run_cli("service", "install", "--json")
    command = out["error"]["message"].split("`")[1]
    assert code == 2 and shlex.split(command) == ["memsync", "init", "--vault", str(vault)]


def systemd_user_problem() -> str | None:
    try:
        probe = subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True,
                               text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if probe.returncode == 0 else (probe.stderr.strip() or f"exit {probe.returncode}")


def test_live_the_service_keeps_the_index_live(home, vault, configured, run_cli, monkeypatch):
    monkeypatch.setenv("HOME", REAL_HOME)  # the user manager reads the real ~/.config
    monkeypatch.delenv("XDG_CONFIG_HOME")
    problem = systemd_user_problem()
    if problem:
        pytest.skip(f"systemctl --user does not work on this machine: {problem}")
    code, out, _err = run_cli("service", "install", "--json")
    try:
        assert code == 0 and out["started"] is True
        write_card(vault, "03-Knowledge/live.md", "live service", "saved while the service ran")
        deadline = time.monotonic() + 30
        while run_cli("search", "saved", "--json")[0] != 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert run_cli("search", "saved", "--json")[0] == 0
        assert run_cli("service", "status", "--json")[1]["running"] is True
    finally:
        assert run_cli("service", "uninstall")[0] == 0


def test_the_launchd_start_advice_keeps_a_spaced_path_one_argument(tmp_path, monkeypatch):
    """A launchctl that cannot reach its manager (as in an ssh session): the advice names the
    plist whole, though its folder holds a space."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "launchctl"
    fake.write_text("#!/bin/sh\necho 'Could not find domain for' >&2\nexit 112\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    agent = service.describe(COMMAND, tmp_path / "home", "darwin", user_home=tmp_path / "My Home")
    result = service.install(agent)
    assert result["started"] is False and "Could not find domain" in result["note"]
    command = result["note"].split("`")[1]
    assert shlex.split(command) == ["launchctl", "load", "-w", str(agent.file)]
