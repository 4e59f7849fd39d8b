"""The Indexer's moves of card ids that no file event makes: into the trash and back, along
renames the watcher paired after the cards had left the index, and out for good. The Indexer
is the one owner of card-id bindings (memsync.sync); these are the methods it owns them by."""

from __future__ import annotations

from collections.abc import Iterable

from memsync.store.index import Index


class IdBindings:
    index: Index

    def park(self, source: str, rel: str, trash_rel: str) -> None:
        """A card was moved into the trash (by a write command, under whatever name it got
        there): its id and stats go with it, so a restore brings them back."""
        with self.index.transaction():
            self.index.remove_file(source, rel)
            self.index.rebind_ids(source, rel, trash_rel)
            self.index.mark_changed()

    def unpark(self, source: str, parked: str, rel: str) -> bool:
        """A card goes back from the trash (`parked`) to `rel`: the id it had there moves first,
        so whoever indexes the file at `rel` finds it waiting. False if no id was parked."""
        with self.index.transaction():
            if self.index.bound_id(source, parked) is None:
                return False
            self.index.rebind_ids(source, parked, rel)
            return True

    def carry_ids(self, source: str, moves: Iterable[tuple[str, str]]) -> None:
        """Move the ids of cards already dropped from the index along renames (src, dst), so a
        card is indexed again under its old id where it ended up (memsync.watch.pairing). A card
        found anew at dst meanwhile took a new id: it is dropped, to come back under the old one."""
        with self.index.transaction():
            for src, dst in moves:
                if self.index.file_state(source, dst) is not None:
                    self.index.remove_file(source, dst)
                self.index.rebind_ids(source, src, dst)

    def follow(self, source: str, moves: Iterable[tuple[str, str]]) -> None:
        """Renames a write command made itself (a consolidate run's moves), told once they are
        done: a card still indexed at src is re-keyed to dst, keeping its id, and a card a
        watcher found anew at dst meanwhile gives way to it. Without this, the sync of both
        names after them drops the card at src (its file is gone) when a watcher already
        indexed dst: it saw the new name in one batch, the old one go in the next. A card no
        longer at src (a watcher paired the rename already) is left as it is."""
        with self.index.transaction():
            for src, dst in moves:
                self.index.move_file(source, src, dst)

    def retire_ids(self, source: str, paths: Iterable[str]) -> None:
        """Purged for good: the ids bound to these paths (and their `#anchor` cards) are retired
        and their read stats dropped."""
        with self.index.transaction():
            for path in paths:
                self.index.clear_stats_for_path(source, path)
