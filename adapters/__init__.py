"""Readers for memory formats. Each turns files into cards and never writes a byte."""

from __future__ import annotations

from .agents import AgentFilesAdapter
from .base import Adapter, FileAdapter, hidden
from .cursor import CursorRulesAdapter
from .jsonl import MemoryGraphAdapter
from .markdown import MarkdownAdapter

ADAPTERS: dict[str, type] = {
    adapter.name: adapter
    for adapter in (MarkdownAdapter, AgentFilesAdapter, MemoryGraphAdapter, CursorRulesAdapter)
}


def get(name: str) -> Adapter:
    from memsync.errors import BadEnvironment

    try:
        return ADAPTERS[name]()
    except KeyError:
        known = ", ".join(sorted(ADAPTERS))
        raise BadEnvironment(f"unknown adapter {name!r}; known adapters: {known}") from None


__all__ = ["ADAPTERS", "Adapter", "FileAdapter", "get", "hidden"]
