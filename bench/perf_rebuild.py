"""The perf bench's rebuilds: each in a fresh process (with every usable core, with one reader,
the writer alone, over the index already there), what bounds the speed-up over one reader, and
what wikilinks add to a load (bench.perf runs them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from statistics import median

from . import generate

REBUILD_CHILD = """
import json, resource, sys, time
from memsync.store.index import Index
from memsync.model import Source
from memsync.sync import Indexer
index = Index(sys.argv[1])
work = Indexer(index, [Source("vault", "markdown", sys.argv[2], True)],
               workers=int(sys.argv[3]) if sys.argv[3] != "auto" else None)
batches = []  # when each batch of files was written: the load's span inside the rebuild
start, cpu = time.perf_counter(), time.process_time()
report = work.rebuild(progress=lambda done, total: batches.append(time.perf_counter() - start))
seconds = time.perf_counter() - start
# VmHWM, not RUSAGE_SELF: Linux carries ru_maxrss across exec, so a child of the bench
# (which holds a pre-tokenized copy of the vault) would report the bench's own size.
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
readers = resource.getrusage(resource.RUSAGE_CHILDREN)  # forked after the exec
print(json.dumps({"seconds": seconds, "added": report.added,
                  "readers": report.readers, "writer_rss_mib": hwm / 1024,
                  "peak_rss_mib": max(hwm, readers.ru_maxrss) / 1024, "batches": batches,
                  "cpu_s": time.process_time() - cpu + readers.ru_utime + readers.ru_stime}))
"""


# Batches a load must span for its rate to say where it began: at 1,000 cards (two batches and
# the end) the estimate put the bound of run Q below the speed-up it had measured.
SPAN_BATCHES = 5


def serial_part(run: dict) -> float | None:
    """Seconds of a rebuild spent outside its load, where one core works however many there are:
    before it (the survey, an estimate: the first batch's time less one batch's share of the
    load) and after it (secondary indexes, FTS5's flush and merge, the commit)."""
    times = run.get("batches") or []
    if len(times) < SPAN_BATCHES:
        return None
    first, last = times[0], times[-1]
    return max(0.0, first - (last - first) / (len(times) - 1)) + (run["seconds"] - last)


def amdahl(serial_fraction: float, cores: int) -> float:
    """The most a rebuild whose serial_fraction runs on one core can gain on `cores`."""
    return 1 / (serial_fraction + (1 - serial_fraction) / cores)


# The writer's own share of a rebuild: every file is read and parsed (in this process) before
# the first row is written, and the clock starts there. However many cores read, a rebuild
# cannot end sooner than this after its readers begin (the survey before them excluded).
WRITER_CHILD = """
import json, sys, time
from memsync.model import Source
from memsync.store.index import Index
from memsync.sync import Indexer

class ReadFirst(Indexer):
    def _looks(self, source, chunks, report):
        read = [self._look_here(source, chunk) for chunk in chunks]
        self.writing_from = time.perf_counter()
        yield from read

work = ReadFirst(Index(sys.argv[1]), [Source("vault", "markdown", sys.argv[2], True)], workers=1)
work.rebuild()
print(json.dumps({"seconds": time.perf_counter() - work.writing_from}))
"""


LOAD_CHILD = """
import json, sys, time
from memsync.store.index import Index
from memsync.model import Source
from memsync.sync import Indexer
work = Indexer(Index(sys.argv[1]), [Source("vault", "markdown", sys.argv[2], True)])
start = time.perf_counter()
report = work.rebuild() if sys.argv[3] == "rebuild" else work.reconcile()
print(json.dumps({"seconds": time.perf_counter() - start, "added": report.added}))
"""
LINKS = 3  # wikilinks a note in the linked vault (the Obsidian Help dev vaults have about 11)


def fresh_db(path: Path) -> None:
    """No index at `path`: the file and its WAL and shared-memory files removed."""
    for p in path.parent.glob(path.name + "*"):
        p.unlink()


def speedup_bound(serial: list[dict], builds: list[dict], cores: int) -> dict:
    """What bounds the speed-up over one reader, from the same runs: the share of one reader's
    rebuild outside its load (serial_part) and the most that allows on these cores (Amdahl), and
    the CPU a parallel rebuild spends, writer and readers, against one reader's (pickling the
    looks across, running three processes on two cores)."""
    parts = [p for p in map(serial_part, serial) if p is not None]
    if not parts or "cpu_s" not in serial[0]:
        return {}
    fraction = median([p / run["seconds"] for p, run in zip(parts, serial)])
    used = max(1, min(cores, builds[-1]["readers"] or 1))
    found = {"one_reader_serial_s": median(parts), "one_reader_serial_fraction": fraction,
             "speedup_bound": amdahl(fraction, used),
             "parallel_cpu_vs_one_reader": median([b["cpu_s"] for b in builds]) / median(
                 [r["cpu_s"] for r in serial])}
    least = [busy_cores_seconds(b, used) for b in builds]
    if all(t is not None for t in least):
        found["work_bound"] = median([r["seconds"] for r in serial]) / median(least)
    return found


def busy_cores_seconds(build: dict, cores: int) -> float | None:
    """The least a parallel rebuild could take doing the work it did: its serial part on one
    core, the rest of its CPU (writer and readers) spread over `cores` kept busy throughout.
    Unlike Amdahl's bound, this counts what running in parallel costs: pickling the looks
    across, the processes taking turns."""
    part = serial_part(build)
    return None if part is None else part + max(0.0, build["cpu_s"] - part) / cores


def speedup_spread(serial: list[dict], builds: list[dict]) -> list[float]:
    """The lowest and the highest speed-up of single rounds: each round's one-reader rebuild
    against the parallel one of the same round, run minutes apart at most. The median alone
    hides how far a machine's own drift moves the figure from run to run."""
    ratios = [one["seconds"] / parallel["seconds"] for one, parallel in zip(serial, builds)]
    return [min(ratios), max(ratios)] if ratios else []


def rebuild_once(db: Path, vault: Path, workers: str = "auto", fresh: bool = True) -> dict:
    """One rebuild in a fresh process: its own timing, the writer's peak RSS, and the peak of
    the largest process of the run (the writer or one of its readers), read in the child.
    Into a new file, or (`fresh` False) over the index `db` holds, as `memsync index --rebuild`
    mostly runs."""
    if fresh:
        fresh_db(db)
    proc = subprocess.Popen([sys.executable, "-c", REBUILD_CHILD, str(db), str(vault), workers],
                            stdout=subprocess.PIPE, text=True)
    with proc.stdout:
        out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"rebuild child failed ({proc.returncode})")
    data = json.loads(out)
    # wait4's figure counts what the bench held when it started the child (see REBUILD_CHILD)
    data["wait4_rss_mib"] = usage.ru_maxrss / 1024  # Linux reports KiB
    return data


