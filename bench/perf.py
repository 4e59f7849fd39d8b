"""Performance: memsync beside the floors measured in the same run, on generated vaults.

    python -m bench.perf [--sizes 1000,10000] [--big] [--quick]

For each size (1k and 10k cards; 100k with --big):
- rebuild throughput and peak RSS (fresh process per run), beside the floor: stdlib sqlite3
  bulk-inserting the same pre-tokenized text into FTS5 in one transaction;
- reconcile with nothing changed, beside the floor of walking and lstat-ing the tree;
- search latency p50/p99 in-process (LexicalSearcher), beside a bare FTS5 query;
- `memsync search` whole-process wall time, beside `python -c pass`, `grep -rl` and `rg -l`.
Every figure is the median of repeated runs. Then the watcher and MCP benches
(bench/watch_latency.py, bench/mcp_startup.py) run if present, and their JSON is folded in.
Results: bench/results/perf.json, and the tables in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import generate, index_size, machine
from .peers import basic_memory
from .perf_tables import render_tables

MEMSYNC = str(Path(sys.executable).with_name("memsync"))
BENCH = Path(__file__).resolve().parent
PEER_SIZE = 1000  # basic-memory indexes a few cards a second: measured at this size only
COMPONENTS = ("watch_latency", "mcp_startup")  # other benches folded into this run, if present
TARGETS = {  # at 10k cards
    "rebuild_vs_floor_max": 3.0, "rebuild_cards_per_s_min": 2000, "reconcile_s_max": 0.5,
    "search_p50_ms_max": 2.0, "search_p99_ms_max": 10.0, "cli_search_ms_max": 80.0,
    "index_ratio_max": index_size.TARGET_RATIO,
}
REBUILD_CHILD = """
import json, sys, time
from memsync.store.index import Index
from memsync.model import Source
from memsync.sync import Indexer
index = Index(sys.argv[1])
work = Indexer(index, [Source("vault", "markdown", sys.argv[2], True)])
start = time.perf_counter()
report = work.rebuild()
print(json.dumps({"seconds": time.perf_counter() - start, "added": report.added}))
"""


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _fresh_db(path: Path) -> None:
    for p in path.parent.glob(path.name + "*"):
        p.unlink()


# --- rebuild ---------------------------------------------------------------------------------


def rebuild_once(db: Path, vault: Path) -> dict:
    """One rebuild in a fresh process: its own timing, and its peak RSS from wait4()."""
    _fresh_db(db)
    proc = subprocess.Popen([sys.executable, "-c", REBUILD_CHILD, str(db), str(vault)],
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"rebuild child failed ({proc.returncode})")
    data = json.loads(out)
    data["peak_rss_mib"] = usage.ru_maxrss / 1024  # Linux reports KiB
    return data


def pretokenized(vault: Path) -> list[tuple[str, str, str]]:
    """The FTS text memsync stores for each card, computed outside any timing."""
    from memsync import cjk
    from memsync.notes import parse

    rows = []
    for path in sorted(vault.rglob("*.md")):
        card = parse(path.read_bytes(), path.relative_to(vault).as_posix())
        rows.append(cjk.index_fields(card.title, card.aliases, card.tags, card.body))
    return rows


def floor_insert(db: Path, rows: list[tuple[str, str, str]]) -> float:
    """The floor: the same text into a bare FTS5 table, one transaction, same durability."""
    _fresh_db(db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(title, tags, body, tokenize = 'unicode61 remove_diacritics 0')")
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO f (title, tags, body) VALUES (?, ?, ?)", rows)
    conn.execute("COMMIT")
    seconds = time.perf_counter() - start
    conn.close()
    return seconds


def prep_costs(vault: Path) -> dict:
    """Where a rebuild's time can go before SQLite: reading, parsing, tokenizing (one pass each)."""
    from memsync import cjk
    from memsync.notes import parse

    paths = sorted(vault.rglob("*.md"))
    start = time.perf_counter()
    blobs = [(p.relative_to(vault).as_posix(), p.read_bytes()) for p in paths]
    read = time.perf_counter() - start
    start = time.perf_counter()
    cards = [parse(data, rel) for rel, data in blobs]
    parsed = time.perf_counter() - start
    start = time.perf_counter()
    for card in cards:
        cjk.index_fields(card.title, card.aliases, card.tags, card.body)
    tokenized = time.perf_counter() - start
    return {"read_s": read, "parse_s": parsed, "tokenize_s": tokenized}


