"""How far the vectors are: for `memsync stats` and memory_stats. Reads SQL only (no numpy)."""

from __future__ import annotations

from . import available, store
from .encoder import MODEL


def status(conn, enabled: bool) -> dict:
    """Cards with a vector for their current content, how many wait, and when they should be
    done at the rate the last embedding run measured on this machine."""
    out = {"enabled": enabled, "installed": available(), "model": MODEL,
           **store.counts(conn, MODEL)}
    row = conn.execute("SELECT value FROM meta WHERE key = 'semantic_rate'").fetchone()
    rate = float(row[0]) if row else None
    out["cards_per_second"] = rate
    out["eta_seconds"] = round(out["pending"] / rate) if rate and out["pending"] else (
        0 if not out["pending"] else None)
    return out


def shown(conn, enabled: bool) -> bool:
    """Stats mention semantic search only where it is installed, asked for, or has vectors."""
    return enabled or available() or conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None