def _child_seconds(child: str, *args: object) -> float:
    """The seconds a child script (LOAD_CHILD, WRITER_CHILD) reports, run in a fresh process."""
    out = subprocess.run([sys.executable, "-c", child, *map(str, args)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["seconds"]


def writer_alone(db: Path, vault: Path) -> float:
    """The writer's share of one rebuild into a new index (WRITER_CHILD)."""
    fresh_db(db)
    return _child_seconds(WRITER_CHILD, db, vault)


def load_once(db: Path, vault: Path, how: str) -> float:
    """A `reconcile` or `rebuild` of `vault` into `db` as it is, in a fresh process: seconds."""
    return _child_seconds(LOAD_CHILD, db, vault, how)


def measure_links(n: int, work: Path, vault: Path, repeats: int) -> dict:
    """What wikilinks cost an index: the same cards with and without LINKS links each, indexed
    first into a new index (a first `memsync index`), then rebuilt over it, then rebuilt into
    a new index. A linked card's links field is the anchor text of the links pointing at it."""
    linked = work / f"vault-{n}-linked"
    generate.generate_vault(linked, n, seed=0, links=LINKS)
    db = work / f"links-{n}.db"
    runs: dict[str, list[float]] = {}
    for _ in range(repeats):  # alternate, as the rebuild does
        for name, folder in (("plain", vault), ("linked", linked)):
            fresh_db(db)
            runs.setdefault(f"{name}_first_index", []).append(load_once(db, folder, "reconcile"))
            runs.setdefault(f"{name}_rebuild_over_it", []).append(load_once(db, folder, "rebuild"))
            fresh_db(db)
            runs.setdefault(f"{name}_rebuild_new", []).append(load_once(db, folder, "rebuild"))
    shutil.rmtree(linked)
    fresh_db(db)
    result: dict = {"links_per_note": LINKS, "runs": repeats, **{k: median(v) for k, v in runs.items()}}
    for figure in ("first_index", "rebuild_over_it", "rebuild_new"):
        result[f"{figure}_vs_plain"] = result[f"linked_{figure}"] / result[f"plain_{figure}"]
    return result
