"""Values for shell completion of --kind, --source, --tag and --adapter (click shell_complete).

Completion runs on every Tab, so each lookup is cheap: the kinds and adapters are constants, the
sources and tags one query on the index as it is (never created, never migrated). Anything that
goes wrong (no index yet, a config.json that does not load, a busy database) gives no
completions rather than an error printed into the shell's prompt line.
"""

from __future__ import annotations

import click

from .. import config as config_mod
from ..errors import MemsyncError
from ..model import KIND_FOLDERS


def kinds(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    return [k for k in KIND_FOLDERS if k.startswith(incomplete)]


def adapters(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    import memsync.adapters as known

    return [a for a in known.NAMES if a.startswith(incomplete)]


def sources(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    names = _from_index(ctx, lambda index: sorted(index.sources()))
    return [n for n in names if n.startswith(incomplete)]


def tags(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    from memsync.store.fields import fold_tag

    return _from_index(ctx, lambda index: index.tag_names(fold_tag(incomplete)))


def _from_index(ctx: click.Context, read) -> list[str]:
    from memsync.store.connection import DB_ERRORS
    from memsync.store.index import Index

    root = ctx.find_root().params  # the global options typed so far (--home, --db, --vault)
    try:
        cfg = config_mod.load(root.get("home"), root.get("db"), root.get("vault"))
        if not cfg.db.path.is_file():
            return []
        index = Index.existing(cfg.db.path)
        try:
            return list(read(index))
        finally:
            index.close()
    except (MemsyncError, OSError, *DB_ERRORS):
        return []
