"""Obsidian's "Excluded files" (Settings → Files and links), honoured by the indexer.

Obsidian keeps them in `.obsidian/app.json` as `userIgnoreFilters`: a list of strings, each a
path prefix (`Templates/`, `Archive`) or, between slashes, a regular expression tested against
the vault-relative path (`/\\.excalidraw\\.md$/`). Files they match are not indexed; a folder a
prefix covers is not even entered. The file is read again whenever it changes (the watcher
reconciles when it does, memsync.watch.observing).
"""

from __future__ import annotations

import json
import os
import re

APP_JSON = (".obsidian", "app.json")


class Exclusions:
    def __init__(self, root: str):
        self.path = os.path.join(root, *APP_JSON)
        self.seen: tuple | None = None
        self.unreadable: tuple | None = None  # the stamp of a version that did not parse
        self.prefixes: tuple[str, ...] = ()
        self.patterns: tuple[re.Pattern, ...] = ()
        self.refresh()

    def refresh(self) -> None:
        """Read app.json again if it changed: once per batch, not once per path."""
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if stamp == self.seen or (stamp and stamp == self.unreadable):
            return
        app = _read(self.path) if stamp else None
        if stamp and app is None and self.seen:
            # Half-written (Obsidian is saving it) or broken: keep the filters read last, so
            # excluded notes do not come back for a moment; read again once it changes.
            self.unreadable = stamp
            return
        self.seen = stamp
        self.prefixes, self.patterns = parse(app)

    @property
    def active(self) -> bool:
        """Whether any filter is set (most vaults have none)."""
        return bool(self.prefixes or self.patterns)

    def excludes(self, rel: str) -> bool:
        if not self.patterns:  # the usual case, once per file of a reconcile: no generator
            return rel.startswith(self.prefixes)
        return rel.startswith(self.prefixes) or any(p.search(rel) for p in self.patterns)

    def excludes_folder(self, rel_dir: str) -> bool:
        """A folder every path below which a prefix filter covers."""
        return (rel_dir + "/").startswith(self.prefixes)


def _read(path: str) -> object:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None  # unreadable or half-written


def parse(app: object) -> tuple[tuple[str, ...], tuple[re.Pattern, ...]]:
    """(prefixes, regexes) from app.json's content. A filter that is not a string, or a regex
    Python cannot read, is skipped: excluding too little is visible, losing notes is not."""
    filters = app.get("userIgnoreFilters") if isinstance(app, dict) else None
    prefixes, patterns = [], []
    for item in filters if isinstance(filters, list) else []:
        if not isinstance(item, str) or not item.strip():
            continue
        if len(item) > 2 and item.startswith("/") and item.endswith("/"):
            try:
                patterns.append(re.compile(item[1:-1]))
            except re.error:
                continue
        else:
            prefixes.append(item.lstrip("/"))
    return tuple(prefixes), tuple(patterns)
