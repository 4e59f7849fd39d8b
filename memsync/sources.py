"""The sources memsync reads beside the vault: list them, add one, remove one, and keep the index
to exactly the configured ones.

Two rules hold here. No two sources read the same file (every card would be indexed twice; the
rule itself is memsync.overlap, which also leaves out such a source written into config.json by
hand). And
the index never keeps cards of a source that is no longer configured: it must equal a rebuild
from the config as it is now, however the config changed (`sources --remove`, an editor, while a
watcher ran or not).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import memsync.adapters as adapters
from memsync.store import tally
from memsync.store.index import Index

from .config import RELOAD_WITHIN, Config, on_disk
from .configjson import (
    SOURCE_NAME,
    SOURCE_NAME_RULE,
    absolute_path,
    append_source_entry,
    remove_source_entry,
)
from .errors import BadArgument, NotFound
from .model import Source
from .model.indexing import SyncReport
from .overlap import overlap

# A running watcher re-reads config.json when it changes (see memsync.watch).
WATCHER = f"a running `memsync watch` (or `memsync mcp`) {{}} within {RELOAD_WITHIN:.0f} seconds"


def listing(cfg: Config) -> dict:
    with closing(Index(cfg.db.path)) as index:
        counts = tally.by_source(index)
    def entry(s: Source, ignored: str | None) -> dict:
        return {"name": s.name, "adapter": s.adapter, "path": s.root, "writable": s.writable,
                "exists": Path(s.root).is_dir(), "on_disk": on_disk(Path(s.root)), "cards": counts.get(s.name, 0),
                "ignored": ignored}

    why = {left.source.name: cfg.ignored_problem(left) for left in cfg.ignored_sources}
    return {"sources": [entry(s, why.get(s.name)) for s in (cfg.vault_source, *cfg.listed_sources)]}


def add(cfg: Config, name: str, adapter: str, path: str,
        waiting: Callable[[int | None], None] | None = None) -> dict:
    if not SOURCE_NAME.fullmatch(name or "") or name == "vault":
        raise BadArgument(f"a source name is {SOURCE_NAME_RULE}, and not 'vault'")
    if adapter not in adapters.NAMES:
        raise BadArgument(f"unknown adapter {adapter!r}; known adapters: {', '.join(adapters.NAMES)}")
    root = absolute_path(Path(path))
    if not root.is_dir():
        raise BadArgument(f"{root} is not a folder; a source is a folder read in place")
    if any(s.name == name for s in cfg.listed_sources):
        raise BadArgument(f"a source named {name!r} exists; remove it first or pick another name")
    new = Source(name=name, adapter=adapter, root=str(root))
    for other in cfg.sources:
        clash = overlap(new, other)
        if clash:
            raise BadArgument(clash)
    append_source_entry(cfg.config_file, new)
    report = index_now(cfg, new, waiting)
    result = {"status": "added", "name": name, "adapter": adapter, "path": str(root),
              "indexed_files": report.scanned,
              "note": f"indexed its {report.scanned} file(s) now; "
                      + WATCHER.format("follows its changes")}
    if report.problems:
        result["problems"] = report.problems
    return result


def index_now(cfg: Config, source: Source,
              waiting: Callable[[int | None], None] | None = None) -> SyncReport:
    """Read a source just added, so its cards are searchable at once, not at the next index.
    In the index's reindex turn (memsync.reindexlock; `waiting` as for api.reindex): a watcher
    follows the new entry within seconds and reconciles the source too."""
    from .reindexlock import turn
    from .sync import Indexer  # the write path: parsing pulls in YAML

    with turn(cfg.db.path, waiting), closing(Index(cfg.db.path)) as index:
        return Indexer(index, [source]).reconcile(source.name)


def remove(cfg: Config, name: str) -> dict:
    if name == "vault":
        raise BadArgument(
            "the vault is the primary (writable) source and cannot be removed; to use another "
            "folder as the vault, pass --vault or set MEMSYNC_VAULT (or \"vault\" in config.json)"
        )
    if not any(s.name == name for s in cfg.listed_sources):
        raise NotFound(f"no source named {name!r}; see `memsync sources`")
    kept = tuple(s for s in cfg.listed_sources if s.name != name)
    # Its cards go before its entry does: a watcher drops them too once it sees config.json
    # change, and getting there first would leave this count at 0.
    with closing(Index(cfg.db.path)) as index:
        report = drop_unconfigured(replace(cfg, listed_sources=kept), index)
    remove_source_entry(cfg.config_file, name)
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
