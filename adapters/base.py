"""The adapter seam: how a source's files become cards. Pure: the protocol and the name rules.

An adapter never writes. It says which folders to enter and which relative paths it reads, and
turns one file's bytes into zero or more cards; `memsync.sync` does everything else. A file that
holds several cards gives each the path `file#anchor`, with an anchor that stays the same while
the entry does (so its id does too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # not loaded by a search (memsync.model)
    from memsync.model.indexing import Card

SKIPPED_FOLDERS = {"node_modules", "__pycache__"}


class Adapter(Protocol):
    name: str
    # The file name endings it may read: two nested sources whose adapters share one would
    # index the same files twice (memsync.sources refuses that).
    suffixes: tuple[str, ...]
    # wants() is exactly wants_name() of the file name and no hidden folder on the path: a walk
    # that entered only visible folders can then decide a file by its name (memsync.sync).
    by_name: bool
    # A size cap of its own, above the indexer's, for files a program writes whole and the user
    # cannot split (the memory server's graph); None: the indexer's. Such an adapter reads the
    # file line by line (read_lines), never holding its bytes whole.
    max_bytes: int | None
    # The version of its file rules (enters, wants_name, wants): bumped whenever a release
    # changes which files it reads, so the folder stamps listed under the old rules no longer
    # hold and the next reconcile lists every folder again (memsync.folders.rules_key).
    rules_version: int
    # Whether a symbolic link to a regular file is read as that file (memsync.linkedfiles):
    # instruction files often are links (CLAUDE.md -> AGENTS.md, or into a dotfiles folder).
    follows_links: bool

    def enters(self, rel_dir: str) -> bool: ...

    def wants_name(self, name: str) -> bool: ...

    def wants(self, rel_path: str) -> bool: ...

    def read(self, data: bytes, rel_path: str) -> list[Card]: ...

    def read_lines(self, raw_lines: Iterable[bytes], rel_path: str) -> list[Card]: ...


def reached(adapter: Adapter, rel_path: str) -> bool:
    """Whether a walk from the source's root gets to `rel_path`: the adapter enters every folder
    above it. wants() judges a path found by such a walk; a watcher, told of any path, asks
    both (so a node_modules/ moved in stays out, as a reconcile leaves it)."""
    folders = rel_path.split("/")[:-1]
    return all(adapter.enters("/".join(folders[: i + 1])) for i in range(len(folders)))


def hidden(rel_path: str) -> bool:
    """Dot-folders (.trash, .obsidian, .git, .stversions) and dot-files (editor/sync temps):
    a part of the path that starts with a dot (asked once per file of every reconcile)."""
    return rel_path.startswith(".") or "/." in rel_path


class FileAdapter:
    """Defaults shared by the adapters: skip dot-folders and dependency folders."""

    name = "base"
    suffixes: tuple[str, ...] = ()
    by_name = False
    max_bytes: int | None = None
    follows_links = False  # Adapter.follows_links; the vault's own adapter follows none
    # Adapter.rules_version; a change to the rules here (hidden, SKIPPED_FOLDERS) bumps every
    # adapter's.
    rules_version = 1

    def __init__(self, root: str | None = None) -> None:
        """`root`, the source's folder, matters to adapters whose rules depend on it."""

    def enters(self, rel_dir: str) -> bool:
        return not hidden(rel_dir) and rel_dir.rsplit("/", 1)[-1] not in SKIPPED_FOLDERS

    def wants_name(self, name: str) -> bool:
        """A `by_name` adapter's rule for a file name: one of its suffixes, not a dot-file."""
        return name.endswith(self.suffixes) and not name.startswith(".")

    def wants(self, rel_path: str) -> bool:
        if self.by_name:
            return self.wants_name(rel_path.rsplit("/", 1)[-1]) and not hidden(rel_path)
        raise NotImplementedError

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        raise NotImplementedError

    def read_lines(self, raw_lines: Iterable[bytes], rel_path: str) -> list[Card]:
        """The cards of a file given as its lines (each with its `\\n`): adapters with a
        `max_bytes` of their own."""
        raise NotImplementedError


def anchor(text: str) -> str:
    """A short, stable anchor for an entry inside a file: derived from its text."""
    import hashlib  # here: the read path loads this module, and hashlib costs it milliseconds

    return hashlib.blake2b(text.strip().encode("utf-8"), digest_size=5).hexdigest()


def first_line_title(text: str, limit: int = 80) -> str:
    line = re.sub(r"\s+", " ", text.strip().splitlines()[0] if text.strip() else "").strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
