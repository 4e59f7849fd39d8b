"""The Indexer's renames: a card keeps its id and stats along a rename, a chain of them, a folder's
files moved, and a swap of two files (renameat2's RENAME_EXCHANGE).

Renames is part of memsync.sync.Indexer, which holds the state used here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
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
        def sync_paths(self, source: str, paths: Iterable[str],
                       spare: Collection[str] = ()) -> SyncReport: ...
        def _full(self, source: str, rel: str) -> str: ...

    def move(self, source: str, src: str, dst: str) -> SyncReport:
        """A rename seen as one event: keep the card's id and stats, then check both ends."""
        return self.move_many(source, [(src, dst)], [src, dst])

    def move_many(
        self, source: str, pairs: Sequence[tuple[str, str]], paths: Iterable[str],
        swapped: Callable[[str, str], bool] | None = None, spare: Collection[str] = (),
    ) -> SyncReport:
        """Renames seen in the order they happened (a swap, a chain a->b->c, a folder's files).

        Each indexed file is re-keyed in turn, all in one transaction, before anything is checked
        against the disk: checking `b` right after a->b would drop the card when b->c followed.
        Then `paths` (normally every end of every pair, and whatever else changed) are synced in
        one batch. `swapped(a, b)` says whether a->b directly followed by b->a was one swap
        (default: exchanged(), asked as each comes); a caller that carries its own knowledge of
        the files along the same renames decides it once, for both. `spare`: as sync_paths.
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
        report = self.sync_paths(source, paths, spare)
        report.moved += moved
        return report

    def exchanged(self, source: str, a: str, b: str, where: Mapping[str, str] | None = None) -> bool:
        """Whether renames a->b then b->a, not applied yet, were one swap (RENAME_EXCHANGE,
        reported as those two renames) rather than a->b over b's file and back. `where`: the
        paths the files at a and b went to by later renames, where they did.

        Both files still there: a swap, since b's would be gone after the renames in turn. One
        of the two moved on since (a rename out of the vault, into a folder too new to be
        watched) or replaced by an editor's save: the one left tells by its inode, the file the
        index knew at the other path (a swap) or a's own file back at a (the renames in turn).
        Neither tells (nothing is left at either path, or only a file the index never knew
        there): a swap, the likelier of the two, since two renames reach one batch together
        when one step made them, or a program within milliseconds. With nothing left at either
        path, both readings leave a's card to be paired by its content where it turns up, and
        only a swap keeps b's card for the same; taken in turn, b's id was lost.
        """
        now_at = {p: (where or {}).get(p, p) for p in (a, b)}
        root = self.sources[source].root
        here = {p: reading.current_signature(root, now_at[p], self.adapters[source]) for p in (a, b)}
        if here[a] is not None and here[b] is not None:
            return True
        ino = {}
        for p in (a, b):
            state = self.index.file_state(source, p) if storable(p) else None
            ino[p] = state[0].ino if state else None
        for at, other in ((a, b), (b, a)):
            found = here[at]
            if found is not None and ino[other] is not None and found.ino == ino[other]:
                return True
        own = here[a]
        return not (own is not None and own.ino == ino[a])
