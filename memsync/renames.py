"""The Indexer's renames: a card keeps its id and stats along a rename, a chain of them, a folder's
files moved, and a swap of two files (renameat2's RENAME_EXCHANGE).

Renames is part of memsync.sync.Indexer, which holds the state used here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from . import reading
from .model.indexing import SyncReport
from .pathnames import storable

if TYPE_CHECKING:
    from memsync.adapters import Adapter
    from memsync.store.index import Index

    from .model import Source


class Renames:
    """Renames applied to the index, for an Indexer (memsync.sync)."""

    # the Indexer's own, set in Indexer.__init__
    index: Index
    sources: dict[str, Source]
    adapters: dict[str, Adapter]

    if TYPE_CHECKING:  # the Indexer's own methods
        def sync_paths(self, source: str, paths: Iterable[str]) -> SyncReport: ...
        def _full(self, source: str, rel: str) -> str: ...

    def move(self, source: str, src: str, dst: str) -> SyncReport:
        """A rename seen as one event: keep the card's id and stats, then check both ends."""
        return self.move_many(source, [(src, dst)], [src, dst])

    def move_many(
        self, source: str, pairs: Sequence[tuple[str, str]], paths: Iterable[str],
        swapped: Callable[[str, str], bool] | None = None,
    ) -> SyncReport:
        """Renames seen in the order they happened (a swap, a chain a->b->c, a folder's files).

        Each indexed file is re-keyed in turn, all in one transaction, before anything is checked
        against the disk: checking `b` right after a->b would drop the card when b->c followed.
        Then `paths` (normally every end of every pair, and whatever else changed) are synced in
        one batch. `swapped(a, b)` says whether a->b directly followed by b->a was one swap
        (default: exchanged(), asked as each comes); a caller that carries its own knowledge of
        the files along the same renames decides it once, for both.
        """
        swapped = swapped or functools.partial(self.exchanged, source)
        adapter = self.adapters[source]
        moved = 0
        wanted = [
            (src, dst) for src, dst in pairs
            if storable(src) and storable(dst) and adapter.wants(src) and adapter.wants(dst)
        ]
        if wanted:
            with self.index.transaction():
                i = 0
                while i < len(wanted):
                    src, dst = wanted[i]
                    if wanted[i + 1:i + 2] == [(dst, src)] and swapped(src, dst):
                        moved += self.index.exchange_files(source, src, dst)
                        i += 2
                        continue
                    moved += self.index.move_file(source, src, dst)
                    i += 1
        report = self.sync_paths(source, paths)
        report.moved += moved
        return report

    def exchanged(self, source: str, a: str, b: str, where: Mapping[str, str] | None = None) -> bool:
        """Whether renames a->b then b->a, not applied yet, were one swap (RENAME_EXCHANGE,
        reported as those two renames): both files are still there. Had a->b replaced b, b would
        be gone after b->a, and the card at b taken back to a would be a's, as applying them in
        turn says. Where one of the two has moved on since the swap (a rename out of the vault,
        into a folder too new to be watched), the one left tells: it is the file the index knew
        at the other path, by its inode (after the two renames in turn, a would be a's own).
        `where`: the paths the files at a and b went to by later renames, where they did."""
        now_at = {p: (where or {}).get(p, p) for p in (a, b)}
        if all(os.path.lexists(self._full(source, now_at[p])) for p in (a, b)):
            return True
        for at, other in ((a, b), (b, a)):
            here = reading.current_signature(self.sources[source].root, now_at[at])
            state = self.index.file_state(source, other) if storable(other) else None
            if here is not None and state is not None and state[0].ino == here.ino:
                return True
        return False
