"""One operation's hold on the index: open it, and the indexer that writes it.

Below memsync.api: the write side, the watcher and doctor take these from here; api is for the
edges (CLI, MCP, doctor) alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memsync.config import Config
from memsync.store.connection import DB_ERRORS, as_error
from memsync.store.index import Index

if TYPE_CHECKING:
    from memsync.sync import Indexer


@contextmanager
def open_index(cfg: Config) -> Iterator[Index]:
    index = Index(cfg.db.path)
    try:
        yield index
    except DB_ERRORS as exc:  # damaged, busy past the timeout, read-only: said, never a traceback
        raise as_error(exc, cfg.db.path) from None
    finally:
        index.close()


def indexer(cfg: Config, index: Index) -> Indexer:
    from memsync.sync import Indexer  # the write path: parsing pulls in YAML

    cfg.ensure_vault()
    return Indexer(index, cfg.sources, workers=cfg.threads)


def reopened(cfg: Config, old: Indexer) -> Indexer:
    """An indexer like `old` over a new connection, to the index file now at its path
    (Index.replaced): the old connection is closed."""
    import logging

    logging.getLogger(__name__).warning(
        "the index file %s was replaced (or moved away); reopening it and reading every source again",
        cfg.db.path)
    old.index.close()
    return indexer(cfg, Index(cfg.db.path, lean=old.index.lean))
