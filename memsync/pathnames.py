"""Relative path names as the index stores them. Pure: strings in, strings out."""

from __future__ import annotations

from pathlib import PurePosixPath


def stem(rel_path: str) -> str:
    """The note's name as Obsidian shows it and as wikilinks resolve it: the file stem (of the
    card's path without its `#section` part)."""
    return PurePosixPath(rel_path.split("#", 1)[0]).stem


def storable(rel_path: str) -> bool:
    """Names that are not valid UTF-8 reach us with surrogate escapes; SQLite refuses them."""
    try:
        rel_path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(rel_path: str) -> str:
    return rel_path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
