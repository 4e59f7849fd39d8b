"""The live watcher: the one package that talks to watchdog.

    watchdog events --plan.actions--> Pending (per-path coalescing) --worker thread--> Indexer

The watchdog handlers only record hints; a single worker thread owns the index connection, takes
whatever is due, and lets the indexer decide from the disk at that moment. Anything the event
stream cannot vouch for (an inotify overflow, a dead observer, a new or vanished folder) becomes a
reconcile of the affected subtree. One watcher per data home, enforced by a lock file.

    lock.py       the lock file: one watcher per data home
    observing.py  the watchdog observer, its handlers and its health checks
    following.py  noticing and re-reading a changed config.json
    pairing.py    applying a batch so renamed cards keep their ids
    watcher.py    the Watcher: start, stop, waits, and what watchdog's threads call
    loop.py       its worker thread, and the idle-work seam (IdleWork)
    reporting.py  log lines about batches and problems

Importing this package imports watchdog: the read path never does.
"""

from .lock import WatcherLocked, WatchLock
from .loop import IdleWork
from .watcher import Watcher

__all__ = ["IdleWork", "WatchLock", "Watcher", "WatcherLocked"]
