"""A reconcile's survey: every file of a source's tree on disk against the rows the index
stored for it, down to the files to read again and the files gone.

A file is unchanged while its lstat signature (size, mtime, ctime, inode) equals the stored one
and it was read well after its last write (reading.RACY_NS); every other file is work. Listing
and lstat-ing a big tree is most of a reconcile, and on a warm local cache it is Python's own
work under the GIL: threads only contend. So a big survey (PROCESSES_FROM stored files) is
shared among worker processes, each of which walks some subtrees, reads the rows stored for
them from the index file and compares them itself, and sends back only what differs (100,000
files on 2 cores: 0.93 s in one process, 0.49 s in two). Processes start by fork only: a fork
server or spawn costs more than the survey saves, so a watcher (threads running) surveys in
its own process, one subtree at a time all the same: the files and rows of a whole big tree are
never held at once. Where the stats themselves are slow (a cold cache, a network mount), threads
overlap the kernel's waits instead (files_on_disk).

No folder is skipped because its mtime has not moved. A folder's mtime changes when an entry is
added, removed or renamed in it, never when a file's content changes, so an unchanged folder
could spare only its listing, never the lstat of each file in it; on the 10k vault the listing
is 15-20 % of walk + lstat, and an unchanged folder would still need its files and subfolders
stored to stand in for the listing. And it is sound only where folder mtimes are exact: not on
FAT/exFAT (2 s steps: an entry added within the step leaves it as it was), not on NFS or SMB
mounts whose attribute cache serves a stale mtime, not on FUSE file systems that do not keep
them, and not across the same-tick window that makes files racily clean (reading.RACY_NS).
"""

from __future__ import annotations

import os
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import memsync.adapters as adapters
from memsync.adapters import hidden
from memsync.store.index import Index

from . import reading
from .exclusions import Exclusions
from .pathnames import printable, storable
from .reading import RACY_NS

Stat = tuple[int, int, int, int]  # what lstat says of a file: size, mtime_ns, ctime_ns, inode

# stored files: a survey this big goes a subtree at a time, in worker processes where it can
PROCESSES_FROM = 20_000
# Subtrees handed out per process, so an uneven tree still shares well: a process that draws
# a big part last keeps the others waiting (100,000 files in 8 folders, 2 processes: 4 parts
# each, 0.49-0.55 s; 8 parts each, 0.46-0.50 s; 16, no better)
PARTS_PER_WORKER = 8
WALK_THREADS_FROM = 20_000  # stored files: below this the tree is walked in one thread
# A big walk lists this many files in one thread first, and shares the rest out among threads
# only when those took longer than SLOW_STAT_NS a file: a cold cache or a network mount, where
# waiting on the kernel dominates and threads overlap the waits. On a warm local cache the walk
# is Python's own work under the GIL and threads only contend (100,000 files on 2 cores:
# 1 thread 0.64 s, 2 threads 0.79 s, 4 threads 1.33 s).
WALK_SAMPLE = 2_000
SLOW_STAT_NS = 40_000


@dataclass
class Survey:
    """What a part of a tree holds against what the index stored for it."""

    work: list[str] = field(default_factory=list)  # new, changed or racily clean: read again
    gone: list[str] = field(default_factory=list)  # stored, no longer on disk (or wanted)
    scanned: int = 0  # files on disk
    scanned_bytes: int = 0  # their sizes, summed
    unchanged: int = 0
    stored: int = 0  # files the index held
    present: set[str] = field(default_factory=set)  # of the paths asked about, those on disk
    shared: int = 0  # subtrees surveyed by worker processes

    def add(self, found: dict[str, Stat], stamps: dict[str, tuple], asked: frozenset[str]) -> None:
        """Compare the files found in part of the tree with the stamps (Index.file_stamps)
        stored for the same part: a file is unchanged when they are equal. `asked`: paths (as
        the index shows them) to report as present."""
        self.scanned += len(found)
        self.scanned_bytes += sum(stat[0] for stat in found.values())
        self.stored += len(stamps)
        for rel, sig in found.items():
            if stamps.get(rel) == sig:
                self.unchanged += 1
            else:
                self.work.append(rel)
        self.gone += stamps.keys() - found.keys()
        if asked:  # a bad name is shown (and its problem kept) in its printable form
            self.present.update(shown for rel in found
                                if (shown := rel if storable(rel) else printable(rel)) in asked)

    def merge(self, other: Survey) -> None:
        self.work += other.work
        self.gone += other.gone
        self.scanned += other.scanned
        self.scanned_bytes += other.scanned_bytes
        self.unchanged += other.unchanged
        self.stored += other.stored
        self.present |= other.present
        self.shared += other.shared


