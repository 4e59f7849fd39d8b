"""Applying a batch so renamed cards keep their ids, even when watchdog could not pair a rename.

watchdog cannot always pair the two halves of a rename (the target folder was too new to be
watched yet, or the source folder was): the card then seems to vanish in one place and appear in
another, in either order. New files are remembered by content hash for a short while, and a card
whose file vanished is dropped only on a second look, one quiet window later; whichever comes
second is turned into a rename, so the card keeps its id and read stats. A rename whose target
is already gone again is held back briefly for the rename that moved it on.

Runs on the watcher's worker thread only.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable

from memsync.watch import plan

from .. import reading
from ..model.indexing import SyncReport
from ..pathnames import printable, storable
from .ghosts import Ghosts

PAIR_WINDOW = 2.0  # how long a new file's content is remembered to pair it with a late deletion
# How long a card whose file vanished is kept, in case its content shows up elsewhere or the
# rename that explains it is on its way; one quiet window, as a longer wait makes the second look
# coincide with a quick `delete --restore` (which puts the file back before its id). A rename
# reported later than this still carries the card's id on, as a ghost (memsync.watch.ghosts).
VANISH_GRACE = 0.05
# How long a rename whose source path is taken again waits for the rename back that would make
# it one half of a swap; the two are reported one event after the other.
SWAP_WAIT = 0.05

Key = tuple[str, str]  # (source, path) or (source, content hash)


class Pairing:
    def __init__(self, root_of: Callable[[str], str]):
        self.root_of = root_of  # source name -> its folder on disk
        self.arrived: dict[Key, tuple[str, float]] = {}  # (source, hash) -> path, when
        self.held: dict[Key, float] = {}  # deletions waiting for a second look
        self.hashes: dict[Key, tuple[str, float]] = {}  # renamed: (hash, when)
        self.ghosts = Ghosts()  # cards dropped because their file vanished

    def forget(self, sources) -> None:
        self.ghosts.forget(sources)
        for memory in (self.arrived, self.held, self.hashes):
            for key in [k for k in memory if k[0] in sources]:
                del memory[key]

    def full(self, source: str, rel: str) -> str:
        return os.path.join(self.root_of(source), *rel.split("/"))

    def apply(self, indexer, source: str, rules: tuple[Callable[[str], bool], Callable[[str], bool]],
              moves: list, paths: list[str], trees: list[str], final: bool,
              renaming: Callable[[str, str], bool]):
        """One source's share of a batch, as one indexer batch: renames re-keyed in order, then
        every path touched, every file found in a folder that appeared, and every indexed file
        of a folder that changed or vanished. `rules`: the adapter's wants and enters.
        `renaming(source, path)` says whether a rename not applied yet moves `path` away. Returns
        the report and {path: when to look again} for the vanished cards held back (unless
        `final`: then nothing waits)."""
        wants, enters = rules
        index = indexer.index
        report = SyncReport()
        ghosts = self.ghosts.paths(source)
        pairs, moved_trees = plan.expand_moves(
            moves, lambda: set(index.file_states(source)) | ghosts,
            lambda a, b: all(os.path.lexists(self.full(source, p)) for p in (a, b)),
        )
        if pairs:
            # Which renames are swaps is decided once, before any is applied: what is known of
            # the files (their hashes, the new files remembered) trades places as the cards do.
            swapped = plan.swaps(pairs, functools.partial(indexer.exchanged, source))
            self._carry_hashes(index, source, pairs, swapped)
            self.ghosts.carry_along(indexer, source, pairs, ghosts)
            report.merge(indexer.move_many(source, pairs, paths=(), swapped=lambda a, b: (a, b) in swapped))
            self._follow_arrivals(source, pairs, swapped)
        candidates = dict.fromkeys([*(p for pair in pairs for p in pair), *paths])
        denied: set[str] = set()  # folders that could not be read: their problem stays
        for tree in plan.outermost([*moved_trees, *trees]):
            candidates.update(dict.fromkeys(index.file_states(source, tree or None)))
            candidates.update(dict.fromkeys(walk(self.root_of(source), tree, rules, denied)))
            # A file that could not be indexed (a bad name, too large) has a problem, not a row:
            # one no longer here is looked at by the name it is shown under, so its problem goes.
            shown = {printable(p) for p in candidates} | {printable(f) or "./" for f in denied}
            candidates.update(dict.fromkeys(
                p for p in sorted(indexer.problem_paths(source, tree or None)) if p not in shown))
        states = {p: index.file_state(source, p) for p in candidates if storable(p)}
        # Not a regular file there (gone, or a folder or symlink in its place): a look would find
        # the card absent, so it waits out its grace first.
        vanished = {
            p: state[1] or self.hashes.get((source, p), ("", 0))[0]
            for p, state in states.items()
            if state is not None
            and reading.current_signature(self.root_of(source), p, indexer.adapters[source]) is None
        }
        renames = self._pair_with_arrivals(source, vanished)
        to_sync, held = self._hold_deletions(
            source, list(candidates), vanished, {a for a, _ in renames}, final, renaming,
        )
        to_sync += [b for _a, b in renames if b not in to_sync]
        if renames or to_sync:
            # A file there a moment ago may be gone when it is read (a save by delete and
            # create): the indexer spares its card, which waits out the same grace.
            spare = set() if final else {p for p in to_sync if states.get(p) and p not in vanished}
            part = indexer.move_many(source, renames, paths=to_sync, spare=spare)
            for path in part.vanished:
                self.held[(source, path)] = time.monotonic()
                held[path] = self.held[(source, path)] + VANISH_GRACE
            part.vanished = []
            report.merge(part)
        indexer.note_denied_folders(source, denied, report)
        new: dict[str, str] = {}  # indexed as new files: path -> content hash
        for path in to_sync:
            if path not in states:
                continue
            state = index.file_state(source, path)
            if states[path] is None and state is not None:
                new[path] = state[1]
            if state is None and states[path] is not None:  # dropped: its id may yet come back
                self.ghosts.drop(source, path, vanished.get(path) or states[path][1])
            elif state is not None:
                self.ghosts.back(source, path)
        adopted = self.ghosts.adopt(indexer, source, new, report)
        now = time.monotonic()
        for path, content in new.items():
            if path not in adopted:
                self.arrived[(source, content)] = (path, now)
        return report, held

    def _carry_hashes(self, index, source: str, pairs: list[tuple[str, str]],
                      swapped: set[tuple[str, str]]) -> None:
        """Remember each renamed file's content hash at its new path: the index forgets it on a
        rename (the card is re-read), and a file that is gone again cannot be re-read. A path
        that the renames leave without a known file has no hash remembered."""
        now = time.monotonic()
        known: dict[str, str] = {}
        for path in dict.fromkeys(p for pair in pairs for p in pair):
            state = index.file_state(source, path) if storable(path) else None
            content = (state[1] if state else "") or self.hashes.get((source, path), ("", 0))[0]
            if content:
                known[path] = content
        moved = plan.carried(known, pairs, swapped)
        for path in dict.fromkeys(p for pair in pairs for p in pair):
            if path in moved:
                self.hashes[(source, path)] = (moved[path], now)
            else:
                self.hashes.pop((source, path), None)

    def _follow_arrivals(self, source: str, pairs: list[tuple[str, str]],
                         swapped: set[tuple[str, str]]) -> None:
        """A remembered new file that was renamed on is remembered at its new path; one that a
        rename replaced is forgotten (its path holds another file now)."""
        ends = {p for pair in pairs for p in pair}
        keys = {path: key for key, (path, _when) in self.arrived.items() if key[0] == source and path in ends}
        when = {key: self.arrived.pop(key)[1] for key in keys.values()}
        for path, key in plan.carried(keys, pairs, swapped).items():
            self.arrived[key] = (path, when[key])

    def _hold_deletions(self, source, candidates, vanished, renamed, final, renaming):
        """(to sync now, held): a card whose file vanished is kept until it has been missing for
        VANISH_GRACE and no rename still to be applied explains it (unless this is the final
        pass), in case its content shows up elsewhere or the rename that moved it arrives."""
        now = time.monotonic()
        to_sync, held = [], {}
        for path in candidates:
            key = (source, path)
            if path in renamed:
                self.held.pop(key, None)
                to_sync.append(path)
                continue
            if path in vanished and not final:
                first = self.held.setdefault(key, now)
                if now - first < VANISH_GRACE:
                    held[path] = first + VANISH_GRACE
                    continue
                if renaming(source, path):
                    held[path] = now
                    continue
            self.held.pop(key, None)
            to_sync.append(path)
        for key, when in list(self.held.items()):
            if now - when > PAIR_WINDOW + VANISH_GRACE:  # it came back, or a reconcile saw to it
                del self.held[key]
        return to_sync, held

    def _pair_with_arrivals(self, source: str, candidates: dict) -> list[tuple[str, str]]:
        """(gone, arrived) for each vanished path (-> its content hash) whose content arrived
        elsewhere moments ago."""
        now = time.monotonic()
        for key, (_path, when) in list(self.arrived.items()):
            if now - when > PAIR_WINDOW:
                del self.arrived[key]
        for key, (_hash, when) in list(self.hashes.items()):
            if now - when > 2 * PAIR_WINDOW:
                del self.hashes[key]
        pairs = []
        for path, content in candidates.items():
            if not content:
                continue
            arrived = self.arrived.pop((source, content), None)
            if arrived and arrived[0] != path and os.path.lexists(self.full(source, arrived[0])):
                pairs.append((path, arrived[0]))
        return pairs

    def hold_vanished(self, batch: plan.Batch, index=None) -> tuple[list, list]:
        """(renames to apply now, renames to hold back). A rename whose target is already gone
        again, with no later rename in hand that moved it on, was followed by a rename or a
        delete still on its way: hold it (and every later rename, to keep their order) briefly,
        so a chain a->b->c is applied whole and the card keeps its id. So is the first half of
        what may be a swap (_waits, which asks `index` whether a rename is over a card). The ends
        of held file renames are taken out of the batch's paths."""
        now = time.monotonic()
        moves = batch.moves
        for i in range(len(moves)):
            if not self._waits(moves, i, now, index):
                continue
            # the second half of what may be a swap waits with its first half
            swap_half = i and moves[i - 1][:4] == (moves[i][0], moves[i][2], moves[i][1], moves[i][3])
            held = moves[i - 1:] if swap_half else moves[i:]
            for source_, src_, dst_, tree_, _seen in held:
                if not tree_ and source_ in batch.paths:
                    ends = {src_, dst_}
                    batch.paths[source_] = [p for p in batch.paths[source_] if p not in ends]
            return moves[:len(moves) - len(held)], held
        return moves, []


    def _waits(self, moves: list, i: int, now: float, index) -> bool:
        """Whether rename `i` of a batch waits for one still on its way (hold_vanished)."""
        source, src, dst, tree, seen = moves[i]
        later = moves[i + 1:]
        if not os.path.lexists(self.full(source, dst)):
            # gone again: moved on or deleted, unless the chain goes on within this batch
            return now - seen < plan.HOLD and not any(
                m[0] == source and plan.covered(dst, [m[1]]) for m in later)
        if now - seen < SWAP_WAIT and (os.path.lexists(self.full(source, src))
                                       or (not tree and index is not None and storable(dst)
                                           and index.file_state(source, dst) is not None)):
            # Something is at src again, or a card was at dst: the first half of a swap
            # (renameat2's RENAME_EXCHANGE, reported as a->b, then b->a), unless b->a is here
            # too. Applied alone, it would be taken for a rename over b's card (Indexer.move_many
            # and plan.expand_moves pair the two halves, of two files or two folders). The file
            # swapped to a may have moved on at once: a rename over a card (rare otherwise)
            # waits all the same.
            return not any(m[:3] == (source, dst, src) for m in moves if m is not moves[i])
        return False


