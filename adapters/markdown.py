"""Plain Markdown folders and Obsidian vaults: one `.md` file is one card."""

from __future__ import annotations

from memsync import notes
from memsync.model.indexing import Card

from .base import FileAdapter


class MarkdownAdapter(FileAdapter):
    name = "markdown"
    suffixes = (".md",)
    # Wanted by name (FileAdapter.wants_name): temp and backup names used by editors and sync
    # tools (`x.md~`, `4913`, `x.md.tmp`, `x___jb_tmp___`) do not end in `.md`; Syncthing's and
    # vim's swap files start with a dot.
    by_name = True

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        return [notes.parse(data, rel_path)]
