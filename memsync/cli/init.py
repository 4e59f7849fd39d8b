"""`memsync init`: set this machine up in one command, and print how to connect the agents."""

from __future__ import annotations

from pathlib import Path

import click

from .. import api, clients, discover, onboard
from .. import config as config_mod
from .. import sources as sources_mod
from . import Context, command, emit, main, progress_bar


def _ask(found) -> bool:
    """One question per source found; no answer (no terminal, end of input) counts as no."""
    s = found.source
    try:
        return click.confirm(f"Found {found.what} in {s.root}. Add it as the read-only source "
                             f"{s.name!r}?", default=True, err=True)
    except click.Abort:  # end of input: end the question's line, then take it as a no
        click.echo(err=True)
        return False


@command(main, "init")
@click.option("--vault", "vault_dir", metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="The vault to use from now on (default: the one in use now).")
@click.option("-y", "--yes", is_flag=True, help="Add every agent memory file found without asking.")
def init(obj: Context, as_json: bool, vault_dir, yes):
    """Set memsync up: data home, vault in config.json, agent memory sources, a first index.

    Every later command, `memsync watch` and MCP servers started by desktop apps then use the
    same vault without env vars. It also looks for the memory files agents keep on this machine
    (~/.claude, ~/.gemini/GEMINI.md, ~/.codex/AGENTS.md, a memory.jsonl, and AGENTS.md /
    .cursor/rules in the current folder) and offers each as a read-only source. Ends with the
    MCP set-up for Claude Code, Claude Desktop and Cursor, ready to paste. Safe to run again.

    \b
    Example:
      memsync init --vault ~/Obsidian/Main
      memsync init --yes        # accept every source found, ask nothing
    """
    cfg, changes = onboard.set_vault(obj.cfg, vault_dir or (obj.cfg.vault.path
                                                            if obj.cfg.vault.origin == "cli" else None))
    added, declined = [], []
    for found in discover.offers(Path.home(), Path.cwd(), (*cfg.sources, *cfg.listed_sources)):
        entry = onboard.offer_dict(found)
        if yes or (not as_json and _ask(found)):
            sources_mod.add(cfg, found.source.name, found.source.adapter, found.source.root)
            changes.append(f"added {found.what} as the read-only source {found.source.name!r}")
            added.append(entry)
            cfg = config_mod.reload(cfg)
        else:
            declined.append(entry)
    with progress_bar("indexing", enabled=not as_json) as progress:
        report = api.reindex(cfg, progress=progress)
    change = onboard.index_changed(report)
    if change:
        changes.append(change)
    mcp = clients.snippets(clients.installed_command(), cfg.home.path)
    data = onboard.summary(cfg, changes, report, mcp, added, declined)
    data["hooks"] = _hooks(cfg, yes, as_json)
    emit(data, as_json, onboard.render)


def _hooks(cfg, yes: bool, as_json: bool) -> list[dict]:
    """The session-start hook of each agent found in the home: installed with --yes or a yes."""
    from .. import hooks

    out = []
    for name in hooks.detected(Path.home()):
        found = hooks.status(name, Path.home(), None)
        if found["status"] != "installed" and (yes or (not as_json and _ask_hook(found))):
            command_line = hooks.hook_command(clients.installed_command(), cfg.home.path, name)
            found = hooks.install(name, command_line, Path.home(), None)
        out.append({"client": name, "status": "installed" if found["status"] != "not installed" else found["status"],
                    "settings": found["settings"], "install": f"memsync hooks install {name}"})
    return out


def _ask_hook(found: dict) -> bool:
    try:
        return click.confirm(f"Start every {found['title']} session with the memsync brief (a "
                             f"SessionStart hook in {found['settings']}, backed up first)?",
                             default=True, err=True)
    except click.Abort:
        click.echo(err=True)
        return False
