"""Readers for memory formats. Each turns files into cards and never writes a byte."""

from __future__ import annotations

from .base import Adapter, hidden
from .markdown import MarkdownAdapter

ADAPTERS: dict[str, type] = {"markdown": MarkdownAdapter}


def get(name: str) -> Adapter:
    from memsync.errors import BadEnvironment

    try:
        return ADAPTERS[name]()
    except KeyError:
        known = ", ".join(sorted(ADAPTERS))
        raise BadEnvironment(f"unknown adapter {name!r}; known adapters: {known}") from None


__all__ = ["ADAPTERS", "Adapter", "MarkdownAdapter", "get", "hidden"]
