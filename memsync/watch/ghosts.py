"""Cards the watcher dropped because their file vanished, remembered for a while with their
content hash: the file may turn up where watchdog reported no rename, and its card then comes
back under its id instead of a new one.

It turns up in one of two ways, and memsync.watch.pairing asks about both:
- a rename reported after the drop moves the path on (a folder renamed twice, the second rename
  reported after the first was applied): the id's binding follows the renames (carry_along);
- a new file of the same content appears (moved out of the vault and back, or into a folder too
  new to be watched: watchdog reports the deletion half a second late, after any rename it has
  to hold first, so the card may be dropped before the new file is seen): it takes the id
  (adopt).

Runs on the watcher's worker thread only.
"""

from __future__ import annotations

import time

from ..model.indexing import SyncReport

# How long the id of a dropped card waits to be carried on or taken up: a little more than
# watchdog's half second for a move out of the tree, after any wait of the pairing's.
GHOST_WINDOW = 4.0

Key = tuple[str, str]  # (source, path)


class Ghosts:
    def __init__(self) -> None:
        self.dropped: dict[Key, tuple[float, str]] = {}  # -> when dropped, its content hash

    def forget(self, sources) -> None:
        for key in [k for k in self.dropped if k[0] in sources]:
            del self.dropped[key]

    def paths(self, source: str) -> set[str]:
        """The paths of `source` whose cards were dropped within the window."""
        now = time.monotonic()
        for key, (when, _content) in list(self.dropped.items()):
            if now - when > GHOST_WINDOW:
                del self.dropped[key]
        return {path for (name, path) in self.dropped if name == source}

    def drop(self, source: str, path: str, content: str) -> None:
        self.dropped[(source, path)] = (time.monotonic(), content)

    def back(self, source: str, path: str) -> None:
        """A card is at `path` again: nothing waits there any more."""
        self.dropped.pop((source, path), None)

    def carry_along(self, indexer, source: str, pairs, ghosts: set[str]) -> None:
        """Renames of cards already dropped from the index carry their ids on.

        The worker sees the disk a moment after each event: a card whose folder was renamed
        twice can be gone from the first new path before the second rename is reported, and is
        dropped. Its id is still bound to that path; moving the binding along the renames that
        follow gives it back when the card is indexed where it ended up.
        """
        if not ghosts:
            return
        ghosts, carried = set(ghosts), []
        for src, dst in pairs:
            if src in ghosts and indexer.index.file_state(source, src) is None:
                ghosts.discard(src)
                ghosts.add(dst)
                carried.append((src, dst))
            else:
                ghosts.discard(dst)  # something else lands there
        if not carried:
            return
        indexer.carry_ids(source, carried)
        now = time.monotonic()
        for src, dst in carried:
            _when, content = self.dropped.pop((source, src), (now, ""))
            self.dropped[(source, dst)] = (now, content)

    def adopt(self, indexer, source: str, arrived: dict[str, str], report: SyncReport) -> set[str]:
        """Files just indexed as new (path -> content hash) whose content is that of a card
        dropped within the window take that card's id, which is still bound to its old path:
        it was moved. Returns the paths that did."""
        self.paths(source)  # forget what is too old
        latest: dict[str, str] = {}  # content -> the path of the last card dropped with it
        for (name, path), (_when, content) in sorted(self.dropped.items(), key=lambda kv: kv[1][0]):
            if name == source and content and indexer.index.file_state(source, path) is None:
                latest[content] = path
        moves = []
        for path, content in arrived.items():
            ghost = latest.pop(content, None)
            if ghost is not None and indexer.index.bound_id(source, ghost) is not None:
                moves.append((ghost, path))
        if not moves:
            return set()
        indexer.carry_ids(source, moves)  # drops the new cards, to index them again under the old ids
        report.added -= len(moves)  # counted as new a moment ago
        again = indexer.sync_paths(source, [path for _ghost, path in moves])
        again.moved, again.added = again.moved + again.added, 0  # back under their ids: moved
        report.merge(again)  # with its retries, should a file be changing meanwhile
        for ghost, _path in moves:
            self.back(source, ghost)
        return {path for _ghost, path in moves}
