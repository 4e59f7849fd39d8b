"""The state the Watcher shares with its worker thread, declared in one place.

Watcher.__init__ (memsync.watch.watcher) sets every attribute below; WorkerLoop
(memsync.watch.loop), the worker-thread half of the same object, reads and updates them under
`_cond`. Nothing here runs: the declarations are for the reader and the type checker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from ..config import Config
    from ..model import SyncReport
    from ..store.index import Index
    from .following import ConfigFollower
    from .observing import Observation
    from .pairing import Pairing
    from .plan import Pending


class WatcherState:
    cfg: Config
    debounce: float
    rescan_every: float
    pending: Pending
    totals: SyncReport
    batches: int
    idle_work: list[Callable[[Index], bool]]
    _idle_due: list[Callable[[Index], bool]]
    _cond: threading.Condition
    _rescan: dict[str, str]  # source -> why
    _stopping: bool
    _busy: bool
    _wake_at: float | None
    _ready: bool
    _opened: threading.Event
    _error: BaseException | None
    _eyes: Observation
    _pairing: Pairing
    _wants: dict
    _config: ConfigFollower

    if TYPE_CHECKING:  # the Watcher's methods its worker calls
        def _adopt(self, cfg: Config) -> None: ...
        def request_rescan(self, source: str | None, why: str = ...) -> None: ...
