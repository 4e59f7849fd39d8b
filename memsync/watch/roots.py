"""Each source's folder as the observer watches it.

An inotify watch follows a folder, not its name: a vault folder renamed while watched (Obsidian's
"rename vault", a `mv` by hand), removed or unmounted goes on reporting changes under the old
name, where nothing is. Applied as they come, those changes would drop the cards they name. So a
batch for a source whose folder is not the one watched waits (WorkerLoop), and once the folder is
back, or another is there, the observer starts afresh and the source is looked at whole.
"""

from __future__ import annotations

import logging
import os
import stat

from ..config import Config
from .pending import Batch

log = logging.getLogger(__name__)

Identity = tuple[int, int]  # (device, inode)


def identity(root: str) -> Identity | None:
    """The folder at `root` now, or None when there is none."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


class Roots:
    """The identity each source's folder had when the observer began to watch it."""

    def __init__(self) -> None:
        self.watched: dict[str, Identity | None] = {}

    def record(self, cfg: Config) -> None:
        self.watched = {source.name: identity(source.root) for source in cfg.sources}

    def away(self, cfg: Config) -> set[str]:
        """The sources whose folder is gone, or not the one watched: moved away, replaced, or
        there now though it was not when watching began."""
        return {source.name for source in cfg.sources
                if identity(source.root) != self.watched.get(source.name)}

    def replaced(self, cfg: Config) -> set[str]:
        """The sources with a folder at their place that is not the one watched: another folder
        there now, or one there at all though none was when watching began."""
        return {source.name for source in cfg.sources
                if (now := identity(source.root)) is not None and now != self.watched.get(source.name)}

    def at_place(self, cfg: Config, name: str) -> bool:
        """Whether source `name`'s folder is the one watched, and there."""
        return self.watched.get(name) is not None and name not in self.away(cfg)


class Held:
    """The sources whose batches were dropped while their folder was not the one watched."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.names)

    def hold(self, roots: Roots, cfg: Config, batch: Batch, rescan: dict[str, str],
             wanted: set[str]) -> None:
        """Drop from `batch` and `rescan` the work of each source whose folder is away: its
        events name paths where nothing is."""
        away = roots.away(cfg) & wanted
        for name in sorted(away - self.names):
            log.warning("the folder of %s (%s) has moved or gone; its changes wait until it is back",
                        name, cfg.source(name).root)
        self.names |= away
        for name in away:
            batch.paths.pop(name, None)
            batch.trees.pop(name, None)
            rescan.pop(name, None)
        batch.moves = [move for move in batch.moves if move[0] not in away]

    def back(self, roots: Roots, cfg: Config, wanted: set[str]) -> list[str]:
        """The held sources whose folder is the watched one again, to be looked at whole; a
        source no longer configured is let go."""
        returned = []
        for name in sorted(self.names):
            if name not in wanted:
                self.names.discard(name)
            elif roots.at_place(cfg, name):
                self.names.discard(name)
                returned.append(name)
        return returned
