"""The index of a configuration, opened for one lifecycle call and closed after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memsync.config import Config
from memsync.errors import BadEnvironment
from memsync.store.index import Index


def require(cfg: Config) -> None:
    """Refuse, before anything is locked or written, a call that needs an index there is not."""
    if not cfg.db.path.exists():
        raise BadEnvironment(f"no index at {cfg.db.path} yet: run `memsync index` (or start "
                             "`memsync watch`)")


@contextmanager
def index_of(cfg: Config) -> Iterator[Index]:
    require(cfg)
    index = Index(cfg.db.path)
    try:
        yield index
    finally:
        index.close()