def walk(root: str, folder: str, rules: tuple[Callable[[str], bool], Callable[[str], bool]],
         denied: set[str]) -> list[str]:
    """Card paths on disk below `folder` (relative to `root`), entering the folders the adapter
    enters (`rules`: its wants and enters), as a reconcile's walk does: dot-folders but those it
    reads (a project's .cursor/rules, .claude), no node_modules. The folders that could not be
    listed go into `denied` (relative, with their "/")."""
    wants, enters = rules
    start = os.path.join(root, *folder.split("/")) if folder else root
    found = []

    def refused(error: OSError) -> None:
        if isinstance(error, PermissionError) and error.filename:
            rel = os.path.relpath(error.filename, root).replace(os.sep, "/")
            denied.add("" if rel == "." else rel + "/")

    for dirpath, dirnames, filenames in os.walk(start, onerror=refused):
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        dirnames[:] = [d for d in dirnames if enters(prefix + d)]
        try:  # listed, but are its entries reachable (x)? one lstat tells for all of them
            os.lstat(os.path.join(dirpath, (filenames or dirnames or ["."])[0]))
        except PermissionError:
            denied.add(prefix)
            dirnames[:] = []
            continue
        except OSError:
            pass
        found += [prefix + name for name in filenames if wants(prefix + name)]
    return found
