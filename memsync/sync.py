"""Where files meet the index: the one incremental code path used by everything.

`sync_paths` (the watcher, write commands), `reconcile` (`memsync index`, watcher start-up) and
`rebuild` all look at each file the same way: lstat it, skip it if its stat signature matches what
we stored, otherwise read and hash it, and re-parse it only if the hash changed. Files are read
outside the write transaction; each batch is then applied in one short transaction
(memsync.batch, the part of the Indexer that looks and applies).

The Indexer is the one owner of card-id bindings: a card's id follows it through renames, into
the trash and back, and every such move goes through one of its methods (the watcher's pairing
and the write side's trash call them rather than rebinding ids themselves).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext

import memsync.adapters as adapters
from memsync.store import folderstamps
from memsync.store.index import Index

from . import cores, readers, reading, survey, treewalk
from .batch import Batches
from .exclusions import Exclusions
from .fileproblems import FileProblems
from .idbindings import IdBindings
from .model import Source
from .model.indexing import Signature, SyncReport
from .pathnames import storable
from .reading import MAX_FILE_BYTES, Look
from .renames import Renames

BATCH = 500  # files per write transaction of a reconcile (a rebuild is one transaction)
# Reading, parsing and tokenizing cost about twice what writing the index does; past this many
# files to read, worker processes do it while this process writes (threads would fight over
# the GIL). The workers are one process per usable core, up to MAX_WORKERS (past that the one
# writer is the bottleneck): this one, which writes and reads a chunk itself whenever the
# readers fall behind, and a reader process for each of the others. A reader on every core
# shared the writer's with it: at 100,000 cards on 2 cores, one reader rebuilt in 19.1 s
# against two readers' 21.2 s (medians of 6 alternating rounds; 22.1 against 24.0 s in a slower
# hour), at 10,000 in 1.56 against 1.60 s. With a busy process beside the rebuild, two
# readers were 5-8% faster, taking a larger share of the machine from it. A worker count of 1
# reads in this process alone, as a 1-core machine should.
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
# A rebuild is one transaction at any size; into an index that holds nothing (and that no other
# connection has open), it goes through a rollback journal up to this many files (Index.filling),
# where each page is written once, not into the WAL first and copied into the file after. At
# 100,000 cards here that took the rebuild from 20.7 to 17.9 s on two cores, 35.3 to 33.4 s on
# one (medians of 2 alternating rounds), and in a slower hour from 23.8 to 21.2 s and 38.1 to
# 34.4 s (3 rounds); the WAL's copy ran at the end, on one core. A search arriving meanwhile
# waits for the commit (up to the busy timeout, 60 s; memsync.store.connection says so) instead
# of finding the index empty, which would answer "nothing" about memories that are there; at
# 100,000 files the wait is 18 s here, 33 s on one core. Past that, through the WAL.
JOURNALED_REBUILD_FILES = 100_000


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


class Indexer(Batches, IdBindings, FileProblems, Renames):
    def __init__(self, index: Index, sources: Sequence[Source], max_bytes: int = MAX_FILE_BYTES,
                 workers: int | None = None):
        self.index = index
        # processes reading files in a big reconcile or a rebuild, this one with them (see
        # PARALLEL_FROM); None: one per usable core
        self.workers = default_workers() if workers is None else max(1, workers)
        # A reconcile or rebuild that would drop most of a source's files refuses (MassRemoval)
        # unless this is set: what a person confirmed with --allow-mass-removal.
        self.allow_mass_removal = False
        self.sources = {s.name: s for s in sources}
        self.adapters = {s.name: adapters.get(s.adapter, s.root) for s in sources}
        self.excluded = {s.name: Exclusions(s.root) for s in sources}  # Obsidian's own setting
        self.max_bytes = max_bytes

    # --- public API -----------------------------------------------------------------------

    def sync_paths(self, source: str, paths: Iterable[str], spare: Collection[str] = ()) -> SyncReport:
        """Bring the given paths (relative to the source root) up to date, in one transaction.
        The indexed files of `spare` that are gone when read keep their cards for now, listed
        in the report's `vanished`: the caller saw them a moment ago (the watcher, which gives
        a vanished card a grace period, memsync.watch.pairing)."""
        started = time.perf_counter()
        paths = list(dict.fromkeys(paths))
        self.excluded[source].refresh()
        stored = {p: self.index.file_state(source, p) for p in paths if storable(p)}
        looks = [self._look(source, p, stored.get(p)) for p in paths]
        others = self._other_names(source, looks, stored, set(paths))
        stored.update((p, self.index.file_state(source, p)) for p in others)
        looks += [self._look(source, p, stored[p]) for p in others]
        report = SyncReport(scanned=len(looks))
        self._apply(source, looks, stored, report, spare=spare)
        report.seconds = time.perf_counter() - started
        return report

    def _other_names(self, source: str, looks: list[Look], stored: dict, asked: set[str]) -> list[str]:
        """The indexed paths that are other names (hard links) of a file these looks found
        changed or removed: a write through one name changes them all, and removing one name
        changes the others' link count, so their ctime (their stored signature would be stale
        until a reconcile read them again); no event names the others. A removed file's link
        count is gone with it: its stored inode is looked for, one scan per batch that removes
        an indexed file (8-17 ms at 100,000 files, median 10)."""
        inodes = [look.sig.ino for look in looks if look.links > 1 and look.sig is not None
                  and look.state in ("content", "touched")]
        inodes += [stored[look.path][0].ino for look in looks
                   if look.state == "absent" and stored.get(look.path)]
        if not inodes:
            return []
        return [p for p in dict.fromkeys(self.index.paths_of_inodes(source, inodes)) if p not in asked]

    def reconcile(
        self, source: str | None = None, under: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> SyncReport:
        """Make the index match the disk for a whole source (or a subtree of it)."""
        started = time.perf_counter()
        report = SyncReport()
        self.index.settle_links()  # after a bulk load that was killed before its end
        counted = _AcrossSources(progress)
        for name in [source] if source else list(self.sources):
            self._reconcile_source(name, under, report, counted.next_source())
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
        # meanwhile may wait for such a load to commit, so only one of JOURNALED_REBUILD_FILES
        # files or fewer may.
        early = self._surveys() if self.index.holds_nothing() else None
        small = early is not None and sum(f.scanned for f in early.values()) <= JOURNALED_REBUILD_FILES
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
                counted = _AcrossSources(progress)
                for name, found in surveys.items():
                    # the tree against the rows as the reload left them: none stored, none gone
                    emptied = dataclasses.replace(found, gone=[], stored=0, stamped=[])
                    self._reconcile_source(name, None, report, counted.next_source(), emptied)
            for name, found in surveys.items():
                # Taken before the files were read: a folder changed since has other times now, and
                # one that holds a file the rebuild could not index, a count the rows do not match.
                if found.folders:
                    folderstamps.replace(self.index, name, [""], found.folders)
        self.index.mark_synced()
        self.index.compact_if_sparse(resize=True)
        report.seconds = time.perf_counter() - started
        return report

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

    def files_on_disk(self, source: str, under: str | None = None,
                      threads: int = 1) -> dict[str, tuple[int, int, int, int]]:
        """Every file of `source` (below `under`) that this indexer would index, by relative
        path, with its lstat signature (size, mtime_ns, ctime_ns, ino), in no particular order:
        what a reconcile compares the index with (memsync.treewalk.files_on_disk)."""
        root = self.sources[source].root
        excluded = self.excluded[source]
        excluded.refresh()
        start = self._full(source, under) if under else root
        prefix, _ = Index.folder_range(under)
        return treewalk.files_on_disk(self.adapters[source], excluded, start, prefix, threads)

    def guard_removal(self, source: str, present: int, stored: int, gone: list[str]) -> None:
        """Refuse (MassRemoval) to drop the `gone` files of a source's `stored` indexed ones at
        once, with `present` files on disk, unless allowed. Only files missing from the disk
        count: one still there but no longer wanted (an Obsidian exclusion added) is meant to
        leave the index, however many."""
        if self.allow_mass_removal or not mass_removal(len(gone), stored):
            return
        missing = sum(not os.path.lexists(self._full(source, rel)) for rel in gone)
        if not mass_removal(missing, stored):
            return
        from .errors import MassRemoval

        root = self.sources[source].root
        empty = " (the folder is empty)" if not present else ""
        raise MassRemoval(
            f"{missing} of the {stored} files of {source} indexed before are gone from "
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
        self.guard_removal(source, found.scanned, found.stored, found.gone)
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
        asked = self.problem_paths(source, under)
        found = surveyed or self._survey(source, under, asked)
        if under is None:
            self.guard_removal(source, found.scanned, found.stored, found.gone)
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
            if bulk and not inside and under is None and not found.stored:
                self.index.mark_first_index()  # many transactions: a kill leaves some of them
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
        denied = self.note_denied_folders(source, found.denied, report)
        self._forget_problems_of_gone_files(source, asked - found.present - denied)
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
                                    self.workers - 1, ahead, report)

    def _look_here(self, source: str, chunk: list[tuple]) -> list[Look]:
        return [self._look(source, rel, state) for rel, state in chunk]


class _AcrossSources:
    """One progress count over every source of a sync: each source reports its own (done, total),
    told on after the totals of the sources before it. Told as they came, a bar fell back to 0 at
    each source, and one with nothing to do left it at 0 with no rate."""

    def __init__(self, progress: Callable[[int, int], None] | None):
        self.progress = progress
        self.before = self.total = 0

    def next_source(self) -> Callable[[int, int], None] | None:
        self.before, self.total = self.before + self.total, 0
        return self._tell if self.progress is not None else None

    def _tell(self, done: int, total: int) -> None:
        assert self.progress is not None
        self.total = total
        self.progress(self.before + done, self.before + total)
