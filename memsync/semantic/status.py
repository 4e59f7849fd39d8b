"""How far the vectors are: for `memsync stats` and memory_stats. Reads SQL only (no numpy)."""

from __future__ import annotations

from typing import Any

from memsync.store import vectors as store
from memsync.store.index import Index

from . import available
from .encoder import MODEL


def status(index: Index, enabled: bool) -> dict:
    """Cards with a vector for their current content, how many wait, and when they should be
    done at the rate the last embedding run measured on this machine."""
    out: dict[str, Any] = {"enabled": enabled, "installed": available(), "model": MODEL,
           **store.counts(index, MODEL)}
    rate = store.rate(index)
    out["cards_per_second"] = rate
    out["eta_seconds"] = round(out["pending"] / rate) if rate and out["pending"] else (
        0 if not out["pending"] else None)
    return out


def shown(index: Index, enabled: bool) -> bool:
    """Stats mention semantic search only where it is installed, asked for, or has vectors."""
    return enabled or available() or store.any_vectors(index)
