"""`memsync service`: run `memsync watch` as a per-user service that survives log-outs and reboots.

Linux gets a systemd user unit, macOS a launchd agent. Either runs the absolute path of the
installed command with the data home it was installed from, so it watches the vault that
home's config.json names. The unit text is built by pure functions (tests read it); the few
calls to systemctl / launchctl are at the bottom.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import BadEnvironment

LABEL = "dev.memsync.watch"


@dataclass(frozen=True)
class Service:
    kind: str  # "systemd" | "launchd"
    name: str  # unit name or launchd label
    file: Path  # the unit file or plist
    text: str
    log: str  # where its output goes, said in words a user can act on
    extra: tuple[tuple[Path, str], ...] = ()  # more files it needs (a timer's oneshot service)


def _suffix(home: Path) -> str:
    """The default home gets the plain name; any other home a name of its own, so two homes can
    each have their watcher."""
    if home == Path.home() / ".memsync":
        return ""
    return "-" + hashlib.sha256(str(home).encode()).hexdigest()[:8]


def systemd_unit(command: Path, home: Path) -> str:
    exec_start = " ".join(shlex.quote(part) for part in (str(command), "--home", str(home), "watch"))
    return (
        "[Unit]\n"
        "Description=memsync watch: keep the memory index live\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={exec_start}\n"
        # SIGTERM is a clean stop for `memsync watch`: pending changes are applied first.
        "KillSignal=SIGTERM\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "Environment=PYTHONUNBUFFERED=1\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def launchd_plist(command: Path, home: Path, label: str) -> str:
    log = str(home / "watch.log")
    data = {
        "Label": label,
        "ProgramArguments": [str(command), "--home", str(home), "watch"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": log,
        "StandardErrorPath": log,
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
        "ProcessType": "Background",
    }
    return plistlib.dumps(data).decode("utf-8")


PLAN_LABEL = "dev.memsync.consolidate"
PLAN_HOUR = 4  # local time of the daily dry run


def plan_units(command: Path, home: Path) -> tuple[str, str]:
    """The systemd oneshot service and the daily timer that leave a consolidate plan for review
    (`memsync consolidate --save`: nothing is applied)."""
    exec_start = " ".join(shlex.quote(part) for part in
                          (str(command), "--home", str(home), "consolidate", "--save"))
    service = (
        "[Unit]\n"
        "Description=memsync consolidate: leave today's tidy-up plan for review (nothing applied)\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={exec_start}\n"
    )
    timer = (
        "[Unit]\n"
        "Description=memsync consolidate plan, daily\n"
        "\n"
        "[Timer]\n"
        f"OnCalendar=*-*-* {PLAN_HOUR:02d}:00:00\n"
        "Persistent=true\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )
    return service, timer


def plan_plist(command: Path, home: Path, label: str) -> str:
    log = str(home / "consolidate.log")
    return plistlib.dumps({
        "Label": label,
        "ProgramArguments": [str(command), "--home", str(home), "consolidate", "--save"],
        "StartCalendarInterval": {"Hour": PLAN_HOUR, "Minute": 0},
        "StandardOutPath": log,
        "StandardErrorPath": log,
        "ProcessType": "Background",
    }).decode("utf-8")


def describe_plan(command: Path, home: Path, platform: str | None = None,
                  user_home: Path | None = None) -> Service:
    """The daily consolidate dry run as a service: a systemd timer, or a launchd agent."""
    platform = platform or sys.platform
    user_home = user_home or Path.home()
    suffix = _suffix(home)
    if platform == "darwin":
        label = PLAN_LABEL + suffix
        return Service("launchd", label, user_home / "Library" / "LaunchAgents" / f"{label}.plist",
                       plan_plist(command, home, label), str(home / "consolidate.log"))
    if platform.startswith("linux"):
        name = f"memsync-consolidate{suffix}"
        folder = Path(os.environ.get("XDG_CONFIG_HOME") or user_home / ".config") / "systemd" / "user"
        service_text, timer_text = plan_units(command, home)
        return Service("systemd", f"{name}.timer", folder / f"{name}.timer", timer_text,
                       f"journalctl --user -u {name}.service",
                       extra=((folder / f"{name}.service", service_text),))
    raise BadEnvironment(f"`memsync service` knows systemd (Linux) and launchd (macOS), not "
                         f"{platform}: run `memsync consolidate --save` daily from your scheduler")


def describe(command: Path, home: Path, platform: str | None = None,
             user_home: Path | None = None) -> Service:
    platform = platform or sys.platform
    user_home = user_home or Path.home()
    suffix = _suffix(home)
    if platform == "darwin":
        label = LABEL + suffix
        return Service("launchd", label, user_home / "Library" / "LaunchAgents" / f"{label}.plist",
                       launchd_plist(command, home, label), str(home / "watch.log"))
    if platform.startswith("linux"):
        name = f"memsync-watch{suffix}.service"
        config_home = Path(os.environ.get("XDG_CONFIG_HOME") or user_home / ".config")
        return Service("systemd", name, config_home / "systemd" / "user" / name,
                       systemd_unit(command, home), f"journalctl --user -u {name}")
    raise BadEnvironment(f"`memsync service` knows systemd (Linux) and launchd (macOS), not "
                         f"{platform}: run `memsync watch` from your system's start-up instead")


# --- the service managers -------------------------------------------------------------------


def _run(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(args, 127, "", str(exc))


def _manager(service: Service) -> list[str]:
    if service.kind == "systemd":
        return ["systemctl", "--user"]
    return ["launchctl"]


def manager_problem(service: Service) -> str | None:
    """Why the service manager cannot be used here, or None."""
    if shutil.which(_manager(service)[0]) is None:
        return f"`{_manager(service)[0]}` is not on PATH"
    probe = _run(*_manager(service), "show-environment" if service.kind == "systemd" else "list")
    if probe.returncode == 0:
        return None
    return (probe.stderr or probe.stdout).strip().splitlines()[-1] if (probe.stderr or probe.stdout) \
        else f"exit {probe.returncode}"


def install(service: Service) -> dict:
    program = _manager(service)[0]
    if shutil.which(program) is None:  # no systemd (a container, WSL without it): a unit would never run
        raise BadEnvironment(f"`{program}` is not on PATH: this system has no {service.kind} to "
                             "start the watcher at log-in. Run `memsync watch` from your system's "
                             "start-up instead (or in a terminal), or let an agent's MCP server "
                             "keep the index live")
    service.file.parent.mkdir(parents=True, exist_ok=True)
    unchanged = True
    for file, text in ((service.file, service.text), *service.extra):
        if not (file.is_file() and file.read_text(encoding="utf-8") == text):
            file.write_text(text, encoding="utf-8")
            unchanged = False
    result: dict = {"status": "unchanged" if unchanged else "installed", "file": str(service.file),
              "name": service.name, "log": service.log}
    problem = manager_problem(service)
    if problem:
        start = ("systemctl --user daemon-reload && systemctl --user enable --now " + service.name
                 if service.kind == "systemd" else f"launchctl load -w {shlex.quote(str(service.file))}")
        result["started"] = False
        result["note"] = (f"the {service.kind} user manager cannot be reached here ({problem}); the "
                          f"file is written: start it from a log-in session with `{start}`")
        return result
    if service.kind == "systemd":
        steps = [("daemon-reload",), ("enable", "--now", service.name)]
        if not unchanged:
            steps.append(("restart", service.name))  # a changed unit must run as written now
    else:
        steps = [("unload", str(service.file)), ("load", "-w", str(service.file))]
    for step in steps:
        done = _run(*_manager(service), *step)
        if done.returncode != 0 and step[0] != "unload":
            raise BadEnvironment(f"`{' '.join(_manager(service) + list(step))}` failed: "
                                 f"{done.stderr.strip() or done.stdout.strip()}")
    result["started"] = True
    return result


def uninstall(service: Service) -> dict:
    if not service.file.exists():
        return {"status": "not installed", "file": str(service.file), "name": service.name}
    reachable = manager_problem(service) is None
    if reachable:
        if service.kind == "systemd":
            _run(*_manager(service), "disable", "--now", service.name)
        else:
            _run(*_manager(service), "unload", "-w", str(service.file))
    service.file.unlink()
    for file, _text in service.extra:
        file.unlink(missing_ok=True)
    if service.kind == "systemd" and reachable:
        _run(*_manager(service), "daemon-reload")
    return {"status": "uninstalled", "file": str(service.file), "name": service.name}


def status(service: Service) -> dict:
    result = {"name": service.name, "file": str(service.file), "installed": service.file.is_file(),
              "log": service.log, "running": None}
    problem = manager_problem(service)
    if problem:
        result["note"] = f"the {service.kind} user manager cannot be reached here ({problem})"
        return result
    if service.kind == "systemd":
        state = _run(*_manager(service), "is-active", service.name).stdout.strip()
    else:
        state = "active" if _run(*_manager(service), "list", service.name).returncode == 0 else "inactive"
    result["running"] = state == "active"
    result["state"] = state or "unknown"
    return result
