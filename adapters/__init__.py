"""Readers for memory formats. Each turns files into cards and never writes a byte."""

from __future__ import annotations

import importlib

from .base import Adapter, FileAdapter, hidden, reached

# Adapter name -> (module, class). The modules load on first use: they pull in the YAML parser,
# and loading the config (on the fast read path) checks adapter names without reading a file.
_WHERE = {
    "markdown": ("markdown", "MarkdownAdapter"),
    "agents": ("agents", "AgentFilesAdapter"),
    "mcp-memory": ("jsonl", "MemoryGraphAdapter"),
    "cursor": ("cursor", "CursorRulesAdapter"),
}
NAMES = tuple(sorted(_WHERE))


def get(name: str, root: str | None = None) -> Adapter:
    """The adapter `name`, for a source whose folder is `root` (where known: the agents adapter
    leaves out Claude Code's plugins when the source is ~/.claude itself)."""
    from memsync.errors import BadEnvironment

    if name not in _WHERE:
        raise BadEnvironment(f"unknown adapter {name!r}; known adapters: {', '.join(NAMES)}")
    module, cls = _WHERE[name]
    return getattr(importlib.import_module(f".{module}", __name__), cls)(root)


def __getattr__(attr: str):
    """`from memsync.adapters import MarkdownAdapter` still works, loading that module then."""
    for module, cls in _WHERE.values():
        if cls == attr:
            return getattr(importlib.import_module(f".{module}", __name__), cls)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


__all__ = ["NAMES", "Adapter", "FileAdapter", "get", "hidden", "reached"]
