"""Relative path names as the index stores them. Pure: strings in, strings out."""

from __future__ import annotations


def storable(rel_path: str) -> bool:
    """Names that are not valid UTF-8 reach us with surrogate escapes; SQLite refuses them."""
    try:
        rel_path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(rel_path: str) -> str:
    return rel_path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