def survey(index: Index, source: str, root: str, adapter_name: str, excluded: Exclusions,
           under: str | None = None, workers: int = 1, fork: bool = False,
           asked: frozenset[str] = frozenset()) -> Survey:
    """The survey of `source` (below `under`), work and gone sorted (ids and rows must not
    depend on how it was shared out). A big tree (PROCESSES_FROM stored files) on quick stats is
    surveyed a subtree at a time: by worker processes when `fork` allows them (no other thread
    runs) outside a transaction, whose rows they could not see; else in this process, so that
    neither the whole tree's files nor its rows are held at once (a watcher starting on 100,000
    files held both)."""
    adapter = adapters.get(adapter_name)
    excluded.refresh()
    start = os.path.join(root, *under.split("/")) if under else root
    prefix, end = Index.folder_range(under)
    result = Survey()
    if index.count_files(source, under, PROCESSES_FROM) >= PROCESSES_FROM:
        found, folders, slow = _sample(adapter, excluded, [(start, prefix)])
        if not slow:
            parts = _spread(adapter, excluded, folders, found, PARTS_PER_WORKER * max(workers, 2))
            shared = None
            if fork and workers > 1 and not index.in_transaction and len(parts) >= 2:
                shared = _shared(Path(index.path), source, adapter_name, excluded, parts, workers, asked)
                result.shared = len(parts) if shared is not None else 0
            if shared is None:
                shared = [_survey_parts(index, source, adapter, excluded, parts, asked)]
            for part in shared:
                result.merge(part)
            rest = _outside(prefix, end, [p for _, p in parts])
            result.add(found, index.file_stamps_in(source, RACY_NS, rest), asked)
            return _sorted(result)
    stamps = index.file_stamps(source, RACY_NS, under)
    threads = min(2 * workers, 8) if len(stamps) >= WALK_THREADS_FROM else 1
    result.add(files_on_disk(adapter, excluded, start, prefix, threads), stamps, asked)
    return _sorted(result)


def _sorted(result: Survey) -> Survey:
    result.work.sort()
    result.gone.sort()
    return result


def _shared(db: Path, source: str, adapter_name: str, excluded: Exclusions,
            parts: list[tuple[str, str]], workers: int, asked: frozenset[str]) -> list[Survey] | None:
    """The surveys of `parts` by forked worker processes; None when there are none to be had or
    one died or failed (the caller surveys in this process instead, where a real fault, an
    unreadable index say, is raised as usual)."""
    try:
        with ProcessPoolExecutor(min(workers, len(parts)), mp_context=get_context("fork"),
                                 initializer=reading.watch_parent) as pool:
            # round robin, so each group mixes the big subtrees a sample leaves with small ones
            groups = [parts[i :: PARTS_PER_WORKER * workers] for i in range(PARTS_PER_WORKER * workers)]
            futures = [pool.submit(survey_parts, db, source, adapter_name, excluded, group, asked)
                       for group in groups if group]
            return [f.result() for f in futures]
    except Exception:  # noqa: BLE001 - any failure of a worker: survey in this process
        return None


def survey_parts(db: Path, source: str, adapter_name: str, excluded: Exclusions,
                 parts: list[tuple[str, str]], asked: frozenset[str]) -> Survey:
    """In a worker process: _survey_parts over its own connection to the index."""
    index = Index.existing(db)
    try:
        return _survey_parts(index, source, adapters.get(adapter_name), excluded, parts, asked)
    finally:
        index.close()


def _survey_parts(index: Index, source: str, adapter, excluded: Exclusions,
                  parts: list[tuple[str, str]], asked: frozenset[str]) -> Survey:
    """Subtrees (folder, its relative path + "/") against their rows, one at a time."""
    result = Survey()
    for part in parts:
        result.add(walk(adapter, excluded, [part]), index.file_stamps(source, RACY_NS, part[1]), asked)
    return result


