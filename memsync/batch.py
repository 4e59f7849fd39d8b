"""One batch of files, from the disk into the index: each file looked at (memsync.reading),
then every look applied in one transaction, with what that takes: a file that moved keeps its
card ids, a card back from the trash gets its old ones, and a look gone stale before the
transaction began is taken again.

Batches is part of memsync.sync.Indexer, which cuts its work into batches (a watcher's events,
a reconcile's chunks, a rebuild); the Indexer holds the state used here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Sequence
from contextlib import nullcontext

from memsync.adapters import Adapter, reached
from memsync.store.index import Index

from . import reading
from .exclusions import Exclusions
from .model import TRASH, Source
from .pathnames import printable
from .reading import Look, digest
from .sizes import size_and_cap


class Batches:
    """Looking at files and applying the looks, for an Indexer (memsync.sync)."""

    # the Indexer's own, set in Indexer.__init__
    index: Index
    sources: dict[str, Source]
    adapters: dict[str, Adapter]
    excluded: dict[str, Exclusions]
    max_bytes: int

    def _full(self, source: str, rel: str) -> str:
        return os.path.join(self.sources[source].root, *rel.split("/"))

    def _indexable(self, source: str, rel: str) -> bool:
        """Whether a walk under the current rules would index `rel`: wanted, not excluded, and
        in no folder the adapter leaves (a card indexed before node_modules/ was skipped is
        dropped by a reconcile, as a rebuild drops it)."""
        adapter = self.adapters[source]
        return adapter.wants(rel) and reached(adapter, rel) and not self.excluded[source].excludes(rel)

    def _look(self, source: str, rel: str, stored: tuple | None) -> Look:
        if self.excluded[source].excludes(rel):
            return Look(rel, "absent")
        return reading.look(self.sources[source].root, self.adapters[source], self.max_bytes,
                            rel, stored)

    def _apply(self, source, looks, stored, report, vanished: Sequence[str] = (),
               recheck: bool = True, spare: Collection[str] = ()) -> None:
        """Apply one batch of looks in one transaction. `stored` is updated as rows change.

        A new file whose content equals a file that disappeared (in this batch, or in
        `vanished`) is that file moved: it keeps its id and stats. `recheck`: the looks were
        taken before the transaction began, so each is checked again inside it (_still_true).
        An indexed file of `spare` found absent keeps its card, listed in `report.vanished`.
        """
        index = self.index
        gone_by_hash: dict[str, str] = {}
        for look in looks:
            if look.state == "absent" and stored.get(look.path):
                gone_by_hash.setdefault(stored[look.path][1], look.path)
        for rel in vanished:
            if rel in stored:
                gone_by_hash.setdefault(stored[rel][1], rel)
        batch = nullcontext() if index.in_transaction else index.transaction()
        changed_before = report.changed
        with batch:
            # A new file may be a card coming back from the trash with its id (_back_from_trash):
            # asked once a batch, as most batches (every one of a rebuild, mostly) have none parked.
            parked = index.binds_under(source, TRASH)
            # Contents first, so a file that moved is paired before its old path is dropped.
            for look in sorted(looks, key=lambda look: look.state != "content"):
                if recheck:
                    look = self._still_true(source, look, stored)
                previous = stored.get(look.path)
                report.hashed += look.hashed
                if look.state in ("absent", "too_large", "bad_name", "unreadable"):
                    if previous and index.file_state(source, look.path):
                        if look.state == "absent" and look.path in spare and self._indexable(source, look.path):
                            report.vanished.append(look.path)  # gone from the disk, not by its name
                            continue
                        index.remove_file(source, look.path)
                        report.removed += 1
                        if look.state == "absent" and self._in_trash(source, look.path, previous):
                            index.rebind_ids(source, look.path, f"{TRASH}/{look.path}")
                    stored.pop(look.path, None)
                    problem = _problem(look, self.adapters[source], self.max_bytes)
                    index.set_problem(source, printable(look.path), problem)
                    if look.state in ("bad_name", "too_large", "unreadable"):
                        report.problems.append({"path": printable(look.path), "message": problem})
                    if look.state == "unreadable":
                        report.denied.append((source, printable(look.path)))
                elif look.state == "unchanged":
                    report.unchanged += 1
                elif look.state == "touched":
                    assert look.sig is not None  # a touched file was stat'ed
                    index.touch_signature(source, look.path, look.sig, time.time_ns())
                    report.unchanged += 1
                elif look.state == "unstable":
                    report.problems.append({"path": look.path, "message": "changing while read; retry"})
                    report.retry.append(look.path)
                else:
                    assert look.sig is not None and look.digest is not None  # its content was read
                    origin = None if previous else gone_by_hash.pop(look.digest, None)
                    if origin and index.file_state(source, origin):
                        index.move_file(source, origin, look.path)
                        stored.pop(origin, None)
                        report.moved += 1
                    elif previous:
                        report.updated += 1
                    else:
                        report.added += 1
                        if parked:
                            self._back_from_trash(source, look.path)
                    index.replace_file(
                        source, look.path, look.cards, look.fields, look.sig, look.digest,
                        look.read_at,
                    )
                    stored[look.path] = (look.sig, look.digest, look.read_at)
                    # The file's problems, once and under its own path, as the index keeps them
                    # (a GEMINI.md's broken frontmatter is every one of its bullets' problem).
                    problems = dict.fromkeys(card.problem for card in look.cards if card.problem)
                    if problems:
                        report.problems.append({"path": look.path, "message": "; ".join(problems)})
            if report.changed != changed_before:
                index.mark_changed()

    def _still_true(self, source: str, look: Look, stored: dict) -> Look:
        """A look was taken before the transaction began; a write command may have moved the
        file since (a delete parks its id in the trash, a restore brings it back). Applied
        as it was, a stale look would index a card that has left, under a new id, or drop one
        that has just come back. Inside the transaction the file is stat'ed again, and a look
        it no longer matches is taken anew from what the index holds now."""
        if look.state in ("unstable", "bad_name"):
            return look
        now = reading.current_signature(self.sources[source].root, look.path, self.adapters[source])
        if now == look.sig or (look.state == "absent" and now is None):
            return look
        if look.state == "absent" and not self._indexable(source, look.path):
            return look  # absent by its name (excluded, not a card path): the disk cannot change that
        state = self.index.file_state(source, look.path)
        if state is None:
            stored.pop(look.path, None)
        else:
            stored[look.path] = state
        return self._look(source, look.path, state)

    # A card moved into `.trash/<path>` (Obsidian's own delete, or a move while we were not
    # watching) keeps its id there; when it comes back, the id comes back with it.

    def _in_trash(self, source: str, rel: str, stored: tuple) -> bool:
        """Whether the card last read at `rel` (`stored`: its signature, hash and read time) is
        the copy at `.trash/<rel>` now: the same content, moved there (the same inode) or put
        there (copied by a sync tool) since that read. A copy the trash already held then (an
        older delete of the same text) is another card's: taken for this one, a moment's absence
        of `rel` (an editor's save caught by a reconcile) gave both cards' ids away."""
        sig, stored_hash, read_ns = stored
        try:
            with open(self._full(source, f"{TRASH}/{rel}"), "rb") as handle:
                found = os.fstat(handle.fileno())
                if found.st_ino != sig.ino and found.st_ctime_ns <= read_ns:
                    return False
                return digest(handle.read(self.max_bytes + 1)) == stored_hash
        except OSError:
            return False

    def _back_from_trash(self, source: str, rel: str) -> None:
        parked = f"{TRASH}/{rel}"
        if self.index.bound_id(source, parked) and not os.path.lexists(self._full(source, parked)):
            self.index.rebind_ids(source, parked, rel)


# The problem of a folder memsync may not list or enter: its files are left out (memsync.survey).
FOLDER_DENIED = "folder cannot be read (permission denied); make it readable, e.g. chmod u+rx"


def _problem(look: Look, adapter: Adapter, max_bytes: int) -> str | None:
    if look.state == "too_large":
        assert look.sig is not None  # its size was stat'ed
        size, cap = size_and_cap(look.sig.size, reading.size_cap(adapter, max_bytes))
        if adapter.max_bytes:  # a file a program writes: the user cannot split it
            return (f"file is {size}, over the {cap} memsync reads of one {adapter.name} file; "
                    "its cards are left out of the index until it is smaller")
        return f"file is {size}, over the {cap} limit; split it into smaller cards"
    if look.state == "bad_name":
        return "file name is not valid UTF-8; rename it"
    if look.state == "unreadable":
        return "file cannot be read (permission denied); make it readable, e.g. chmod u+r"
    return None
