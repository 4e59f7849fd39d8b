"""What a file-system event means for the index. Pure: no disk, no clock.

Events are only hints. `actions` reduces one watchdog-like event to "this path may have changed",
"this card was renamed" or "this folder may hide changes"; the disk, read later by the indexer, says
what actually happened. memsync.watch.pending coalesces those hints per path and says when to act
(its names are offered here too, where the watcher has always found them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol, TypeGuard, TypeVar

from memsync.adapters import hidden
from memsync.pathnames import storable
from memsync.watch.pending import CAP, QUIET, SETTLE, Action, Batch, Pending, covered, outermost

__all__ = [
    "CAP", "HOLD", "QUIET", "RECHECK", "SETTLE", "Action", "Batch", "Event", "Pending",
    "actions", "carried", "covered", "expand_moves", "keep_sources", "outermost", "relative",
    "storable_dir", "swaps",
]

T = TypeVar("T")

HOLD = 0.5  # how long a rename whose target vanished waits for the rename that moved it on
# watchdog adds a watch on a new folder only when it gets to the folder's creation event; what
# happens in it before that is never reported. A second look at the folder a little later
# catches it.
RECHECK = 1.0


class EventLike(Protocol):
    event_type: str
    src_path: str
    dest_path: str
    is_directory: bool


class Event(NamedTuple):
    """The fields of a watchdog event we read (watchdog's own events fit too)."""

    event_type: str  # created | modified | deleted | moved | closed | opened | attrib | ...
    src_path: str
    dest_path: str = ""
    is_directory: bool = False
    is_synthetic: bool = False  # made up by watchdog from a walk, not reported by the kernel


def relative(root: str, path: str) -> str | None:
    """`path` relative to `root`, or None when it lies outside (a move in or out of the tree)."""
    root = root.rstrip("/")
    if path == root:
        return ""
    if not path or not path.startswith(root + "/"):
        return None
    return path[len(root) + 1 :]


def storable_dir(rel: str) -> str:
    """The nearest folder at or above `rel` whose name the index can store.

    A folder whose name is not valid UTF-8 cannot be used as a prefix in SQL; reconciling its
    parent covers it (the indexer reports the bad names it finds there).
    """
    while rel and not storable(rel):
        rel = rel.rpartition("/")[0]
    return rel


def actions(event: EventLike, root: str, wants: Callable[[str], bool]) -> list[Action]:
    """What one event asks of the index. `wants(rel)` says whether a file path is a card path."""
    kind = event.event_type
    if kind == "moved" and getattr(event, "is_synthetic", False):
        # watchdog follows a folder rename with one made-up rename per thing inside it, found
        # by walking the new folder later. The folder's own rename already re-keys every card
        # below it and looks at both folders; replayed after the worker took the folder's rename,
        # a made-up one would re-key whatever had appeared at the old path meanwhile.
        return []
    src = relative(root, event.src_path)
    dest = relative(root, event.dest_path) if kind == "moved" else None
    if event.is_directory:
        return _dir_actions(kind, src, dest)
    if kind == "moved":
        # Both ends count before any filtering: a card renamed to `x.md~` or into `.trash/` is
        # gone, and a temp file renamed onto a card is a save of that card.
        src_ok = src is not None and wants(src)
        dest_ok = dest is not None and wants(dest)
        if src_ok and dest_ok and src is not None and dest is not None:
            return [Action("move", src, dest)]
        return [Action("sync", p) for p, ok in ((src, src_ok), (dest, dest_ok)) if ok and p is not None]
    if kind in ("created", "modified", "deleted", "closed", "attrib") and src is not None and wants(src):
        # attrib: a mode change decides whether the card can be read at all (chmod 000 / u+r)
        return [Action("sync", src, settled=kind == "closed")]
    return []  # opened, closed_no_write: nothing a reader of the content would see


def _visible(rel: str | None) -> TypeGuard[str]:
    return rel is not None and (rel == "" or not hidden(rel))


def _dir_actions(kind: str, src: str | None, dest: str | None) -> list[Action]:
    if kind in ("created", "deleted", "attrib"):
        # A new folder may already hold files written before its watch existed; a deleted or
        # vanished one leaves every card below it to be checked; so does one whose mode changed
        # (chmod 000 hides its files, chmod u+rx shows them again, and watchdog could not
        # watch it while it was closed).
        return [Action("tree", storable_dir(src))] if _visible(src) else []
    if kind != "moved":
        return []
    if _visible(src) and _visible(dest) and src and dest:
        if storable(src) and storable(dest):
            return [Action("move_tree", src, dest)]
        return [Action("tree", storable_dir(src)), Action("tree", storable_dir(dest))]
    return [Action("tree", storable_dir(p)) for p in (src, dest) if _visible(p)]


def expand_moves(
    moves: Iterable[tuple], indexed: Callable[[], set[str]],
    swapped: Callable[[str, str], bool] = lambda a, b: False,
) -> tuple[list[tuple[str, str]], list[str]]:
    """File renames in order, each folder rename replaced by the renames of the indexed files
    below it at that point of the sequence; plus the folders to reconcile afterwards.

    `indexed()` gives the indexed paths of the source; it is called only if a folder moved.
    `swapped(a, b)` says whether folder renames a->b then b->a were one swap of the two folders
    (renameat2's RENAME_EXCHANGE; both are there): their files then trade places at once, a file
    of a name both hold as the renames x->y, y->x that Indexer.move_many takes for a swap.
    """
    pairs: list[tuple[str, str]] = []
    trees: list[str] = []
    known: set[str] | None = None
    moves = list(moves)
    i = 0
    while i < len(moves):
        _source, src, dst, is_tree, *_ = moves[i]
        i += 1
        if not is_tree:
            pairs.append((src, dst))
            if known is not None:
                _follow(known, pairs, len(pairs) - 1)
            continue
        if known is None:
            known = indexed()
            for at in range(len(pairs)):  # replay the renames that came before
                _follow(known, pairs, at)
        if i < len(moves) and moves[i][3] and moves[i][1:3] == (dst, src) and swapped(src, dst):
            i += 1
            pairs += _swap_folders(known, src, dst)
        else:
            for path in sorted(p for p in known if p.startswith(src + "/")):
                known.discard(path)
                known.add(dst + path[len(src):])
                pairs.append((path, dst + path[len(src):]))
        trees += [src, dst]
    return pairs, trees


def swaps(pairs: Sequence[tuple[str, str]],
          swapped: Callable[[str, str, dict[str, str]], bool]) -> set[tuple[str, str]]:
    """The renames x->y directly followed by y->x that `swapped(x, y, where)` confirms are one
    swap (renameat2's RENAME_EXCHANGE is reported as those two renames), by their first half.
    `where`: the paths the files at x and y then went to by the renames after the two (a
    folder holding both renamed on), as far as those say (taken in turn)."""
    found, i = set(), 0
    while i + 1 < len(pairs):
        src, dst = pairs[i]
        if pairs[i + 1] == (dst, src) and swapped(src, dst, _moved_on((src, dst), pairs[i + 2:])):
            found.add((src, dst))
            i += 2
        else:
            i += 1
    return found


def _moved_on(paths: Iterable[str], later: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Where the files at `paths` went by the renames `later` (taken in turn), for those that
    did: a rename that replaced one ends its trail."""
    return {was: now for now, was in carried({p: p for p in paths}, later, set()).items() if now != was}


def carried(values: dict[str, T], pairs: Sequence[tuple[str, str]], swapped: set[tuple[str, str]]) -> dict[str, T]:
    """What is known of the files at some paths (`values`), after the renames `pairs` in order:
    each takes its source's value to its target, whose own value goes (the file there was
    replaced), but for a swap (`swapped`, by swaps()), whose two files trade values."""
    out = dict(values)
    i = 0
    while i < len(pairs):
        src, dst = pairs[i]
        if (src, dst) in swapped and pairs[i + 1:i + 2] == [(dst, src)]:
            there = {path: out.pop(path) for path in (src, dst) if path in out}
            out.update({(dst if path == src else src): value for path, value in there.items()})
            i += 2
            continue
        value = out.pop(src, None)
        out.pop(dst, None)
        if value is not None:
            out[dst] = value
        i += 1
    return out


def _follow(known: set[str], pairs: list[tuple[str, str]], at: int) -> None:
    """Update the indexed paths `known` for file rename `at` of `pairs`. After what may be a swap
    (x->y, then y->x) both places count, so that a folder renamed after it takes both files on:
    had they been renames in turn, y's rename finds no card to move, which is harmless, while a
    card of the swap left behind would lose its id."""
    src, dst = pairs[at]
    if at and pairs[at - 1] == (dst, src):
        if src in known:  # x or y was indexed: the first half put one at y
            known.add(dst)
        return
    if src in known:
        known.discard(src)
        known.add(dst)


def _swap_folders(known: set[str], a: str, b: str) -> list[tuple[str, str]]:
    """The renames of the indexed files below folders a and b when the two swap (`known` is
    updated): a file of a name both hold as x->y directly followed by y->x."""
    below = {top: {p[len(top):] for p in known if p.startswith(top + "/")} for top in (a, b)}
    pairs = []
    for rest in sorted(below[a] | below[b]):
        here = [(a + rest, b + rest)] if rest in below[a] else []
        pairs += here + ([(b + rest, a + rest)] if rest in below[b] else [])
    known.difference_update([a + rest for rest in below[a]] + [b + rest for rest in below[b]])
    known.update([b + rest for rest in below[a]] + [a + rest for rest in below[b]])
    return pairs


def keep_sources(batch: Batch, names: Iterable[str]) -> None:
    """Drop from `batch` what belongs to sources not in `names` (removed from config.json while
    their events were queued)."""
    names = set(names)
    batch.moves = [move for move in batch.moves if move[0] in names]
    for per_source in (batch.paths, batch.trees):
        for name in [n for n in per_source if n not in names]:
            del per_source[name]
