"""`memsync sources`: list, add and remove the read-only sources beside the vault."""

from __future__ import annotations

import click
from click.core import ParameterSource

from .. import sources as sources_mod
from . import Context, command, complete, emit, main, waiting_note

_NOT_A_FOLDER = {"missing": "missing folder", "file": "a file, not a folder: a source is the folder that holds it"}


def _human(data: dict) -> str:
    if "sources" not in data:
        return f"{data['status']}: {data['name']}" + (f"\n  {data['note']}" if data.get("note") else "")
    lines = []
    for s in data["sources"]:
        state = "" if s["exists"] else f"  ({_NOT_A_FOLDER.get(s['on_disk'], 'not a folder')})"
        if s.get("ignored"):
            state += f"\n  {s['ignored']}"
        mode = "writable" if s["writable"] else "read-only"
        lines.append(f"{s['name']:<12} {s['adapter']:<11} {s['cards']:>6} cards  {mode:<9} {s['path']}{state}")
    return "\n".join(lines)


@command(main, "sources")
@click.option("--add", "add_name", metavar="NAME", help="Add a read-only source with this name.")
@click.option("--adapter", default="markdown", show_default=True, shell_complete=complete.adapters,
              help="Format of the source to add: markdown, agents (AGENTS.md/CLAUDE.md/GEMINI.md, "
                   "Claude Code rules and memory), mcp-memory (memory.jsonl, memory.json), cursor (.cursor/rules, .cursorrules).")
@click.option("--path", "path", metavar="DIR", help="Folder of the source to add.")
@click.option("--remove", "remove_name", metavar="NAME", help="Remove a source and its cards from the index.")
def sources(obj: Context, as_json: bool, add_name, adapter, path, remove_name):
    """List the sources memsync reads, or add / remove a read-only one.

    Sources are read in place and never written; write commands only touch the vault. Two
    sources may not read the same files (a folder inside another source, or the vault).
    A running `memsync watch` follows additions and removals by itself.

    \b
    Example:
      memsync sources --add claude --adapter agents --path ~/.claude
      memsync sources
    """
    if add_name and remove_name:
        raise click.UsageError("use --add or --remove, not both")
    if not add_name:
        # Options that only make sense with --add would otherwise be silently ignored.
        adapter_given = click.get_current_context().get_parameter_source("adapter")
        if path or adapter_given != ParameterSource.DEFAULT:
            raise click.UsageError("--path and --adapter describe a source to add: use them with --add NAME")
    if add_name:
        if not path:
            raise click.UsageError("--add needs --path DIR")
        data = sources_mod.add(obj.cfg, add_name, adapter, path, waiting_note(obj.cfg))
    elif remove_name:
        data = sources_mod.remove(obj.cfg, remove_name)
    else:
        data = sources_mod.listing(obj.cfg)
    emit(data, as_json, _human)