def _outside(low: str, high: str | None, prefixes: list[str]) -> list[tuple[str, str | None]]:
    """The ranges of paths from `low` to before `high` (None: no end) under none of `prefixes`
    (folders, each ending in "/", none inside another). A folder's paths run from "f/" to just
    before "f0" ('0' sorts right after '/'), and the folders' ranges do not overlap."""
    ranges: list[tuple[str, str | None]] = []
    at = low
    for prefix in sorted(prefixes):
        ranges.append((at, prefix))
        at = prefix[:-1] + "0"
    ranges.append((at, high))
    return [(lo, hi) for lo, hi in ranges if hi is None or lo < hi]


def files_on_disk(adapter, excluded: Exclusions, start: str, prefix: str = "",
                  threads: int = 1) -> dict[str, Stat]:
    """Every file below `start` (relative paths begin with `prefix`) that the adapter wants and
    the exclusions leave, with its lstat signature, in no particular order. With `threads`, up
    to that many threads list and stat the subtrees when the stats are slow (WALK_SAMPLE):
    scandir and lstat release the GIL, so waits on the kernel overlap."""
    if threads == 1:
        return walk(adapter, excluded, [(start, prefix)])
    found, folders, slow = _sample(adapter, excluded, [(start, prefix)])
    if not slow:
        found.update(walk(adapter, excluded, folders))
        return found
    folders = _spread(adapter, excluded, folders, found, 4 * threads)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads, thread_name_prefix="memsync-walk") as pool:
        for part in pool.map(lambda f: walk(adapter, excluded, [f]), folders):
            found.update(part)
    return found


def _sample(adapter, excluded: Exclusions,
            folders: list[tuple[str, str]]) -> tuple[dict[str, Stat], list[tuple[str, str]], bool]:
    """List WALK_SAMPLE files depth first: what was found, the folders left (subtrees, none
    inside another), and whether the stats were slow."""
    found: dict[str, Stat] = {}
    began = time.perf_counter_ns()
    while folders and len(found) < WALK_SAMPLE:
        folders += list_folder(adapter, excluded, *folders.pop(), found)
    return found, folders, time.perf_counter_ns() - began >= SLOW_STAT_NS * max(1, len(found))


def _spread(adapter, excluded: Exclusions, folders: list[tuple[str, str]],
            found: dict[str, Stat], parts: int) -> list[tuple[str, str]]:
    """List folders breadth first, one at a time, until the subtrees left are enough to share
    out (`parts`); in a shallow tree, until none is left."""
    queue = deque(folders)
    while queue and len(queue) < parts:
        queue.extend(list_folder(adapter, excluded, *queue.popleft(), found))
    return list(queue)


def list_folder(adapter, excluded: Exclusions, folder: str, rel_prefix: str,
                found: dict[str, Stat]) -> list[tuple[str, str]]:
    """Put the wanted files of one folder into `found`; return the subfolders to enter."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    folders = []
    wants, excludes = adapter.wants, excluded.excludes
    # A file is decided by its name where the adapter allows it (adapters.base: by_name) and
    # the folder is visible: the same answer as wants(rel), without building and scanning the
    # path of every file (a tenth of a 100,000-file walk). Without exclusions, none is asked.
    by_name = adapter.by_name and not hidden(rel_prefix)
    wants_name, filtered = adapter.wants_name, excluded.active
    for entry in entries:
        name = entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                rel = rel_prefix + name
                if adapter.enters(rel) and not excluded.excludes_folder(rel):
                    folders.append((entry.path, rel + "/"))
                continue
            if by_name:
                if not wants_name(name):
                    continue
                rel = rel_prefix + name
                if filtered and excludes(rel):
                    continue
            else:
                rel = rel_prefix + name
                if not wants(rel) or excludes(rel):
                    continue
            st = entry.stat(follow_symlinks=False)
            found[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        except OSError:
            continue
    return folders


def walk(adapter, excluded: Exclusions, stack: list[tuple[str, str]]) -> dict[str, Stat]:
    """Every wanted file of the subtrees on `stack` (folder, relative path + "/")."""
    found: dict[str, Stat] = {}
    while stack:
        stack += list_folder(adapter, excluded, *stack.pop(), found)
    return found
