"""Following config.json while watching: notice that it changed, re-read it, say what changed.

An event on the data home says so at once (`touched`); a rare signature check catches a change
no event reported (`look`). Either way config.json is re-read only once it has been left alone
for CONFIG_QUIET, since editors write it in steps. Not thread-safe: the watcher's condition
guards it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from .. import config
from ..config import Config
from ..errors import MemsyncError
from ..sync import Indexer

log = logging.getLogger(__name__)

CONFIG_QUIET = 0.2  # re-read config.json once it has been left alone this long
# Idle wake-up to notice a dead observer, and to look at config.json's signature in case no
# event said it changed (the data home's watch normally does, at once). Each wake-up shows in
# idle CPU (measured: 5 s doubled it), so it is as rare as config.RELOAD_WITHIN allows.
HEALTH_CHECK = config.RELOAD_WITHIN


class ConfigFollower:
    def __init__(self, config_file, ignored_keys: tuple[tuple[str, str], ...] = ()):
        """`ignored_keys`: what of config.json memsync ignores, as said when the watcher started."""
        self.config_file = config_file
        self.ignored_keys = set(ignored_keys)  # as last read: an edit that adds one is said
        # The sources config.json names but the watcher leaves out, as last said: each is said
        # when it first appears or its reason changes, not at every reread (each edit, and each
        # start of an MCP server's watcher).
        self.left_out: set[str] = set()
        self.signature: tuple | None = None  # config.json's stat signature when last read
        self.checked = 0.0  # when that signature was last compared
        self.due: float | None = None  # when to re-read config.json (an event said so)

    def touched(self, now: float) -> None:
        self.due = now + CONFIG_QUIET

    def look(self, now: float) -> None:
        """Compare the signature now and then, in case no event said the file changed."""
        if now - self.checked >= HEALTH_CHECK:
            self.checked = now
            if self.changed():
                self.due = self.due or now

    def changed(self) -> bool:
        return config.file_signature(self.config_file) != self.signature

    def take_due(self, now: float) -> bool:
        """True (once) when it is time to re-read config.json."""
        if self.due is not None and self.due <= now:
            self.due = None
            return True
        return False

    def forget_reading(self) -> None:
        """Nothing was taken up from the last reading: read the file again at the next look."""
        self.signature = None

    def reread(self, cfg: Config) -> Config | None:
        """`cfg` with the sources and the semantic switch config.json names now; None if they
        are the same (or the file cannot be read: then the watcher goes on as it is, and says so)."""
        self.signature = config.file_signature(self.config_file)
        try:
            fresh = config.reload(cfg)
        except MemsyncError as exc:
            log.error("%s; still watching the sources it named before", exc.message)
            return None
        for what, fix in fresh.ignored_keys:  # a misspelt key, as every command warns of it
            if (what, fix) not in self.ignored_keys:
                log.warning("%s; %s", what, fix)
        self.ignored_keys = set(fresh.ignored_keys)
        if (fresh.vault.path, fresh.db.path) != (cfg.vault.path, cfg.db.path):
            log.warning("config.json names another vault or index now: restart the watcher to "
                        "use them; it goes on with %s", cfg.vault.path)
        # Sources that overlap are left out against the vault we go on with, not a new one.
        ours = replace(cfg, listed_sources=fresh.listed_sources, semantic=fresh.semantic)
        left_out = [ours.ignored_problem(ignored) for ignored in ours.ignored_sources]
        for problem in left_out:
            if problem not in self.left_out:
                log.warning("%s", problem)
        self.left_out = set(left_out)
        if (ours.extra_sources, ours.semantic) == (cfg.extra_sources, cfg.semantic):
            return None
        return ours


def changes(before: Config, after: Config) -> tuple[list[str], list[str]]:
    """(gone, new): sources no longer read as before (removed, or another folder or adapter),
    and sources read afresh."""
    old = {s.name: s for s in before.sources}
    now = {s.name: s for s in after.sources}
    gone = [name for name, source in old.items() if now.get(name) != source]
    new = [name for name, source in now.items() if old.get(name) != source]
    return gone, new


def switch_sources(indexer: Indexer, before: Config,
                   after: Config) -> tuple[Indexer, list[str], list[str]]:
    """An indexer for `after`'s sources, the cards of those `before` read and `after` does not
    (or reads from another folder or with another adapter) dropped; and (gone, new)."""
    gone, new = changes(before, after)
    indexer = Indexer(indexer.index, after.sources)
    for name in gone:
        indexer.drop_source(name)
    log.warning("config.json changed: watching %s (new: %s; dropped: %s)",
                ", ".join(s.name for s in after.sources), ", ".join(new) or "none",
                ", ".join(gone) or "none")
    return indexer, gone, new


def wants_by_source(cfg: Config) -> dict[str, Callable[[str], bool]]:
    """Each source's test of which relative paths it reads: its adapter wants the path, in
    folders the adapter enters (an event may name any path; a reconcile walks only those)."""
    import memsync.adapters as adapters

    def test(adapter: adapters.Adapter) -> Callable[[str], bool]:
        return lambda rel: adapter.wants(rel) and adapters.reached(adapter, rel)

    return {s.name: test(adapters.get(s.adapter, s.root)) for s in cfg.sources}


def enters_by_source(cfg: Config) -> dict[str, Callable[[str], bool]]:
    """Each source's adapter's test of which relative folders it enters: a folder that appears
    while watched is walked by the rule a reconcile walks it by."""
    import memsync.adapters as adapters

    return {s.name: adapters.get(s.adapter, s.root).enters for s in cfg.sources}
