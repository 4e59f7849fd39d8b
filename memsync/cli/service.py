"""`memsync service install | uninstall | status`: the watcher as a per-user service."""

from __future__ import annotations

import click

from .. import clients, onboard
from .. import service as service_mod
from ..errors import BadEnvironment
from . import Context, command, emit, main


@main.group("service")
def service():
    """Run `memsync watch` as a user service: it starts at log-in and survives reboots.

    A systemd user unit on Linux, a launchd agent on macOS. It runs this memsync (absolute
    path) with this data home, and so watches the vault that home's config.json names.

    \b
    Example:
      memsync service install
      memsync service status
    """


def _describe(obj: Context, plan: bool = False) -> service_mod.Service:
    how = service_mod.describe_plan if plan else service_mod.describe
    return how(clients.installed_command(), obj.cfg.home.path)


PLAN = click.option("--consolidate", "plan", is_flag=True,
                    help="The daily `memsync consolidate --save` timer (a plan left for review) instead of the watcher.")


def _human(data: dict) -> str:
    if "installed" in data:  # status
        if not data["installed"]:
            state = "not installed"
        elif data["running"] is None:
            state = "installed; whether it runs cannot be told here"
        else:
            state = "running" if data["running"] else f"installed, not running ({data['state']})"
        lines = [f"{data['name']}: {state}", f"  file: {data['file']}", f"  logs: {data['log']}"]
    else:
        lines = [f"{data['status']}: {data['name']}", f"  file: {data['file']}"]
        if data.get("log"):
            lines.append(f"  logs: {data['log']}")
    if data.get("note"):
        lines.append(f"  note: {data['note']}")
    return "\n".join(lines)


@command(service, "install")
@PLAN
def install(obj: Context, as_json: bool, plan: bool):
    """Write the unit (or plist), enable it and start it now.

    \b
    Example:
      memsync init --vault ~/Obsidian/Main && memsync service install
      memsync service install --consolidate    # a daily tidy-up plan, never applied by itself
    """
    cfg = obj.cfg
    if cfg.vault.origin in ("cli", "env"):
        # The service has neither this command line nor this shell's environment.
        raise BadEnvironment(
            f"the vault {cfg.vault.path} comes from {'--vault' if cfg.vault.origin == 'cli' else 'MEMSYNC_VAULT'}, "
            f"which the service would not see: run `{onboard.use_vault(cfg.vault.path)}` first"
        )
    cfg.ensure_vault()
    emit(service_mod.install(_describe(obj, plan)), as_json, _human)


@command(service, "uninstall")
@PLAN
def uninstall(obj: Context, as_json: bool, plan: bool):
    """Stop the service and remove its unit (or plist). The index and vault are untouched.

    \b
    Example:
      memsync service uninstall
      memsync service uninstall --consolidate    # the daily tidy-up timer instead
    """
    emit(service_mod.uninstall(_describe(obj, plan)), as_json, _human)


@command(service, "status")
@PLAN
def status(obj: Context, as_json: bool, plan: bool):
    """Whether the service is installed and running, and where it logs.

    \b
    Example:
      memsync service status --json
    """
    emit(service_mod.status(_describe(obj, plan)), as_json, _human)