# --- reconcile -------------------------------------------------------------------------------


def walk_floor(vault: Path) -> float:
    """The least any reconcile must do: list every folder and lstat every file."""
    start = time.perf_counter()
    stack = [str(vault)]
    while stack:
        for entry in os.scandir(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                entry.stat(follow_symlinks=False)
    return time.perf_counter() - start


# --- search ----------------------------------------------------------------------------------


def search_queries(cards: list[tuple[str, str]], rng: random.Random, n: int) -> dict[str, list[str]]:
    # Query words drawn evenly from the 2,000 most frequent: some match most cards, some few.
    zh, en = generate.ZH_VOCAB[:2000], generate.EN_VOCAB[:2000]
    valid = [c for i, c in enumerate(cards) if not generate.superseded(i)]
    return {
        "marker": [m for _rel, m in rng.sample(valid, min(n, len(valid)))],
        "zh-word": [rng.choice(zh) for _ in range(n)],
        "en-word": [rng.choice(en) for _ in range(n)],
        "two-words": [f"{rng.choice(zh)} {rng.choice(en)}" for _ in range(n)],
        "question": ["".join(rng.choices(zh, k=3)) + " " + " ".join(rng.choices(en, k=2)) for _ in range(n)],
    }


def search_latency(db: Path, floor_db: Path, queries: dict[str, list[str]], rounds: int,
                   expected: dict[str, str]) -> dict:
    from memsync import cjk
    from memsync.search import query
    from memsync.search.lexical import LexicalSearcher, Query
    from memsync.store.index import Index

    index = Index(db)
    searcher = LexicalSearcher(index)
    floor = sqlite3.connect(floor_db)
    flat = [(kind, q) for kind, qs in queries.items() for q in qs]
    per_round, floor_round, by_kind = [], [], {k: [] for k in queries}
    wrong = 0
    for r in range(rounds):
        times, ftimes = [], []
        for kind, text in flat:
            start = time.perf_counter()
            result = searcher.search(Query(text, 10))
            elapsed = time.perf_counter() - start
            times.append(elapsed)
            by_kind[kind].append(elapsed)
            if r == 0 and kind == "marker" and [h.path for h in result.hits] != [expected[text]]:
                wrong += 1
            expr = " OR ".join(query.quote(t) for t in dict.fromkeys(cjk.tokens(text)))
            start = time.perf_counter()
            floor.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 10", (expr,)).fetchall()
            ftimes.append(time.perf_counter() - start)
        per_round.append((percentile(times, 0.5), percentile(times, 0.99)))
        floor_round.append((percentile(ftimes, 0.5), percentile(ftimes, 0.99)))
    index.close()
    floor.close()
    return {
        "queries": len(flat), "rounds": rounds,
        "p50_ms": 1000 * median([p for p, _ in per_round]),
        "p99_ms": 1000 * median([p for _, p in per_round]),
        "floor_p50_ms": 1000 * median([p for p, _ in floor_round]),
        "floor_p99_ms": 1000 * median([p for _, p in floor_round]),
        "by_kind_p50_ms": {k: 1000 * percentile(v, 0.5) for k, v in by_kind.items()},
        "marker_wrong": wrong,
    }


def wall(cmd: list[str], env: dict | None = None, ok=(0,)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{cmd[:3]} exited {proc.returncode}")
    return elapsed


def cli_wall(home: Path, db: Path, vault: Path, markers: list[str], runs: int,
             others: dict[str, str] | None = None) -> dict:
    """Medians of whole-process times; `others` adds more memsync commands (label -> path), such
    as one installed from the wheel, timed in the same rounds."""
    env = {**os.environ, "MEMSYNC_HOME": str(home), "MEMSYNC_DB": str(db), "MEMSYNC_VAULT": str(vault)}
    timings: dict[str, list[float]] = {}
    rg = shutil.which("rg")
    for n in range(runs):
        marker = markers[n % len(markers)]
        # Variants take turns within a round, so background noise hits them alike.
        timings.setdefault("memsync_search", []).append(wall([MEMSYNC, "search", marker, "--json"], env))
        for label, command in (others or {}).items():
            timings.setdefault(label, []).append(wall([command, "search", marker, "--json"], env))
        timings.setdefault("python_startup", []).append(wall([sys.executable, "-c", "pass"]))
        timings.setdefault("grep_r", []).append(wall(["grep", "-rl", "--include=*.md", marker, str(vault)]))
        if rg:
            timings.setdefault("rg", []).append(wall([rg, "-l", marker, str(vault)]))
    out = {name: 1000 * median(values) for name, values in timings.items()}
    out["runs"] = runs
    if not rg:
        out["rg"] = None
        out["rg_note"] = "ripgrep not installed (apt-get install ripgrep)"
    return out


# --- one size --------------------------------------------------------------------------------


def measure_size(n: int, work: Path, quick: bool, with_peers: bool = True) -> dict:
    vault = work / f"vault-{n}"
    started = time.perf_counter()
    cards = generate.generate_vault(vault, n, seed=0)
    result: dict = {"cards": n, "generate_s": time.perf_counter() - started}
    repeats = 1 if n >= 100_000 else (3 if quick or n >= 10_000 else 5)
    db = work / f"m-{n}.db"
    floor_db = work / f"floor-{n}.db"
    rows = pretokenized(vault)
    builds, floors = [], []
    for _ in range(repeats):  # alternate, so drift on a noisy machine hits both alike
        builds.append(rebuild_once(db, vault))
        floors.append(floor_insert(floor_db, rows))
    seconds = median([b["seconds"] for b in builds])
    floor_s = median(floors)
    result["rebuild"] = {
        "runs": repeats, "seconds": seconds, "cards_per_s": n / seconds,
        "peak_rss_mib": median([b["peak_rss_mib"] for b in builds]),
        "floor_seconds": floor_s, "floor_cards_per_s": n / floor_s, "vs_floor": seconds / floor_s,
        "prep": prep_costs(vault),
    }
    print(f"  {n}: rebuild {seconds:.2f}s ({n / seconds:.0f} cards/s), floor {floor_s:.2f}s", file=sys.stderr)
    notes, stored = index_size.note_bytes(db), index_size.index_bytes(db)
    result["vault_mib"] = notes / 2**20
    result["index"] = {"note_bytes": notes, "index_bytes": stored, "ratio": stored / notes}

    from memsync.model import Source
    from memsync.store.index import Index
    from memsync.sync import Indexer

    index = Index(db)
    work_ix = Indexer(index, [Source("vault", "markdown", str(vault), True)])
    work_ix.reconcile()  # warm the page cache and settle racily-clean files
    recon = []
    walk = []
    for _ in range(max(repeats, 5)):
        recon.append(work_ix.reconcile().seconds)
        walk.append(walk_floor(vault))
    index.close()
    result["reconcile"] = {"runs": len(recon), "seconds": median(recon), "floor_walk_seconds": median(walk),
                           "vs_floor": median(recon) / median(walk)}
    print(f"  {n}: reconcile {median(recon):.3f}s", file=sys.stderr)

    rng = random.Random(n)
    queries = search_queries(cards, rng, 40 if quick else 100)
    result["search"] = search_latency(db, floor_db, queries, 3, dict((m, rel) for rel, m in cards))
    print(f"  {n}: search p50 {result['search']['p50_ms']:.2f} ms p99 {result['search']['p99_ms']:.2f} ms",
          file=sys.stderr)
    result["cli"] = cli_wall(work / f"home-{n}", db, vault, queries["marker"], 9 if quick else 21)
    print(f"  {n}: memsync search {result['cli']['memsync_search']:.0f} ms", file=sys.stderr)
    if n == PEER_SIZE and with_peers and basic_memory.available():
        print(f"  {n}: basic-memory (slow: minutes)", file=sys.stderr)
        result["basic_memory"] = basic_memory.measure(vault, work, queries["marker"], n)
    shutil.rmtree(vault)
    return result


def measure_start(n: int, work: Path, runs: int, others: dict[str, str]) -> dict:
    """`memsync search` whole-process time alone (`--start-only`): a vault, one rebuild, then
    rounds of memsync beside `python -c pass`, `grep -rl` and `rg -l`."""
    vault = work / f"vault-{n}"
    cards = generate.generate_vault(vault, n, seed=0)
    db = work / f"m-{n}.db"
    rebuild_once(db, vault)
    markers = search_queries(cards, random.Random(n), 40)["marker"]
    out = cli_wall(work / f"home-{n}", db, vault, markers, runs, others)
    shutil.rmtree(vault)
    return out


# --- components and peers --------------------------------------------------------------------


def run_components(skip: bool) -> dict:
    """Run the sibling benches that exist as their own processes; fold in their JSON."""
    out = {}
    for name in COMPONENTS:
        if not (BENCH / f"{name}.py").exists():
            out[name] = {"skipped": f"bench/{name}.py not present"}
            continue
        if skip:
            out[name] = {"skipped": "--no-components"}
            continue
        print(f"running bench.{name}", file=sys.stderr)
        proc = subprocess.run([sys.executable, "-m", f"bench.{name}"], cwd=BENCH.parent,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        result_file = machine.RESULTS / f"{name}.json"
        if proc.returncode != 0:
            out[name] = {"failed": proc.returncode, "stderr": proc.stderr[-2000:]}
        elif result_file.exists():
            out[name] = json.loads(result_file.read_text(encoding="utf-8"))
        else:
            out[name] = {"failed": "no result file", "stderr": proc.stderr[-2000:]}
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


def verdicts(data: dict) -> dict:
    size = data["sizes"].get("10000")
    if not size:
        return {}
    t = TARGETS
    return {
        "rebuild_vs_floor": size["rebuild"]["vs_floor"] <= t["rebuild_vs_floor_max"],
        "rebuild_cards_per_s": size["rebuild"]["cards_per_s"] >= t["rebuild_cards_per_s_min"],
        "reconcile": size["reconcile"]["seconds"] <= t["reconcile_s_max"],
        "search_p50": size["search"]["p50_ms"] <= t["search_p50_ms_max"],
        "search_p99": size["search"]["p99_ms"] <= t["search_p99_ms_max"],
        "cli_search": size["cli"]["memsync_search"] <= t["cli_search_ms_max"],
        **({"index_ratio": size["index"]["ratio"] <= t["index_ratio_max"]} if "index" in size else {}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated card counts")
    parser.add_argument("--big", action="store_true", help="add a 100,000-card vault (slow)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and queries (smoke run)")
    parser.add_argument("--no-components", action="store_true", help="skip the watcher and MCP benches")
    parser.add_argument("--no-peers", action="store_true", help="skip basic-memory even if set up")
    parser.add_argument("--out", default="perf", help="result name under bench/results/")
    parser.add_argument("--start-only", action="store_true",
                        help="only the whole-process `memsync search` time, with more runs")
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
    data = {**machine.info(), "quick": args.quick, "targets": TARGETS, "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="memsync-perf-") as tmp:
        for n in sizes:
            data["sizes"][str(n)] = measure_size(n, Path(tmp), args.quick, not args.no_peers)
    data["components"] = run_components(args.no_components)
    data["peers"] = peers(data, not args.no_peers)
    data["verdicts"] = verdicts(data)
    path = machine.save(args.out, data)
    from . import report

    report.write()
    print("\n".join(render_tables(data)))
    print(f"results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
