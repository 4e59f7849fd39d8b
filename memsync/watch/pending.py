"""What the watcher has seen but not acted on yet, coalesced per path. Pure: no disk, no clock.

`Pending` takes the actions `memsync.watch.plan` reads from events and hands them back in batches: a
path once it has been quiet for a short window (editors save in several steps), or soon after
its writer closed it, or at the latest after a cap, so a file written continuously still gets
indexed; renames in the order they happened; folders to look at again later.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

QUIET = 0.05  # vim's rename -> recreate gap was observed at 1-11 ms; temp+rename savers are faster
CAP = 0.5  # a file written without pause is still looked at twice a second
SETTLE = 0.01  # after a close: room for a delete or rename that follows at once


class Action(NamedTuple):
    op: str  # sync | move | tree | move_tree
    path: str  # relative to the source root, '/'-separated; "" = the whole source
    dest: str = ""
    settled: bool = False  # the writer closed the file: no need to wait out the quiet window


@dataclass
class Batch:
    """Work that is due, per source: renames in the order they happened, then paths, then
    subtrees to reconcile ("" = the whole source)."""

    moves: list[tuple[str, str, str, bool, float]] = field(default_factory=list)  # source, src,
    # dst, is a folder, when seen
    paths: dict[str, list[str]] = field(default_factory=dict)
    trees: dict[str, list[str]] = field(default_factory=dict)
    rechecks: int = 0  # how many of the trees are second looks (see RECHECK)

    def __bool__(self) -> bool:
        return bool(self.moves or self.paths or self.trees)

    def size(self) -> int:
        return len(self.moves) + sum(map(len, self.paths.values())) + sum(
            map(len, self.trees.values())
        )


class _Seen:
    __slots__ = ("first", "last", "settled")

    def __init__(self, now: float, settled: bool):
        self.first = now
        self.last = now
        self.settled = settled


class Pending:
    """Everything seen but not yet handed to the indexer. Not thread-safe: guard it with a lock.

    Entries are kept in two orders (first seen, last touched), and the closed ones in a heap of
    their deadlines, so that finding the next deadline and taking what is due cost no scan of the
    whole set, even during a burst of many thousand events (each event asks for the next one).
    """

    def __init__(self, quiet: float = QUIET, cap: float = CAP, settle: float = SETTLE):
        self.quiet, self.cap, self.settle = quiet, cap, settle
        self._seen: dict[tuple[str, str, str], _Seen] = {}  # (op, source, path), first-seen order
        self._by_last: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        # closed files: key -> last touch + settle, and a heap of those deadlines (an entry whose
        # deadline no longer matches, touched again or taken since, is dropped when it surfaces)
        self._settled: dict[tuple[str, str, str], float] = {}
        self._settled_heap: list[tuple[float, tuple[str, str, str]]] = []
        self._moves: list[tuple[str, str, str, bool, float, float]] = []  # ..., not before
        self._later: list[tuple[float, str, str, str]] = []  # heap of (when, op, source, path)

    def __len__(self) -> int:
        return len(self._seen) + len(self._moves) + len(self._later)

    def clear(self) -> None:
        """Forget everything seen (a stop that gave up on paths still being written)."""
        for kept in (self._seen, self._by_last, self._settled, self._settled_heap, self._moves,
                     self._later):
            kept.clear()

    def add(self, source: str, action: Action, now: float) -> None:
        if action.op in ("move", "move_tree"):
            move = (source, action.path, action.dest, action.op == "move_tree", now, now)
            self._moves.append(move)
            return
        op = "tree" if action.op == "tree" else "sync"
        self._touch((op, source, action.path), now, action.settled)

    def add_path(self, source: str, path: str, now: float) -> None:
        self._touch(("sync", source, path), now, False)

    def add_later(self, source: str, folder: str, when: float) -> None:
        """Reconcile `folder` again at `when`, whatever happens before."""
        heapq.heappush(self._later, (when, "tree", source, folder))

    def add_path_later(self, source: str, path: str, when: float) -> None:
        """Look at `path` again at `when`, whatever happens before."""
        heapq.heappush(self._later, (when, "sync", source, path))

    def renames_away(self, source: str, path: str) -> bool:
        """Whether a rename not taken yet moves `path` (or a folder holding it) away."""
        return any(move[0] == source and covered(path, [move[1]]) for move in self._moves)

    def hold(self, moves: Iterable[tuple[str, str, str, bool, float]], until: float) -> None:
        """Put renames back at the head of the line, not to be taken before `until`."""
        self._moves[:0] = [(*move, until) for move in moves]

    def _touch(self, key: tuple[str, str, str], now: float, settled: bool) -> None:
        seen = self._seen.get(key)
        if seen is None:
            self._seen[key] = _Seen(now, settled)
        else:
            seen.last = now
            seen.settled = settled
        self._by_last[key] = None
        self._by_last.move_to_end(key)
        if settled:
            self._settled[key] = now + self.settle
            heapq.heappush(self._settled_heap, (now + self.settle, key))
        else:
            self._settled.pop(key, None)

    def _first_settled(self) -> tuple[float, tuple[str, str, str]] | None:
        """The closed file whose settle deadline comes first, stale heap entries dropped."""
        heap = self._settled_heap
        while heap:
            when, key = heap[0]
            if self._settled.get(key) == when:
                return heap[0]
            heapq.heappop(heap)
        return None

    def _due_at(self, key: tuple[str, str, str]) -> float:
        seen = self._seen[key]
        wait = self.settle if seen.settled else self.quiet
        return min(seen.last + wait, seen.first + self.cap)

    def next_due(self) -> float | None:
        """When the earliest entry becomes due (a time on the caller's clock), None if empty."""
        times = []
        if self._later:
            times.append(self._later[0][0])
        if self._moves:
            times.append(self._moves[0][5])
        if self._by_last:
            times.append(self._due_at(next(iter(self._by_last))))
        if self._seen:
            times.append(self._due_at(next(iter(self._seen))))
        # The cap of a closed file is covered by the first-seen head above, its settle deadline
        # by the heap's head: a scan of every closed file here, once per event, made a burst
        # quadratic (20,000 files copied in at once: minutes of the observer thread's CPU).
        if (first := self._first_settled()) is not None:
            times.append(self._due_at(first[1]))
        return min(times) if times else None

    def take(self, now: float, everything: bool = False) -> Batch:
        """Remove and return what is due at `now` (all of it with `everything`)."""
        due: list[tuple[str, str, str]] = []
        if everything:
            due = list(self._seen)
        else:
            for key in self._by_last:
                if self._due_at(key) > now:
                    break  # the rest of this order is touched later, so due later
                due.append(key)
            for key in self._seen:
                if self._due_at(key) > now:
                    break  # the rest was first seen later: its cap comes later
                due.append(key)
            while (first := self._first_settled()) is not None and first[0] <= now:
                heapq.heappop(self._settled_heap)
                due.append(first[1])
        batch = Batch()
        ready = 0
        while ready < len(self._moves) and (everything or self._moves[ready][5] <= now):
            ready += 1
        moves, self._moves = self._moves[:ready], self._moves[ready:]
        batch.moves = [move[:5] for move in moves]
        while self._later and (everything or self._later[0][0] <= now):
            _when, op, source, path = heapq.heappop(self._later)
            due.append((op, source, path))
            batch.rechecks += op == "tree"
        # An end of a rename held back waits for it, and is looked at with it: looked at alone,
        # it would be taken for the card the index still has there (before the rename).
        waiting = {("sync", m[0], end) for m in self._moves if not m[3] for end in m[1:3]}
        for key in waiting.intersection(due):
            self._forget(key)
        due = [key for key in due if key not in waiting]
        if not (due or batch.moves):
            return batch
        for key in dict.fromkeys(due):
            self._forget(key)
        # A rename checks both its ends: they are taken with it.
        for source, src, dst, tree, _seen in batch.moves:
            if not tree:
                for end in (src, dst):
                    due.append(("sync", source, end))
                    self._forget(("sync", source, end))
        for op, source, path in dict.fromkeys(due):
            target = batch.trees if op == "tree" else batch.paths
            target.setdefault(source, []).append(path)
        for source, trees in batch.trees.items():
            batch.trees[source] = outermost(trees)
            if source in batch.paths:
                # Reconciling a folder already looks at every path below it, but not at a file
                # of the folder's own name: one a folder replaced (its row must go) stays.
                batch.paths[source] = [
                    p for p in batch.paths[source]
                    if p in batch.trees[source] or not covered(p, batch.trees[source])
                ]
        return batch

    def _forget(self, key: tuple[str, str, str]) -> None:
        if self._seen.pop(key, None) is not None:
            del self._by_last[key]
            self._settled.pop(key, None)


def covered(path: str, trees: Iterable[str]) -> bool:
    return any(tree == "" or path == tree or path.startswith(tree + "/") for tree in trees)


def outermost(trees: Iterable[str]) -> list[str]:
    """Drop folders that lie inside another folder of the list."""
    result: list[str] = []
    for tree in sorted(set(trees), key=len):
        if not covered(tree, result):
            result.append(tree)
    return result
