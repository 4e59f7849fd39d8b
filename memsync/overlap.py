"""The one rule between sources: no two of them read the same file, else every card in it would
be indexed twice (two cards, two ids). `memsync sources --add` refuses such a source; one written
into config.json by hand (or a vault moved over a source) is left out when the config loads."""

from __future__ import annotations

import os

import memsync.adapters as adapters

from .model import IgnoredSource, Source


def overlap(new: Source, other: Source) -> str | None:
    """Why `new` and `other` would read some file both, or None.

    That is the case when one root lies at or below the other, the outer source's adapter walks
    down to the inner root (markdown never enters `.claude`, say), and both adapters read files
    with the same ending (the `agents` and `cursor` adapters can share a project folder).
    Symlinks are resolved: a link to the vault is the vault.
    """
    new_root, other_root = os.path.realpath(new.root), os.path.realpath(other.root)
    if not (_below(new_root, other_root) or _below(other_root, new_root)):
        return None  # apart: decided without loading either adapter (and its YAML parser)
    shared = set(adapters.get(new.adapter).suffixes) & set(adapters.get(other.adapter).suffixes)
    if not shared:
        return None
    if new_root == other_root:
        where = "is the folder of"
    elif _reaches(other, other_root, new_root):
        where = "is inside"
    elif _reaches(new, new_root, other_root):
        where = "contains"
    else:
        return None
    what = "the vault" if other.writable else f"source {other.name!r}"
    return (
        f"{new.root} {where} {what} ({other.root}), and both read {', '.join(sorted(shared))} "
        "files: nested sources would index the same files twice, so pick a folder apart from it"
    )


def sort_out(vault: Source, listed: tuple[Source, ...]) -> tuple[tuple[Source, ...],
                                                                  tuple[IgnoredSource, ...]]:
    """Split the sources config.json lists into those memsync reads and those it leaves out.

    The vault always stays, and an earlier source wins over a later one. Leaving a source out
    (rather than refusing the whole config) keeps every command working, so the user can still
    run `memsync sources --remove` to fix it.
    """
    kept: list[Source] = []
    ignored: list[IgnoredSource] = []
    for source in listed:
        clash = next(filter(None, (overlap(source, other) for other in (vault, *kept))), None)
        if clash:
            ignored.append(IgnoredSource(source, clash))
        else:
            kept.append(source)
    return tuple(kept), tuple(ignored)


def _below(inner: str, outer: str) -> bool:
    """Whether `inner` is `outer` or lies somewhere beneath it."""
    rel = os.path.relpath(inner, outer)
    return rel != os.pardir and not rel.startswith(os.pardir + os.sep)


def _reaches(outer: Source, outer_root: str, inner_root: str) -> bool:
    """Whether `inner_root` lies below `outer_root` in a folder the outer adapter enters."""
    rel = os.path.relpath(inner_root, outer_root)
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return False
    adapter = adapters.get(outer.adapter, outer_root)
    parts = rel.split(os.sep)
    return all(adapter.enters("/".join(parts[: i + 1])) for i in range(len(parts)))
