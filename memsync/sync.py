"""Where files meet the index: the one incremental code path used by everything.

`sync_paths` (the watcher, write commands), `reconcile` (`memsync index`, watcher start-up) and
`rebuild` all look at each file the same way: lstat it, skip it if its stat signature matches what
we stored, otherwise read and hash it, and re-parse it only if the hash changed. Files are read
outside the write transaction; each batch is then applied in one short transaction.

The Indexer is the one owner of card-id bindings: a card's id follows it through renames, into
the trash and back, and every such move goes through a method here (the watcher's pairing and
the write side's trash call them rather than rebinding ids themselves).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext

import memsync.adapters as adapters
from memsync.store import folderstamps
from memsync.store.index import Index

from . import cores, readers, reading, survey
from .exclusions import Exclusions
from .model import TRASH, Source
from .model.indexing import Signature, SyncReport
from .pathnames import printable, storable
from .reading import MAX_FILE_BYTES, Look, digest
from .sizes import size_and_cap

BATCH = 500  # files per write transaction of a reconcile (a rebuild is one transaction)
# Reading, parsing and tokenizing cost about twice what writing the index does; past this many
# files to read, worker processes do it while this process writes (threads would fight over
# the GIL). One worker per usable core, up to MAX_WORKERS: past that the one writer is the
# bottleneck. A worker count of 1 reads in this process, as a 1-core machine should.
PARALLEL_FROM = 500
MAX_WORKERS = 8
WORKER_CHUNK = 100
# Chunks read ahead of the writer, in write batches: the writer submits more only between
# batches, so the workers need a batch's worth queued to stay busy while it writes one (with
# two chunks a worker they idled through most of each write).
IN_FLIGHT_BATCHES = 2
# A source's first index of up to this many files is one transaction, as a rebuild is
# (Indexer._first_load). Larger ones go in BATCH-file transactions: each commit lets another
# writer in (a capture, an MCP write, which wait up to the busy timeout, 60 s) and shows the
# cards indexed so far. At the 2,500-2,800 cards/s of a rebuild here, 20,000 notes take 7-8 s.
ONE_LOAD_FILES = 20_000


def default_workers() -> int:
    return max(1, min(cores.usable(), MAX_WORKERS))


__all__ = ["MAX_FILE_BYTES", "Indexer", "storable"]


MASS_REMOVAL_FROM = 10  # indexed files a source needs before "more than half gone" stops a sync
CONFIRM = "--allow-mass-removal"


def mass_removal(gone: int, stored: int) -> bool:
    """Whether removing `gone` of a source's `stored` indexed files at once needs a yes: all of
    them (two or more), or more than half of a source of MASS_REMOVAL_FROM files or more."""
    if stored >= 2 and gone == stored:
        return True
    return stored >= MASS_REMOVAL_FROM and gone * 2 > stored


class Indexer:
    def __init__(self, index: Index, sources: Sequence[Source], max_bytes: int = MAX_FILE_BYTES,
                 workers: int | None = None):
        self.index = index
        # processes reading files in a big reconcile or a rebuild; None: one per usable core
        self.workers = default_workers() if workers is None else max(1, workers)
        # A reconcile or rebuild that would drop most of a source's files refuses (MassRemoval)
        # unless this is set: what a person confirmed with --allow-mass-removal.
        self.allow_mass_removal = False
        self.sources = {s.name: s for s in sources}
        self.adapters = {s.name: adapters.get(s.adapter) for s in sources}
        self.excluded = {s.name: Exclusions(s.root) for s in sources}  # Obsidian's own setting
        self.max_bytes = max_bytes

    # --- public API -----------------------------------------------------------------------

    def sync_paths(self, source: str, paths: Iterable[str]) -> SyncReport:
        """Bring the given paths (relative to the source root) up to date, in one transaction."""
        started = time.perf_counter()
        paths = list(dict.fromkeys(paths))
        self.excluded[source].refresh()
        stored = {p: self.index.file_state(source, p) for p in paths if storable(p)}
        report = SyncReport(scanned=len(paths))
        looks = [self._look(source, p, stored.get(p)) for p in paths]
        self._apply(source, looks, stored, report)
        report.seconds = time.perf_counter() - started
        return report

    def move(self, source: str, src: str, dst: str) -> SyncReport:
        """A rename seen as one event: keep the card's id and stats, then check both ends."""
        return self.move_many(source, [(src, dst)], [src, dst])

    def move_many(
        self, source: str, pairs: Sequence[tuple[str, str]], paths: Iterable[str],
    ) -> SyncReport:
        """Renames seen in the order they happened (a swap, a chain a->b->c, a folder's files).

        Each indexed file is re-keyed in turn, all in one transaction, before anything is checked
        against the disk: checking `b` right after a->b would drop the card when b->c followed.
        Then `paths` (normally every end of every pair, and whatever else changed) are synced in
        one batch.
        """
        adapter = self.adapters[source]
        moved = 0
        wanted = [
            (src, dst) for src, dst in pairs
            if storable(src) and storable(dst) and adapter.wants(src) and adapter.wants(dst)
        ]
        if wanted:
            with self.index.transaction():
                for src, dst in wanted:
                    moved += self.index.move_file(source, src, dst)
        report = self.sync_paths(source, paths)
        report.moved += moved
        return report

    def reconcile(
        self, source: str | None = None, under: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> SyncReport:
        """Make the index match the disk for a whole source (or a subtree of it)."""
        started = time.perf_counter()
        report = SyncReport()
        self.index.settle_links()  # after a bulk load that was killed before its end
        for name in [source] if source else list(self.sources):
            self._reconcile_source(name, under, report, progress)
        if under is None:
            self.index.mark_synced()
        if under is None and report.added + report.updated:
            self.index.compact_if_sparse(changed=report.added + report.updated)
        report.seconds = time.perf_counter() - started
        return report

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Recompute every derived row from the files, atomically; ids and read stats survive."""
        started = time.perf_counter()
        report = SyncReport()
        # An index that holds nothing is surveyed first, outside the lock, to know whether its load
        # is small enough to go through a rollback journal (Index.filling): a search arriving
        # meanwhile may wait for such a load to commit, so only one of ONE_LOAD_FILES files or fewer
        # may, as a first index may.
        early = self._surveys() if self.index.holds_nothing() else None
        small = early is not None and sum(f.scanned for f in early.values()) <= ONE_LOAD_FILES
        with self.index.filling() if small else nullcontext(), self.index.transaction():
            # One survey a source, under the write lock: it guards against a mass removal (its
            # gone against its stored rows), sizes the load, and lists every file to read. A
            # survey taken before the lock could miss a file another writer indexed meanwhile,
            # whose row the reload then empties; so the early one counts only if the index
            # still holds nothing. Surveying again after the reload walked the tree twice (0.47 s
            # each at 100,000 files).
            surveys = early if early is not None and self.index.holds_nothing() else self._surveys()
            files, load = (sum(f.scanned for f in surveys.values()), sum(f.scanned_bytes for f in surveys.values()))
            with self.index.bulk(files), self.index.reload(load):
                for name, found in surveys.items():
                    # the tree against the rows as the reload left them: none stored, none gone
                    emptied = dataclasses.replace(found, gone=[], stored=0, stamped=[])
                    self._reconcile_source(name, None, report, progress, emptied)
            for name, found in surveys.items():
                # Taken before the files were read: a folder changed since has other times now, and
                # one that holds a file the rebuild could not index, a count the rows do not match.
                if found.folders:
                    folderstamps.replace(self.index, name, [""], found.folders)
        self.index.mark_synced()
        self.index.compact_if_sparse(resize=True)
        report.seconds = time.perf_counter() - started
        return report

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

    def retire_ids(self, source: str, paths: Iterable[str]) -> None:
        """Purged for good: the ids bound to these paths (and their `#anchor` cards) are retired
        and their read stats dropped."""
        with self.index.transaction():
            for path in paths:
                self.index.clear_stats_for_path(source, path)

    def drop_source(self, name: str) -> SyncReport:
        """Forget every card of a source that is no longer configured."""
        report = SyncReport()
        with self.index.transaction():
            for file in self.index.file_states(name):
                report.removed += self.index.remove_file(name, file) > 0
            for problem in self.index.problems():  # files it could not index have no files row
                if problem["source"] == name:
                    self.index.set_problem(name, problem["path"], None)
            folderstamps.forget(self.index, name)
            self.index.mark_changed()
        return report

    # --- reading the disk -----------------------------------------------------------------

    def _full(self, source: str, rel: str) -> str:
        return os.path.join(self.sources[source].root, *rel.split("/"))

    def _indexable(self, source: str, rel: str) -> bool:
        return self.adapters[source].wants(rel) and not self.excluded[source].excludes(rel)

    def _look(self, source: str, rel: str, stored: tuple | None) -> Look:
        if self.excluded[source].excludes(rel):
            return Look(rel, "absent")
        return reading.look(self.sources[source].root, self.adapters[source], self.max_bytes,
                            rel, stored)

    def files_on_disk(self, source: str, under: str | None = None,
                      threads: int = 1) -> dict[str, tuple[int, int, int, int]]:
        """Every file of `source` (below `under`) that this indexer would index, by relative
        path, with its lstat signature (size, mtime_ns, ctime_ns, ino), in no particular order:
        what a reconcile compares the index with (memsync.survey.files_on_disk)."""
        root = self.sources[source].root
        excluded = self.excluded[source]
        excluded.refresh()
        start = self._full(source, under) if under else root
        prefix, _ = Index.folder_range(under)
        return survey.files_on_disk(self.adapters[source], excluded, start, prefix, threads)

    def guard_removal(self, source: str, present: int, stored: int, gone: int) -> None:
        """Refuse (MassRemoval) to drop `gone` of a source's `stored` indexed files at once, with
        `present` files on disk, unless allowed."""
        if self.allow_mass_removal or not mass_removal(gone, stored):
            return
        from .errors import MassRemoval

        root = self.sources[source].root
        empty = " (the folder is empty)" if not present else ""
        raise MassRemoval(
            f"{gone} of the {stored} files of {source} indexed before are gone from "
            f"{root}{empty}; nothing was removed and ids and read counts are kept. If the folder "
            "is only unmounted or not synced yet, bring it back and run the command again; if "
            f"you removed those files, confirm with `memsync index {CONFIRM}`")

    def _surveys(self) -> dict[str, survey.Survey]:
        """A rebuild's survey of every source (guard_source)."""
        return {name: self.guard_source(name, every=True) for name in self.sources}

    def guard_source(self, source: str, every: bool = False) -> survey.Survey:
        """guard_removal for a whole source, as it is on disk and in the index now; returns the
        survey that counted it (files on disk, their bytes, the folders' stamps), which holds a
        subtree's files and rows at a time (`memsync watch` asks this first: every path of
        100,000 files and every stored row at once took its memory from 40 to 106 MB). `every`:
        a rebuild's survey, every file on disk work (memsync.survey.survey)."""
        found = self._survey(source, every=every)
        self.guard_removal(source, found.scanned, found.stored, len(found.gone))
        return found

    def _survey(self, source: str, under: str | None = None,
                asked: frozenset[str] = frozenset(), every: bool = False) -> survey.Survey:
        """The files of `source` (below `under`) against its rows (memsync.survey.survey), shared
        with worker processes where this process may fork them."""
        return survey.survey(self.index, source, self.sources[source].root, self.sources[source].adapter,
                             self.excluded[source], under, self.workers, readers.start_method() == "fork", asked,
                             every)

    def _reconcile_source(self, source, under, report, progress,
                          surveyed: survey.Survey | None = None) -> None:
        """Bring the rows of `source` (below `under`) in line with its files; a rebuild passes
        the survey it took under its lock, as the tree stands against the rows its reload left."""
        asked = self._problem_paths(source, under)
        found = surveyed or self._survey(source, under, asked)
        if under is None:
            self.guard_removal(source, found.scanned, found.stored, len(found.gone))
        report.scanned += found.scanned
        report.unchanged += found.unchanged
        work, gone = found.work, found.gone
        # a name that is not UTF-8 has no row to fetch (nor can it be passed to SQLite)
        fetch = [rel for rel in (*work, *gone) if storable(rel)]
        rows = self.index.file_rows_of(source, fetch) if fetch else {}
        stored = {rel: (Signature(*row[:4]), row[4], row[5]) for rel, row in rows.items()}
        total = len(work) + len(gone)
        # Small chunks when workers read them, so writing starts early and the pipeline stays
        # full; the writer still applies BATCH files per transaction.
        size = BATCH if len(work) < PARALLEL_FROM or self.workers == 1 else WORKER_CHUNK
        chunks = [[(rel, stored.get(rel)) for rel in work[i : i + size]]
                  for i in range(0, len(work), size)]
        done = 0
        pending: list[Look] = []
        # A first index or a big change is a bulk load too (a rebuild already is one): the
        # B-trees it writes into are as big as the whole tree, and its links are settled once,
        # at its end, not in each batch (Index.carrying_links)
        bulk = len(work) >= PARALLEL_FROM
        with self._first_load(source, found, under), \
                (self.index.bulk(found.scanned) if bulk else nullcontext()):
            # Looks taken inside a transaction (a rebuild's, a first load's) hold the write lock
            # from before the first of them: nothing can have changed the index under them since.
            inside = self.index.in_transaction
            with self.index.carrying_links() if bulk and not inside else nullcontext():
                for looks in self._looks(source, chunks, report):
                    pending += looks
                    if len(pending) < BATCH:
                        continue
                    self._apply(source, pending, stored, report, vanished=gone, recheck=not inside)
                    done += len(pending)
                    pending = []
                    if progress:
                        progress(done, total)
                if pending:
                    self._apply(source, pending, stored, report, vanished=gone, recheck=not inside)
        remaining = [Look(rel, "absent") for rel in gone if rel in stored]
        if remaining:
            self._apply(source, remaining, stored, report)
        self._forget_problems_of_gone_files(source, asked - found.present)
        if found.stamped:  # the files are indexed: their folders' stamps can vouch for them
            folderstamps.replace(self.index, source, found.stamped, found.folders)
        if progress:
            progress(total, total)

    @contextmanager
    def _first_load(self, source: str, found: survey.Survey, under: str | None) -> Iterator[None]:
        """A source's first index, of PARALLEL_FROM to ONE_LOAD_FILES files, is one transaction
        and one bulk load (Index.loading), as a rebuild is. In BATCH-file transactions, a card
        written by one and linked from a later one had its full-text rows written twice (its
        links field is only known at the end), and FTS5 merged its segments as it went: 10,000
        notes with three links each took 8.3 s, against 5.9 s as one load (medians of 3
        alternating runs; 6.1 s for a rebuild into a new file).
        Anything else, or a source another process has begun to index since the survey: as it
        comes, in batches."""
        if (under is None and not found.stored and not self.index.in_transaction
                and PARALLEL_FROM <= len(found.work) <= ONE_LOAD_FILES):
            with self.index.bulk(found.scanned), self.index.filling(), self.index.transaction():
                if self.index.holds_nothing(source):  # asked again, now under the write lock
                    with self.index.loading(found.scanned_bytes):
                        yield
                    return
        yield

    def _problem_paths(self, source: str, under: str | None) -> frozenset[str]:
        """The paths (as shown) of the files of `source` below `under` that could not be
        indexed (too large, a bad name): they have no files row, so only the survey notices
        them leave."""
        prefix, _ = Index.folder_range(under)
        return frozenset(p["path"] for p in self.index.problems()
                         if p["source"] == source and p["path"].startswith(prefix))

    def _forget_problems_of_gone_files(self, source: str, gone: frozenset[str] | set[str]) -> None:
        """A file we could not index has its problem go when the file does."""
        if not gone:
            return
        batch = nullcontext() if self.index.in_transaction else self.index.transaction()
        with batch:
            for path in sorted(gone):
                self.index.set_problem(source, path, None)

    def _looks(self, source: str, chunks: list[list[tuple]],
               report: SyncReport) -> Iterator[list[Look]]:
        """Yield the looks of each chunk, in order (so ids and rows come out as a serial run
        gives them); big jobs are read by worker processes while this process writes, and here
        while they fall behind (memsync.readers)."""
        if sum(map(len, chunks)) < PARALLEL_FROM or self.workers == 1 or len(chunks) < 2:
            for chunk in chunks:
                yield self._look_here(source, chunk)
            return
        job = functools.partial(reading.look_batch, self.sources[source].root,
                                self.sources[source].adapter, self.max_bytes)
        ahead = IN_FLIGHT_BATCHES * BATCH // WORKER_CHUNK + 2 * self.workers
        yield from readers.in_order(chunks, job, lambda chunk: self._look_here(source, chunk),
                                    self.workers, ahead, report)

    def _look_here(self, source: str, chunk: list[tuple]) -> list[Look]:
        return [self._look(source, rel, state) for rel, state in chunk]

    # --- writing the index ----------------------------------------------------------------

    def _apply(self, source, looks, stored, report, vanished: Sequence[str] = (),
               recheck: bool = True) -> None:
        """Apply one batch of looks in one transaction. `stored` is updated as rows change.

        A new file whose content equals a file that disappeared (in this batch, or in
        `vanished`) is that file moved: it keeps its id and stats. `recheck`: the looks were
        taken before the transaction began, so each is checked again inside it (_still_true).
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
                if look.state in ("absent", "too_large", "bad_name"):
                    if previous and index.file_state(source, look.path):
                        index.remove_file(source, look.path)
                        report.removed += 1
                        if look.state == "absent" and self._in_trash(source, look.path, previous[1]):
                            index.rebind_ids(source, look.path, f"{TRASH}/{look.path}")
                    stored.pop(look.path, None)
                    index.set_problem(source, printable(look.path), _problem(look, self.max_bytes))
                    if look.state in ("bad_name", "too_large"):
                        report.problems.append(
                            {"path": printable(look.path), "message": _problem(look, self.max_bytes)}
                        )
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
                    for card in look.cards:
                        if card.problem:
                            report.problems.append({"path": card.path, "message": card.problem})
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
        now = reading.current_signature(self.sources[source].root, look.path)
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

    def _in_trash(self, source: str, rel: str, stored_hash: str) -> bool:
        try:
            with open(self._full(source, f"{TRASH}/{rel}"), "rb") as handle:
                return digest(handle.read(self.max_bytes + 1)) == stored_hash
        except OSError:
            return False

    def _back_from_trash(self, source: str, rel: str) -> None:
        parked = f"{TRASH}/{rel}"
        if self.index.bound_id(source, parked) and not os.path.lexists(self._full(source, parked)):
            self.index.rebind_ids(source, parked, rel)


def _problem(look: Look, max_bytes: int) -> str | None:
    if look.state == "too_large":
        assert look.sig is not None  # its size was stat'ed
        size, cap = size_and_cap(look.sig.size, max_bytes)
        return f"file is {size}, over the {cap} limit; split it into smaller cards"
    if look.state == "bad_name":
        return "file name is not valid UTF-8; rename it"
    return None
