"""Relative path names as the index stores them. Pure: strings in, strings out."""

from __future__ import annotations

from pathlib import PurePosixPath


def file_part(card_path: str) -> str:
    """The file of a card's path: an entry of a memory file is `file#anchor` (its anchor a short
    hash, memsync.adapters.base.anchor), a note is its file alone. A `#` in a file or folder name
    (`C# tips.md`, `C# lang/Generics.md`) is not an anchor: what follows it holds a dot or a
    slash."""
    head, sep, tail = card_path.rpartition("#")
    return head if sep and tail and "." not in tail and "/" not in tail else card_path


def stem(rel_path: str) -> str:
    """The note's name as Obsidian shows it and as wikilinks resolve it: the file stem (of the
    card's file, without an entry's `#anchor`)."""
    return PurePosixPath(file_part(rel_path)).stem


def storable(rel_path: str) -> bool:
    """Names that are not valid UTF-8 reach us with surrogate escapes; SQLite refuses them."""
    try:
        rel_path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(rel_path: str) -> str:
    return rel_path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
