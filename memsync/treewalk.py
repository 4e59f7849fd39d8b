"""Listing a source's tree on disk: every file an adapter wants and the exclusions leave, with
its lstat signature (memsync.survey compares them with the index's rows).

On a warm local cache a walk is Python's own work under the GIL, so it runs in one thread;
where the stats are slow (a cold cache, a network mount), threads overlap the kernel's waits
(files_on_disk). A big tree is cut into subtrees to share out (sample, spread), among threads
here or among worker processes by memsync.survey.
"""

from __future__ import annotations

import os
import stat
import time
from collections import deque
from collections.abc import Iterable

from memsync.adapters import hidden

from .exclusions import Exclusions
from .linkedfiles import target_stat

Stat = tuple[int, int, int, int]  # what lstat says of a file: size, mtime_ns, ctime_ns, inode

# A big walk lists this many files in one thread first, and shares the rest out among threads
# only when those took longer than SLOW_STAT_NS a file: a cold cache or a network mount, where
# waiting on the kernel dominates and threads overlap the waits. On a warm local cache the walk
# is Python's own work under the GIL and threads only contend (100,000 files on 2 cores:
# 1 thread 0.64 s, 2 threads 0.79 s, 4 threads 1.33 s).
WALK_SAMPLE = 2_000
SLOW_STAT_NS = 40_000


def lstat_all(part: tuple[str, str], stored: Iterable[str], adapter=None) -> dict[str, Stat]:
    """The lstat signature of each of the `stored` files of a subtree (relative paths), by path
    (folder stamps hold only on Linux: "/" separates); a link's target's where the `adapter`
    reads through links (memsync.linkedfiles)."""
    path, prefix = part
    base = path[: len(path) - len(prefix) + 1] if prefix else path + "/"
    found: dict[str, Stat] = {}
    lstat = os.lstat
    follows = getattr(adapter, "follows_links", False)
    for rel in stored:
        st: os.stat_result | None
        try:
            st = lstat(base + rel)
        except OSError:
            continue
        if follows and stat.S_ISLNK(st.st_mode) and (st := target_stat(adapter, base + rel, rel)) is None:
            continue
        found[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return found


def files_on_disk(adapter, excluded: Exclusions, start: str, prefix: str = "",
                  threads: int = 1, denied: set[str] | None = None) -> dict[str, Stat]:
    """Every file below `start` (relative paths begin with `prefix`) that the adapter wants and
    the exclusions leave, with its lstat signature, in no particular order. With `threads`, up
    to that many threads list and stat the subtrees when the stats are slow (WALK_SAMPLE):
    scandir and lstat release the GIL, so waits on the kernel overlap. `denied` gets the folders
    that could not be read (list_folder)."""
    if threads == 1:
        return walk(adapter, excluded, [(start, prefix)], denied)
    found, folders, slow = sample(adapter, excluded, [(start, prefix)], denied)
    if not slow:
        found.update(walk(adapter, excluded, folders, denied))
        return found
    folders = spread(adapter, excluded, folders, found, 4 * threads, denied)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads, thread_name_prefix="memsync-walk") as pool:
        for part in pool.map(lambda f: walk(adapter, excluded, [f], denied), folders):
            found.update(part)
    return found


def sample(adapter, excluded: Exclusions, folders: list[tuple[str, str]],
           denied: set[str] | None = None) -> tuple[dict[str, Stat], list[tuple[str, str]], bool]:
    """List WALK_SAMPLE files depth first: what was found, the folders left (subtrees, none
    inside another), and whether the stats were slow."""
    found: dict[str, Stat] = {}
    began = time.perf_counter_ns()
    while folders and len(found) < WALK_SAMPLE:
        folders += list_folder(adapter, excluded, *folders.pop(), found, denied)
    return found, folders, time.perf_counter_ns() - began >= SLOW_STAT_NS * max(1, len(found))


def spread(adapter, excluded: Exclusions, folders: list[tuple[str, str]],
           found: dict[str, Stat], parts: int, denied: set[str] | None = None) -> list[tuple[str, str]]:
    """List folders breadth first, one at a time, until the subtrees left are enough to share
    out (`parts`); in a shallow tree, until none is left."""
    queue = deque(folders)
    while queue and len(queue) < parts:
        queue.extend(list_folder(adapter, excluded, *queue.popleft(), found, denied))
    return list(queue)


def list_folder(adapter, excluded: Exclusions, folder: str, rel_prefix: str,
                found: dict[str, Stat], denied: set[str] | None = None) -> list[tuple[str, str]]:
    """Put the wanted files of one folder into `found`; return the subfolders to enter. A folder
    that may not be read (no r, or no x to stat its entries) goes into `denied` (its relative
    path + "/"): its files are missing from `found` for a reason the user can fix, not gone."""
    try:
        entries = list(os.scandir(folder))
    except PermissionError:
        if denied is not None:
            denied.add(rel_prefix)
        return []
    except OSError:  # gone, or no longer a folder
        return []
    folders = []
    blocked = False  # listed, but its entries may not be stat'ed (no x): nor entered
    stated = False  # an entry was stat'ed: the folder may be entered
    wants, excludes = adapter.wants, excluded.excludes
    # A file is decided by its name where the adapter allows it (adapters.base: by_name) and
    # the folder is visible: the same answer as wants(rel), without building and scanning the
    # path of every file (a tenth of a 100,000-file walk). Without exclusions, none is asked.
    by_name = adapter.by_name and not hidden(rel_prefix)
    wants_name, filtered = adapter.wants_name, excluded.active
    follows = getattr(adapter, "follows_links", False)
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
            if follows and entry.is_symlink():  # known from the listing: no system call
                if (linked := target_stat(adapter, entry.path, rel)) is None:
                    continue
                st = linked
            else:
                st = entry.stat(follow_symlinks=False)
            stated = True
            found[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        except PermissionError:
            blocked = True
        except OSError:
            continue
    if not stated and not blocked:
        blocked = not _enterable(folder)
    if blocked and denied is not None:
        denied.add(rel_prefix)
    return [] if blocked else folders


def _enterable(folder: str) -> bool:
    """Whether a folder's entries can be reached (x), asked of "." where no file in it was
    stat'ed: one that is empty, or holds only folders and files no adapter wants, is as closed as
    one whose notes cannot be stat'ed, and the watcher says so of it too (memsync.watch.pairing)."""
    try:
        os.lstat(os.path.join(folder, "."))
    except PermissionError:
        return False
    except OSError:  # gone meanwhile: its parent's next listing says so
        pass
    return True


def walk(adapter, excluded: Exclusions, stack: list[tuple[str, str]],
         denied: set[str] | None = None) -> dict[str, Stat]:
    """Every wanted file of the subtrees on `stack` (folder, relative path + "/")."""
    found: dict[str, Stat] = {}
    while stack:
        stack += list_folder(adapter, excluded, *stack.pop(), found, denied)
    return found
