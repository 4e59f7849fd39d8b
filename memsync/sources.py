"""The sources memsync reads beside the vault: list them, add one, remove one, and keep the index
to exactly the configured ones.

Two rules hold here. No two sources read the same file (every card would be indexed twice). And
the index never keeps cards of a source that is no longer configured: it must equal a rebuild
from the config as it is now, however the config changed (`sources --remove`, an editor, while a
watcher ran or not).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import memsync.adapters as adapters

from .api import open_index
from .config import RELOAD_WITHIN, SOURCE_NAME, SOURCE_NAME_RULE, Config, save_sources
from .errors import BadArgument, NotFound
from .index import Index
from .model import Source, SyncReport

# A running watcher re-reads config.json when it changes (see memsync.watch).
WATCHER = f"a running `memsync watch` (or `memsync mcp`) {{}} within {RELOAD_WITHIN:.0f} seconds"


def listing(cfg: Config) -> dict:
    with open_index(cfg) as index:
        counts = dict(index.conn.execute("SELECT source, count(*) FROM cards GROUP BY 1").fetchall())
    return {
        "sources": [
            {"name": s.name, "adapter": s.adapter, "path": s.root, "writable": s.writable,
             "exists": Path(s.root).is_dir(), "cards": counts.get(s.name, 0)}
            for s in cfg.sources
        ]
    }


def add(cfg: Config, name: str, adapter: str, path: str) -> dict:
    if not SOURCE_NAME.fullmatch(name or "") or name == "vault":
        raise BadArgument(f"a source name is {SOURCE_NAME_RULE}, and not 'vault'")
    if adapter not in adapters.NAMES:
        raise BadArgument(f"unknown adapter {adapter!r}; known adapters: {', '.join(adapters.NAMES)}")
    root = Path(path).expanduser().absolute()
    if not root.is_dir():
        raise BadArgument(f"{root} is not a folder; a source is a folder read in place")
    if any(s.name == name for s in cfg.extra_sources):
        raise BadArgument(f"a source named {name!r} exists; remove it first or pick another name")
    new = Source(name=name, adapter=adapter, root=str(root))
    for other in cfg.sources:
        clash = overlap(new, other)
        if clash:
            raise BadArgument(clash)
    save_sources(cfg, [*cfg.extra_sources, new])
    return {"status": "added", "name": name, "adapter": adapter, "path": str(root),
            "note": WATCHER.format("starts reading it") + "; otherwise run `memsync index`"}


def remove(cfg: Config, name: str) -> dict:
    if name == "vault":
        raise BadArgument(
            "the vault is the primary (writable) source and cannot be removed; to use another "
            "folder as the vault, pass --vault or set MEMSYNC_VAULT (or \"vault\" in config.json)"
        )
    kept = [s for s in cfg.extra_sources if s.name != name]
    if len(kept) == len(cfg.extra_sources):
        raise NotFound(f"no source named {name!r}; see `memsync sources`")
    save_sources(cfg, kept)
    with open_index(cfg) as index:
        report = drop_unconfigured(replace(cfg, extra_sources=tuple(kept)), index)
    return {"status": "removed", "name": name, "removed": report.removed,
            "note": "its cards are gone from the index; " + WATCHER.format("stops watching it")}


def drop_unconfigured(cfg: Config, index: Index) -> SyncReport:
    """Forget every card, file and problem of sources `cfg` does not name."""
    from .sync import Indexer  # the write path: parsing pulls in YAML

    report = SyncReport()
    work = Indexer(index, ())  # dropping reads no file, so it needs no source's adapter
    for name in sorted(index.sources() - {s.name for s in cfg.sources}):
        report.merge(work.drop_source(name))
    return report


def overlap(new: Source, other: Source) -> str | None:
    """Why `new` and `other` would read some file both, or None.

    That is the case when one root lies at or below the other, the outer source's adapter walks
    down to the inner root (markdown never enters `.claude`, say), and both adapters read files
    with the same ending (the `agents` and `cursor` adapters can share a project folder).
    """
    new_root, other_root = os.path.realpath(new.root), os.path.realpath(other.root)
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


def _reaches(outer: Source, outer_root: str, inner_root: str) -> bool:
    """Whether `inner_root` lies below `outer_root` in a folder the outer adapter enters."""
    rel = os.path.relpath(inner_root, outer_root)
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return False
    adapter = adapters.get(outer.adapter)
    parts = rel.split(os.sep)
    return all(adapter.enters("/".join(parts[: i + 1])) for i in range(len(parts)))
