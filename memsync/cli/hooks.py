"""`memsync hooks`: run `memsync brief` at each session start of Claude Code, Codex or Gemini CLI
(memsync.hooks edits the client's own settings file, reversibly)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from .. import clients, hooks
from ..brief.project import find
from ..hooks.clients import CLIENTS
from . import Context, command, emit, main, not_a_folder

CLIENT = click.Choice(list(CLIENTS))


@main.group("hooks")
def hooks_group():
    """Start every agent session with the memsync brief (a session-start hook).

    \b
    Example:
      memsync hooks install claude-code            # every project (~/.claude/settings.json)
      memsync hooks install codex --project .      # this repository only
      memsync hooks status
    """


def scope(fn):
    fn = click.option("--project", "project_dir", metavar="DIR",
                      help="Only for the project at DIR (its git root): the project's own settings file.")(fn)
    return click.option("--user", is_flag=True, help="For every project (the default).")(fn)


def _project(project_dir: str | None, user: bool) -> Path | None:
    if project_dir and user:
        raise click.UsageError("give --project DIR or --user, not both")
    if not project_dir:
        return None
    root = Path(find(project_dir).root or project_dir)  # the git root above DIR, else DIR
    if not root.is_dir():
        raise click.BadParameter(f"{project_dir}: {not_a_folder(project_dir)}; give the project's folder",
                                 param_hint="--project")
    return root


def render(data: dict) -> str:
    said = {"installed": "installed in", "unchanged": "already installed in",
            "uninstalled": "removed from", "not installed": "not installed in"}[data["status"]]
    lines = [f"{data['client']}: {said} {data['settings']}"]
    stale = data.get("missing") or data.get("elsewhere")
    if stale:  # installed, but not what runs here: the brief is none, or another install's
        lines[0] += (", but its command runs a memsync that is not there" if data.get("missing")
                     else ", but its command runs another memsync than this one")
        here = f" ({data['this']})" if data.get("this") else ""
        lines.append(f"  run `{data['reinstall']}` again to point it at this one{here}")
    if data["status"] in ("installed", "unchanged") and not stale:
        lines.append(f"  {data['title']} now runs `memsync brief` when a session starts and adds it "
                     "to the model's context; it never blocks the session (2 s at most).")
    if data.get("backup"):
        lines.append(f"  backup of the file as it was: {data['backup']}")
    if data["status"] == "uninstalled" and not data.get("backup"):
        lines.append("  the file is back as it was before memsync touched it")
    lines += [f"  command: {c}" for c in data.get("commands", [])]
    lines += [f"  missing: {shlex.split(c)[0]} (no such file)" for c in data.get("missing", [])]
    lines += [f"  another memsync: {shlex.split(c)[0]}" for c in data.get("elsewhere", [])]
    if data["status"] != "uninstalled" and data["status"] != "not installed":
        lines += [f"  note: {note}" for note in data["notes"]]
        lines.append(f"  end of session: {data['end_of_session']}")
    return "\n".join(lines)


@command(hooks_group, "install")
@click.argument("client", type=CLIENT)
@scope
def install(obj: Context, as_json: bool, client, project_dir, user):
    """Add the session-start hook to CLIENT's settings (claude-code, codex, gemini).

    \b
    Example:
      memsync hooks install gemini
    """
    command_line = hooks.hook_command(clients.installed_command(), obj.cfg.home.path, client)
    emit(hooks.install(client, command_line, Path.home(), _project(project_dir, user)), as_json, render)


@command(hooks_group, "uninstall")
@click.argument("client", type=CLIENT)
@scope
def uninstall(obj: Context, as_json: bool, client, project_dir, user):
    """Take the hook out again (the file as it was, when nothing else changed in it).

    \b
    Example:
      memsync hooks uninstall claude-code
    """
    emit(hooks.uninstall(client, Path.home(), _project(project_dir, user)), as_json, render)


@command(hooks_group, "status")
@click.argument("client", type=CLIENT, required=False)
@scope
def status(obj: Context, as_json: bool, client, project_dir, user):
    """Say for each client (or CLIENT) whether the hook is installed, and what may stop it.

    \b
    Example:
      memsync hooks status --project .
    """
    project = _project(project_dir, user)
    this = clients.installed_command()
    found = [hooks.status(name, Path.home(), project, this) for name in ([client] if client else CLIENTS)]
    emit({"hooks": found}, as_json, lambda d: "\n".join(render(item) for item in d["hooks"]))
