"""The adapter seam: how a source's files become cards.

An adapter never writes. It says which relative paths it reads (`wants`) and turns one file's
bytes into zero or more cards (`read`); `memsync.sync` does everything else.
"""

from __future__ import annotations

from typing import Protocol

from memsync.model import Card


class Adapter(Protocol):
    name: str

    def wants(self, rel_path: str) -> bool: ...

    def read(self, data: bytes, rel_path: str) -> list[Card]: ...


def hidden(rel_path: str) -> bool:
    """Dot-folders (.trash, .obsidian, .git, .stversions) and dot-files (editor/sync temps)."""
    return any(part.startswith(".") for part in rel_path.split("/"))
