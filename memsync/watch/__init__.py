"""The live watcher: the one package that talks to watchdog.

    watchdog events --plan.actions--> Pending (per-path coalescing) --worker thread--> Indexer

The watchdog handlers only record hints; a single worker thread owns the index connection, takes
whatever is due, and lets the indexer decide from the disk at that moment. Anything the event
stream cannot vouch for (an inotify overflow, a dead observer, a new or vanished folder) becomes a
reconcile of the affected subtree. One watcher per data home and per index file, enforced by
lock files.

    lock.py       the lock files: one watcher per data home, and one beside each index file
    elders.py     watchers of an older memsync, which take only their home's lock
    observing.py  the watchdog observer, its handlers and its health checks
    following.py  noticing and re-reading a changed config.json
    pairing.py    applying a batch so renamed cards keep their ids
    ghosts.py     cards dropped because their file vanished, whose ids may yet come back
    watcher.py    the Watcher: start, stop, waits, and what watchdog's threads call
    loop.py       its worker thread, which owns the state it works on
    idle.py       the idle-work seam (IdleWork): background jobs between batches
    reporting.py  log lines about batches and problems
    plan.py       what an event means for the index (pure)
    pending.py    what was seen but not acted on yet, coalesced per path (pure)

The package itself loads lazily: `memsync.watch.lock` and the pure modules load without watchdog;
asking for `Watcher` or `IdleWork` is what imports it.
"""

from __future__ import annotations

import importlib

_HOME = {"IdleWork": "idle", "Watcher": "watcher", "WatchLock": "lock", "WatcherLocked": "lock"}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
