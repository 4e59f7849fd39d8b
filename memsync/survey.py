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
overlap the kernel's waits instead (memsync.treewalk).

A big survey does not list a folder whose stamp still holds (memsync.folders): its stored files
are lstat-ed by path, and its recorded subfolders entered, with no listing and no name tests
(100,000 files, one process: walk + lstat 0.60 s, the lstat of stored paths 0.46 s; the whole
reconcile on 2 cores, 4 alternating pairs: 0.48 -> 0.35 s).
Every file is still lstat-ed: a file's content changes without its folder's times moving. A
folder is stamped only when its last entry change is older than the racy window
(reading.RACY_NS), so a change in the same tick as the listing cannot hide behind its stamp.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import memsync.adapters as adapters
from memsync.store import folderstamps
from memsync.store.index import Index

from . import folders as folder_stamps
from . import readerbudget, reading, treewalk, workerpool
from .exclusions import Exclusions
from .folders import FolderStamp
from .pathnames import printable, storable
from .reading import RACY_NS
from .treewalk import Stat

# stored files: a survey this big goes a subtree at a time, in worker processes where it can
PROCESSES_FROM = 20_000
# Subtrees handed out per process, so an uneven tree still shares well: a process that draws
# a big part last keeps the others waiting (100,000 files in 8 folders, 2 processes: 4 parts
# each, 0.49-0.55 s; 8 parts each, 0.46-0.50 s; 16, no better)
PARTS_PER_WORKER = 8
WALK_THREADS_FROM = 20_000  # stored files: below this the tree is walked in one thread


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
    # folders that could not be read (relative, with their "/"; "" for the root): their files are
    # missing from the survey and a problem says why (memsync.treewalk.list_folder)
    denied: set[str] = field(default_factory=set)
    shared: int = 0  # subtrees surveyed by worker processes
    # Folder stamps (memsync.folders): those of every folder visited, how many were stored for
    # the subtrees visited, and where they changed, the subtrees whose stamps to store once the
    # files in them are indexed.
    folders: dict[str, FolderStamp] = field(default_factory=dict, compare=False)
    known: int = field(default=0, compare=False)
    stamped: list[str] = field(default_factory=list, compare=False)
    every: bool = field(default=False, compare=False)  # a rebuild's: every file on disk is work

    def add(self, found: dict[str, Stat], stamps: dict[str, tuple], asked: frozenset[str]) -> None:
        """Compare the files found in part of the tree with the stamps (Index.file_stamps)
        stored for the same part: a file is unchanged when they are equal. `asked`: paths (as
        the index shows them) to report as present."""
        self.scanned += len(found)
        self.scanned_bytes += sum(stat[0] for stat in found.values())
        self.stored += len(stamps)
        for rel, sig in found.items():
            if not self.every and stamps.get(rel) == sig:
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
        self.denied |= other.denied
        self.shared += other.shared
        self.folders.update(other.folders)
        self.known += other.known
        self.stamped += other.stamped


