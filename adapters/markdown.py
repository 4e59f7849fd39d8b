"""Plain Markdown folders and Obsidian vaults: one `.md` file is one card."""

from __future__ import annotations

from memsync import notes
from memsync.model import Card

from .base import FileAdapter, hidden


class MarkdownAdapter(FileAdapter):
    name = "markdown"
    suffixes = (".md",)
    by_name = True

    def wants(self, rel_path: str) -> bool:
        # Temp and backup names used by editors and sync tools (`x.md~`, `4913`, `x.md.tmp`,
        # `x___jb_tmp___`) do not end in `.md`; Syncthing's and vim's swap files start with a dot.
        return rel_path.endswith(self.suffixes) and not hidden(rel_path)

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        return [notes.parse(data, rel_path)]
