"""Performance: memsync beside the floors measured in the same run, on generated vaults.

    python -m bench.perf [--sizes 1000,10000] [--big] [--quick]

For each size (1k and 10k cards; 100k with --big):
- rebuild throughput and peak RSS (fresh process per run), with every usable core and with
  one reader (the speed-up), beside two floors: the raw floor (stdlib sqlite3 reading each file
  and inserting its name and text as they are into an FTS5 `unicode61` table, one transaction:
  no parsing or tokenizing in Python), and the pre-tokenized floor (the same text memsync
  stores, bulk-inserted into FTS5); and the writer's own share (the files read beforehand),
  the least a rebuild can take on any number of cores;
- reconcile with nothing changed, beside the floor of walking and lstat-ing the tree;
- search latency p50/p99 in-process (LexicalSearcher), beside a bare FTS5 query;
- `memsync search` whole-process wall time, beside `grep -rl`, `rg -l` and what any Python CLI
  pays before its own code runs: `python -c pass` with the interpreter memsync runs on, the same
  in a venv with nothing installed, and `import click`;
- `memsync brief` whole-process wall time (a project of ~500 cards, 200 cards read, ~700 cards
  changed since the last brief), in the same rounds.
Every figure is the median of repeated runs. Then the watcher and MCP benches
(bench/watch_latency.py, bench/mcp_startup.py) run if present, and their JSON is folded in.
With --big also: the watcher over 100,000 cards beside its 10,000-card figures, embedding
docs/s on one core and on every core (memsync[semantic]), and a projection to 1,000,000
cards from the growth measured between 10k and 100k.
Results: bench/results/perf.json, and the tables in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from . import busy, generate, index_size, machine
from .machine import load_average, usable_cores
from .peers import basic_memory
from .perf_commands import cli_wall, measure_start
from .perf_embedding import embedding_cores
from .perf_floors import floor_insert, prep_costs, pretokenized, raw_floor, walk_floor
from .perf_rebuild import (
    LINKS,
    fresh_db,
    load_once,
    measure_links,
    rebuild_once,
    speedup_bound,
    speedup_spread,
    writer_alone,
)
from .perf_search import search_latency, search_queries
from .perf_tables import render_tables
from .perf_verdicts import TARGETS, TARGETS_100K, projection, verdicts, verdicts_100k

BENCH = Path(__file__).resolve().parent
PEER_SIZE = 1000  # basic-memory indexes a few cards a second: measured at this size only
COMPONENTS = ("watch_latency", "mcp_startup")  # other benches folded into this run, if present


# --- one size --------------------------------------------------------------------------------


def measure_size(n: int, work: Path, quick: bool, with_peers: bool = True,
                 keep_vault: bool = False) -> dict:
    vault = work / f"vault-{n}"
    started = time.perf_counter()
    cards = generate.generate_vault(vault, n, seed=0)
    result: dict = {"cards": n, "generate_s": time.perf_counter() - started,
                    "load_average_at_start": load_average()}
    # At 100,000 cards one rebuild of each kind swung the speed-up over one reader from 1.55 to
    # 1.88 between two runs of the same code: three, alternating, for a median. At 10,000 cards
    # three still gave 1.25 in one run and 1.62 in the next: five there (a round is ~15 s).
    repeats = 3 if quick or n > 10_000 else 5
    db = work / f"m-{n}.db"
    floor_db = work / f"floor-{n}.db"
    rows = pretokenized(vault)
    first_db = work / f"first-{n}.db"
    builds, serial, floors, raws, writer, over, first = [], [], [], [], [], [], []
    for _ in range(repeats):  # alternate, so drift on a noisy machine hits all alike
        serial.append(rebuild_once(db, vault, "1"))
        over.append(rebuild_once(db, vault, fresh=False))  # over the index just made
        writer.append(writer_alone(db, vault))
        fresh_db(first_db)  # a person's first `memsync index` (or watcher start)
        first.append(load_once(first_db, vault, "reconcile"))
        raws.append(raw_floor(floor_db, vault))
        floors.append(floor_insert(floor_db, rows))
        builds.append(rebuild_once(db, vault))  # last: the index the rest of the run uses
    seconds = median([b["seconds"] for b in builds])
    serial_s = median([b["seconds"] for b in serial])
    floor_s, raw_s, writer_s, over_s = median(floors), median(raws), median(writer), median(
        [b["seconds"] for b in over])
    first_s = median(first)
    result["rebuild"] = {
        "runs": repeats, "seconds": seconds, "cards_per_s": n / seconds,
        "readers": builds[-1]["readers"], "usable_cores": usable_cores(),
        "peak_rss_mib": median([b["peak_rss_mib"] for b in builds]),
        "writer_peak_rss_mib": median([b["writer_rss_mib"] for b in builds]),
        "one_reader_seconds": serial_s, "one_reader_peak_rss_mib": median([b["peak_rss_mib"] for b in serial]),
        "speedup": serial_s / seconds, "speedup_range": speedup_spread(serial, builds),
        **speedup_bound(serial, builds, usable_cores()),
        "raw_floor_seconds": raw_s, "raw_floor_cards_per_s": n / raw_s, "vs_raw_floor": seconds / raw_s,
        "writer_alone_seconds": writer_s, "writer_alone_vs_raw_floor": writer_s / raw_s,
        "over_index_seconds": over_s, "over_index_vs_raw_floor": over_s / raw_s,
        "first_index_seconds": first_s, "first_index_vs_rebuild": first_s / seconds,
        "floor_seconds": floor_s, "floor_cards_per_s": n / floor_s, "vs_floor": seconds / floor_s,
        "prep": prep_costs(vault),
    }
    print(f"  {n}: rebuild {seconds:.2f}s ({n / seconds:.0f} cards/s, {builds[-1]['readers']} readers), "
          f"one reader {serial_s:.2f}s, over the old index {over_s:.2f}s, first index {first_s:.2f}s, "
          f"the writer alone {writer_s:.2f}s, "
          f"raw floor {raw_s:.2f}s, pre-tokenized floor {floor_s:.2f}s",
          file=sys.stderr)
    if n == 10_000 and not quick:  # at 100,000 a round would take minutes
        busy_db = work / f"busy-{n}.db"
        result["rebuild"]["busy"] = loaded = busy.measure(
            lambda workers: rebuild_once(busy_db, vault, workers), 3)
        fresh_db(busy_db)
        print(f"  {n}: with a busy loop a core, rebuild {loaded['seconds']:.2f}s, "
              f"one reader {loaded['one_reader_seconds']:.2f}s", file=sys.stderr)
    notes, stored = index_size.note_bytes(db), index_size.index_bytes(db)
    result["vault_mib"] = notes / 2**20
    result["index"] = {"note_bytes": notes, "index_bytes": stored, "ratio": stored / notes}

    from memsync.model import Source
    from memsync.store.index import Index
    from memsync.sync import Indexer

    fresh_db(first_db)
    index = Index(db)
    work_ix = Indexer(index, [Source("vault", "markdown", str(vault), True)])
    # warm the page cache, settle racily-clean files and stamp the folders (memsync.folders)
    stamping = work_ix.reconcile().seconds
    recon = []
    walk = []
    for _ in range(max(repeats, 5)):
        recon.append(work_ix.reconcile().seconds)
        walk.append(walk_floor(vault))
    index.close()
    result["reconcile"] = {"runs": len(recon), "seconds": median(recon), "floor_walk_seconds": median(walk),
                           "vs_floor": median(recon) / median(walk), "stamping_seconds": stamping}
    print(f"  {n}: reconcile {median(recon):.3f}s", file=sys.stderr)

    if n == 10_000 and not quick:
        result["links"] = measure_links(n, work, vault, 3)
        print(f"  {n}: with {LINKS} links a note, first index {result['links']['linked_first_index']:.2f}s "
              f"({result['links']['first_index_vs_plain']:.2f}x without), rebuild "
              f"{result['links']['linked_rebuild_over_it']:.2f}s ({result['links']['rebuild_over_it_vs_plain']:.2f}x)",
              file=sys.stderr)

    rng = random.Random(n)
    queries = search_queries(cards, rng, 40 if quick else 100)
    result["search"] = search_latency(db, floor_db, queries, 3, dict((m, rel) for rel, m in cards))
    print(f"  {n}: search p50 {result['search']['p50_ms']:.2f} ms p99 {result['search']['p99_ms']:.2f} ms",
          file=sys.stderr)
    result["cli"] = cli_wall(work / f"home-{n}", db, vault, queries["marker"], 9 if quick else 21)
    print(f"  {n}: memsync search {result['cli']['memsync_search']:.0f} ms, "
          f"memsync brief {result['cli']['memsync_brief']:.0f} ms", file=sys.stderr)
    if n == PEER_SIZE and with_peers and basic_memory.available():
        print(f"  {n}: basic-memory (slow: minutes)", file=sys.stderr)
        result["basic_memory"] = basic_memory.measure(vault, work, queries["marker"], n)
    if not keep_vault:
        shutil.rmtree(vault)
    return result


# --- components and peers --------------------------------------------------------------------


def run_components(skip: bool, big: bool = False) -> dict:
    """Run the sibling benches that exist as their own processes; fold in their JSON. With
    `big`, the watcher also over 100,000 cards (fewer saves and a shorter idle sample)."""
    out = {}
    runs = [(name, name, []) for name in COMPONENTS]
    if big:
        runs.append(("watch_latency_100k", "watch_latency",
                     ["--cards", "100000", "--saves", "60", "--idle", "30",
                      "--out", "watch_latency_100k"]))
    for label, name, args in runs:
        if not (BENCH / f"{name}.py").exists():
            out[label] = {"skipped": f"bench/{name}.py not present"}
            continue
        if skip:
            out[label] = {"skipped": "--no-components"}
            continue
        print(f"running bench.{name} {' '.join(args)}", file=sys.stderr)
        proc = subprocess.run([sys.executable, "-m", f"bench.{name}", *args], cwd=BENCH.parent,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        result_file = machine.RESULTS / f"{label}.json"
        if proc.returncode != 0:
            out[label] = {"failed": proc.returncode, "stderr": proc.stderr[-2000:]}
        elif result_file.exists():
            out[label] = json.loads(result_file.read_text(encoding="utf-8"))
        else:
            out[label] = {"failed": "no result file", "stderr": proc.stderr[-2000:]}
    return out


def peers(data: dict, with_peers: bool) -> dict:
    size = data["sizes"].get(str(PEER_SIZE), {})
    if "basic_memory" in size:
        return {"basic-memory": size["basic_memory"]}
    if not with_peers:
        return {"basic-memory": {"skipped": "--no-peers"}}
    if not basic_memory.available():
        return {"basic-memory": {"skipped": "not set up: run bench/peers/setup_basic_memory.sh "
                                            "(it needs Python >= 3.12)"}}
    return {"basic-memory": {"skipped": f"measured only at {PEER_SIZE} cards, which this run did not include"}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated card counts")
    parser.add_argument("--big", action="store_true",
                        help="add a 100,000-card vault, the watcher over it, embedding on every "
                             "core and the 1,000,000-card projection (slow: the whole issue-22 run)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and queries (smoke run)")
    parser.add_argument("--no-components", action="store_true", help="skip the watcher and MCP benches")
    parser.add_argument("--no-peers", action="store_true", help="skip basic-memory even if set up")
    parser.add_argument("--out", default="perf", help="result name under bench/results/")
    parser.add_argument("--start-only", action="store_true",
                        help="only the whole-process `memsync search` time, with more runs")
    parser.add_argument("--embedding-only", action="store_true",
                        help="only embedding on one core and on every core (results/embedding.json)")
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=PATH",
                        help="with --start-only: time another memsync command too (e.g. a wheel install)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s] + ([100_000] if args.big else [])
    if args.start_only:
        others = dict(item.split("=", 1) for item in args.also)
        with tempfile.TemporaryDirectory(prefix="memsync-start-") as tmp:
            start = {str(n): measure_start(n, Path(tmp), 9 if args.quick else 31, others) for n in sizes}
        path = machine.save("start", {**machine.info(), "sizes": start})
        for n, figures in start.items():
            print(f"{n} cards: " + ", ".join(f"{k} {v:.1f} ms" if isinstance(v, float) else f"{k} {v}"
                                             for k, v in figures.items()))
        print(f"results: {path}", file=sys.stderr)
        return 0
    if args.embedding_only:
        with tempfile.TemporaryDirectory(prefix="memsync-embed-") as tmp:
            vault = Path(tmp) / "vault"
            generate.generate_vault(vault, 1000, seed=0)
            path = machine.save("embedding", {**machine.info(),
                                              "embedding": embedding_cores(vault, 1 if args.quick else 5)})
        from . import report

        report.write()
        print(f"results: {path}", file=sys.stderr)
        return 0
    data = {**machine.info(), "quick": args.quick, "targets": TARGETS, "sizes": {},
            "load_average_at_start": load_average()}
    if args.big:
        data["targets_100k"] = TARGETS_100K
    with tempfile.TemporaryDirectory(prefix="memsync-perf-") as tmp:
        for n in sizes:
            keep = args.big and n == 10_000  # its vault feeds the embedding runs
            data["sizes"][str(n)] = measure_size(n, Path(tmp), args.quick, not args.no_peers, keep)
        if args.big:
            vault = Path(tmp) / "vault-10000"
            if not vault.exists():
                generate.generate_vault(vault, 1000, seed=0)
            data["embedding"] = embedding_cores(vault, 1 if args.quick else 3)
    data["projection"] = projection(data["sizes"])
    data["components"] = run_components(args.no_components, args.big)
    data["peers"] = peers(data, not args.no_peers)
    data["verdicts"] = verdicts(data)
    data["verdicts_100k"] = verdicts_100k(data)
    data["load_average_at_end"] = load_average()
    path = machine.save(args.out, data)
    from . import report

    report.write()
    print("\n".join(render_tables(data)))
    print(f"results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