def survey(index: Index, source: str, root: str, adapter_name: str, excluded: Exclusions,
           under: str | None = None, workers: int = 1, fork: bool = False,
           asked: frozenset[str] = frozenset(), every: bool = False) -> Survey:
    """The survey of `source` (below `under`), work and gone sorted (ids and rows must not
    depend on how it was shared out). With `every` (a rebuild's), every file on disk is work,
    while `stored` and `gone` still count against the rows, for the mass-removal guard.
    A big tree (PROCESSES_FROM stored files) on quick stats is surveyed a subtree at a time:
    by worker processes when `fork` allows them (no other thread runs) outside a transaction,
    whose rows they could not see; else in this process, so that neither the whole tree's files
    nor its rows are held at once (a watcher starting on 100,000 files held both)."""
    adapter = adapters.get(adapter_name, root)
    excluded.refresh()
    start = os.path.join(root, *under.split("/")) if under else root
    prefix, end = Index.folder_range(under)
    result = Survey(every=every)
    if index.count_files(source, under, PROCESSES_FROM) >= PROCESSES_FROM:
        found, folders, slow = treewalk.sample(adapter, excluded, [(start, prefix)], result.denied)
        if not slow:
            parts = treewalk.spread(adapter, excluded, folders, found, PARTS_PER_WORKER * max(workers, 2),
                                    result.denied)
            rules = (folder_stamps.rules_key(adapter, excluded)
                     if folder_stamps.exact_times(os.path.realpath(root)) else None)
            shared = None
            if fork and workers > 1 and not index.in_transaction and len(parts) >= 2:
                shared = _shared(Path(index.path), source, adapter_name, excluded, parts, workers, asked,
                                 rules, every, root)
                result.shared = len(parts) if shared is not None else 0
            if shared is None:
                shared = [_survey_parts(index, source, adapter, excluded, parts, asked, rules, every)]
            for part in shared:
                result.merge(part)
            # Stamps change as a whole: a subtree's that changed, and those of folders gone or
            # now outside every subtree, which no subtree's visit could have dropped.
            if rules is not None and (result.stamped or folderstamps.count(index, source, prefix) != result.known):
                result.stamped = [prefix]
            rest = _outside(prefix, end, [p for _, p in parts])
            result.add(found, index.file_stamps_in(source, RACY_NS, rest), asked)
            return _sorted(result)
    stamps = index.file_stamps(source, RACY_NS, under)
    threads = min(2 * workers, 8) if len(stamps) >= WALK_THREADS_FROM else 1
    result.add(treewalk.files_on_disk(adapter, excluded, start, prefix, threads, result.denied), stamps, asked)
    return _sorted(result)


def _sorted(result: Survey) -> Survey:
    result.work.sort()
    result.gone.sort()
    return result


def _shared(db: Path, source: str, adapter_name: str, excluded: Exclusions,
            parts: list[tuple[str, str]], workers: int, asked: frozenset[str],
            rules: int | None = None, every: bool = False, root: str | None = None) -> list[Survey] | None:
    """The surveys of `parts` by forked worker processes; None when there are none to be had or
    one died or failed (the caller surveys in this process instead, where a real fault, an
    unreadable index say, is raised as usual)."""
    with readerbudget.reserved(min(workers, len(parts))) as granted:
        if not granted:
            return None
        try:
            pool = workerpool.Pool(granted, reading.watch_parent, "fork")
        except (OSError, ValueError):
            return None
        try:
            # round robin, so each group mixes the big subtrees a sample leaves with small ones
            groups = [parts[i :: PARTS_PER_WORKER * workers] for i in range(PARTS_PER_WORKER * workers)]
            return workerpool.every_result(pool, [
                functools.partial(survey_parts, db, source, adapter_name, excluded, group, asked, rules,
                                  every, root)
                for group in groups if group])
        finally:
            pool.close()


def survey_parts(db: Path, source: str, adapter_name: str, excluded: Exclusions,
                 parts: list[tuple[str, str]], asked: frozenset[str], rules: int | None = None,
                 every: bool = False, root: str | None = None) -> Survey:
    """In a worker process: _survey_parts over its own connection to the index (`root`: the
    source's folder, for its adapter)."""
    index = Index.existing(db)
    try:
        return _survey_parts(index, source, adapters.get(adapter_name, root), excluded, parts, asked, rules, every)
    finally:
        index.close()


