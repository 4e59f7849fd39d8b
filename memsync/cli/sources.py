"""`memsync sources`: list, add and remove the read-only sources beside the vault."""

from __future__ import annotations

import click

from .. import api
from . import Context, command, emit, main


def _human(data: dict) -> str:
    if "sources" not in data:
        return f"{data['status']}: {data['name']}" + (f"\n  {data['note']}" if data.get("note") else "")
    lines = []
    for s in data["sources"]:
        state = "" if s["exists"] else "  (missing folder)"
        mode = "writable" if s["writable"] else "read-only"
        lines.append(f"{s['name']:<12} {s['adapter']:<11} {s['cards']:>6} cards  {mode:<9} {s['path']}{state}")
    return "\n".join(lines)


@command(main, "sources")
@click.option("--add", "add_name", metavar="NAME", help="Add a read-only source with this name.")
@click.option("--adapter", default="markdown", show_default=True,
              help="Format: markdown, agents (AGENTS.md/CLAUDE.md/GEMINI.md, Claude Code memory), "
                   "mcp-memory (memory.jsonl), cursor (.cursor/rules).")
@click.option("--path", "path", metavar="DIR", help="Folder of the source to add.")
@click.option("--remove", "remove_name", metavar="NAME", help="Remove a source and its cards from the index.")
def sources(obj: Context, as_json: bool, add_name, adapter, path, remove_name):
    """List the sources memsync reads, or add / remove a read-only one.

    Sources are read in place and never written; write commands only touch the vault.

    \b
    Example:
      memsync sources --add claude --adapter agents --path ~/.claude
      memsync sources
    """
    if add_name and remove_name:
        raise click.UsageError("use --add or --remove, not both")
    if add_name:
        if not path:
            raise click.UsageError("--add needs --path DIR")
        data = api.add_source(obj.cfg, add_name, adapter, path)
    elif remove_name:
        data = api.remove_source(obj.cfg, remove_name)
    else:
        data = api.sources(obj.cfg)
    emit(data, as_json, _human)
