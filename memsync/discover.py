"""Agent memory files already on this machine, for `memsync init` to offer as read-only sources.

Only places where such files are known to live are looked at, never a walk of the whole home:
Claude Code's ~/.claude (CLAUDE.md, rules, projects/*/memory), Gemini CLI's ~/.gemini (GEMINI.md),
Codex's ~/.codex (AGENTS.md), the MCP memory server's memory.jsonl (or memory.json), and the project folder
`init` runs in (AGENTS.md / CLAUDE.md / GEMINI.md, .claude/rules, .cursor/rules, Cursor's older .cursorrules).
Nothing is added here: the caller asks first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import memsync.adapters as adapters

from .model import Source
from .overlap import overlap

PROJECT_FILES = ("AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md",
                 "GEMINI.md")
CODEX_FILES = ("AGENTS.override.md", "AGENTS.md")  # the override first, as Codex reads them


@dataclass(frozen=True)
class Found:
    source: Source
    what: str  # what was seen there, for the question put to the user


def _has_claude_memory(root: Path) -> bool:
    projects = root / "projects"
    try:
        return any(any((p / "memory").glob("*.md")) for p in projects.iterdir() if p.is_dir())
    except OSError:
        return False


def _has_claude_rules(claude: Path) -> bool:
    """Any rule file in a `.claude/rules` folder (Claude Code reads its subfolders too)."""
    try:
        return any((claude / "rules").rglob("*.md"))
    except OSError:
        return False


def _candidates(home: Path, cwd: Path) -> list[Found]:
    out = []
    claude = home / ".claude"
    seen = [name for name in ("CLAUDE.md",) if (claude / name).is_file()]
    if _has_claude_rules(claude):
        seen.append("rules")
    if _has_claude_memory(claude):
        seen.append("projects/*/memory")
    if seen:
        out.append(Found(Source("claude", "agents", str(claude)), f"Claude Code: {', '.join(seen)}"))
    if (home / ".gemini" / "GEMINI.md").is_file():
        out.append(Found(Source("gemini", "agents", str(home / ".gemini")), "Gemini CLI: GEMINI.md"))
    codex = [name for name in CODEX_FILES if (home / ".codex" / name).is_file()]
    if codex:
        out.append(Found(Source("codex", "agents", str(home / ".codex")), f"Codex: {', '.join(codex)}"))
    for graph in _memory_graphs(home):
        out.append(Found(Source("mcp-memory", "mcp-memory", str(graph.parent)),
                         f"MCP memory server: {graph}"))
    if cwd != home and cwd != cwd.parent:  # a project folder, not the home or the root itself
        files = [name for name in PROJECT_FILES if (cwd / name).is_file()]
        if _has_claude_rules(cwd / ".claude"):
            files.append(".claude/rules")
        if files:
            out.append(Found(Source(_project_name(cwd), "agents", str(cwd)),
                             f"project {cwd.name}: {', '.join(files)}"))
        rules = [name for name, there in ((".cursor/rules", (cwd / ".cursor" / "rules").is_dir()),
                                          (".cursorrules", (cwd / ".cursorrules").is_file())) if there]
        if rules:
            out.append(Found(Source(_project_name(cwd) + "-cursor", "cursor", str(cwd)),
                             f"project {cwd.name}: {', '.join(rules)}"))
    return out


def _memory_graphs(home: Path) -> list[Path]:
    """The memory server's graph files, one a folder: the file MEMORY_FILE_PATH names, then
    memory.jsonl or memory.json (the server's default name before) in the usual folders. The
    adapter reads every .jsonl in the folder, so a big folder such as the home itself is not
    offered, nor a file the adapter would not read."""
    graph_adapter = adapters.get("mcp-memory")
    folders = [home / ".mcp-memory", home / ".memory", home / ".local" / "share" / "mcp-memory"]
    places = [folder / name for folder in folders for name in ("memory.jsonl", "memory.json")]
    env = os.environ.get("MEMORY_FILE_PATH")
    if env:
        places.insert(0, Path(env).expanduser().absolute())
    found: list[Path] = []
    for graph in places:
        folder = graph.parent
        if (graph.is_file() and graph_adapter.wants_name(graph.name)
                and folder not in (home, home.parent) and all(f.parent != folder for f in found)):
            found.append(graph)
    return found


def _project_name(folder: Path) -> str:
    cleaned = "".join(c if c.isalnum() and c.isascii() or c in "-_" else "-" for c in folder.name)
    return (cleaned.strip("-") or "project")[:30]


def offers(home: Path, cwd: Path, configured: tuple[Source, ...]) -> list[Found]:
    """What could be added: not configured already (same adapter and folder), reading no file a
    configured source (or an earlier offer) reads, each under a name not taken."""
    taken = {s.name for s in configured}
    kept: list[Found] = []
    for found in _candidates(home, cwd):
        source = found.source
        if any(s.adapter == source.adapter and Path(s.root) == Path(source.root) for s in configured):
            continue
        if any(overlap(source, other) for other in (*configured, *(k.source for k in kept))):
            continue
        name, n = source.name, 2
        while name in taken:
            name, n = f"{source.name}-{n}", n + 1
        taken.add(name)
        kept.append(Found(Source(name, source.adapter, source.root), found.what))
    return kept