def _survey_parts(index: Index, source: str, adapter, excluded: Exclusions,
                  parts: list[tuple[str, str]], asked: frozenset[str], rules: int | None = None,
                  every: bool = False) -> Survey:
    """Subtrees (folder, its relative path + "/") against their rows, one at a time. With
    `rules` (memsync.folders.rules_key, where folder times are exact), folders whose stamps
    hold are not listed (walk_known)."""
    result = Survey(every=every)
    for part in parts:
        stamps = index.file_stamps(source, RACY_NS, part[1])
        if rules is None:
            found = treewalk.walk(adapter, excluded, [part], result.denied)
        else:
            known = folderstamps.load(index, source, part[1])
            if unchanged(part, len(stamps), known, rules):  # the usual case: lstat the files
                found, seen = treewalk.lstat_all(part, stamps, adapter), known
            else:
                found, seen = walk_known(adapter, excluded, part, stamps, known, rules, result.denied)
            result.folders.update(seen)
            result.known += len(known)
            if seen != known:
                result.stamped.append(part[1])
        result.add(found, stamps, asked)
    return result


def unchanged(part: tuple[str, str], stored: int, known: dict[str, FolderStamp], rules: int) -> bool:
    """Whether every folder of a subtree is as its stamp says (times, inode, rules, as many
    stamped subfolders as it entered) and the stamps count the `stored` files of the subtree.
    Each folder's stored files number no more than its stamp counts (its entries did not change
    since), so equal sums mean every folder's files are all stored and the stored ones are all
    there are."""
    below = _below(known)
    files, stack = 0, [part]
    while stack:
        path, prefix = stack.pop()
        stamp = known.get(prefix)
        try:
            st = os.lstat(path)
        except OSError:
            return False
        subfolders = below.get(prefix, ())
        if stamp is None or stamp != (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, stamp.files,
                                      len(subfolders), rules):
            return False
        files += stamp.files
        stack += [(f"{path}/{sub[len(prefix) : -1]}", sub) for sub in subfolders]
    return files == stored


def _below(known: dict[str, FolderStamp]) -> dict[str, list[str]]:
    """folder -> the stamped folders directly in it."""
    below: dict[str, list[str]] = {}
    for folder in known:
        if folder:
            below.setdefault(folder_stamps.parent(folder), []).append(folder)
    return below


def walk_known(adapter, excluded: Exclusions, part: tuple[str, str], stored: Iterable[str],
               known: dict[str, FolderStamp], rules: int,
               denied: set[str] | None = None) -> tuple[dict[str, Stat], dict[str, FolderStamp]]:
    """walk() of one subtree, except that a folder whose stamp in `known` still holds is not
    listed: its files are those of `stored` (relative paths) directly in it, and its subfolders
    those of `known` directly below it. Returns what was found, and the stamp of every folder
    visited: the one it had where it held, a new one where the folder was listed and its last
    entry change is past the racy window (none where it is not, nor where it could not be read:
    its stamp would hide that until its mode changed, `denied` gets it each time)."""
    denied = set() if denied is None else denied
    files_in: dict[str, list[str]] = {}
    for rel in stored:
        files_in.setdefault(rel[: rel.rfind("/") + 1], []).append(rel)
    below = _below(known)
    found: dict[str, Stat] = {}
    seen: dict[str, FolderStamp] = {}
    began = time.time_ns()
    stack = [part]
    while stack:
        path, prefix = stack.pop()
        try:
            st = os.lstat(path)  # before the listing: a change during it moves the times after
        except OSError:
            continue
        files, subfolders = files_in.get(prefix, ()), below.get(prefix, ())
        stamp = known.get(prefix)
        if stamp == (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, len(files), len(subfolders), rules):
            found.update(treewalk.lstat_all((path, prefix), files, adapter))
            stack += [(f"{path}/{sub[len(prefix) : -1]}", sub) for sub in subfolders]
            seen[prefix] = stamp
            continue
        before = len(found)
        entered = treewalk.list_folder(adapter, excluded, path, prefix, found, denied)
        stack += entered
        if began - st.st_ctime_ns > RACY_NS and storable(prefix) and prefix not in denied:
            seen[prefix] = FolderStamp(st.st_mtime_ns, st.st_ctime_ns, st.st_ino, len(found) - before,
                                       len(entered), rules)
    return found, seen


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
