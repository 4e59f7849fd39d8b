"""The index of a configuration, opened for one lifecycle call and closed after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memsync.config import Config
from memsync.errors import BadEnvironment
from memsync.search import codes
from memsync.store.index import Index


def require(cfg: Config) -> None:
    """Refuse, before anything is locked or written, a call that needs an index there is not."""
    if not cfg.db.path.exists():
        raise BadEnvironment(cfg.no_index())


@contextmanager
def index_of(cfg: Config) -> Iterator[Index]:
    require(cfg)
    index = Index(cfg.db.path)
    try:
        yield index
    finally:
        index.close()


def never_filled(cfg: Config, index: Index) -> dict | None:
    """The note for a result over an index no card ever reached (codes.INDEX_EMPTY, or
    VAULT_MISSING when indexing would only fail), else None: an audit or a plan of no card must
    not read as a clean memory when the vault's cards were never indexed."""
    if index.meta("last_change") is not None:
        return None
    if not cfg.vault.path.is_dir():
        return codes.Note(codes.VAULT_MISSING, {"path": str(cfg.vault.path)}).to_dict()
    from memsync.onboard import has_notes  # only here: search's read path has no need of it

    if index.meta("last_sync") is not None and not has_notes(cfg.vault.path):
        # indexed, and truly empty: "run memsync index" would only say the same again
        return codes.Note(codes.VAULT_EMPTY, {"path": str(cfg.vault.path),
                                              "set_up": not cfg.not_set_up()}).to_dict()
    return codes.Note(codes.INDEX_EMPTY).to_dict()
