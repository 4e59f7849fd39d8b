"""Retrieval quality: memsync beside the best plain FTS5 variant, on real data and on the golden set.

    python -m bench.retrieval                       # every set; writes results/retrieval.json + tables
    python -m bench.retrieval --sets obsidian       # the five Obsidian Help vaults only
    python -m bench.retrieval --sets scifact,cmrc-sentence --quick
    python -m bench.retrieval --sets obsidian --losses   # + query-by-query against the best floor
    python -m bench.retrieval --system semantic=pkg.mod:factory   # + another column
    python -m bench.retrieval --grid                # also the weights x tier-policy grid

Sets (bench/evalsets.py): SciFact train, CMRC 2018 trial at passage and sentence level, the
Obsidian Help development vaults (zh-TW, ko, de, fr, es: MEMSYNC_OBSIDIAN_SETS=/folder/of/sets, or
MEMSYNC_OBSIDIAN_GIT=/git/dir/of/obsidian-help to build them, see bench/obsidian.py), LoCoMo as
session and turn cards (MEMSYNC_LOCOMO_SETS or MEMSYNC_LOCOMO_GIT, see bench/locomo.py; each
question searched in its own conversation, and `short_pages` counts the questions whose page held
fewer than 10 hits while plain OR matched more cards: it must be 0), the
hand-written Japanese vault `ja-notes` (bench/japanese/, bench/ja_notes.py), and the golden
memory-style vault in bench/golden/. A set with query kinds reports memsync and the best floor
by kind. memsync indexes each vault's files with its own
Indexer; the floor (bench/floor.py: eight plain FTS5 variants) is measured in the same run, and
each set names its best variant. Golden-set targets: keyword first hit 100 %, every keyword hit holding the keyword,
pairs held >= 95 %.
A run of only some sets, a --quick one, or one that had to skip a set (data not found) is saved as
results/retrieval-partial.json and leaves RESULTS.md and docs/benchmarks.md alone.

Scoring another ranking from Python (what the relevance work calls for each candidate):

    from bench.retrieval import score_all, summary
    from memsync.search.lexical import LexicalSearcher
    weights = memsync.search.ranking.WEIGHTS._replace(title=2.0)
    results = score_all(lambda index: LexicalSearcher(index, weights=weights), sets="obsidian,public")
    print(summary(results))

`score_all(factory, sets=..., quick=..., systems=...)` builds a fresh memsync index of every set
with the code as it is now, hands it to `factory(index) -> Searcher`, and returns per set the
system's nDCG@10 / R@10 / R@100 / MRR@10, every floor variant and the best one. `systems` scores
several searchers side by side ({"memsync": f, "semantic": g}); `losses=True` adds, per set, the
first system against the best floor query by query (`against_floor`). Prepared sets are kept for the
life of the process, and the floor's figures on disk (MEMSYNC_BENCH_CACHE, default a temp folder,
keyed by the documents, queries, floor code and SQLite version), so a repeated call costs only
memsync's own work. A full run measures the floor afresh.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

from memsync.search.lexical import LexicalSearcher, Searcher
from memsync.search.ranking import WEIGHTS
from memsync.store.index import Index

from . import engines, evalsets, floor, machine, metrics
from .golden_set import SearcherFactory, run_golden

DEEP = 100  # figures go to recall@100
QUICK_QUERIES = 150
# (title, exact_heading) of memsync.search.ranking.Weights, each with the weak-token share of
# memsync.search.lexical (1: no token is weak): what the shipped values were chosen among.
GRID_WEIGHTS = [(3.0, 2.0, 0.5), (2.0, 2.0, 0.5), (4.0, 2.0, 0.5), (3.0, 3.0, 0.5), (3.0, 2.0, 0.25),
                (3.0, 2.0, 1.0)]


def shipped(index: Index) -> Searcher:
    """memsync's searcher with the settings it ships with."""
    return LexicalSearcher(index)


# --- one real set -----------------------------------------------------------------------------

def _by_kind(s: evalsets.EvalSet, runs: list) -> dict[str, dict]:
    groups: dict[str, list] = {}
    for kind, run in zip(s.kinds, runs):
        groups.setdefault(kind, []).append(run)
    return {kind: metrics.summarize(r) for kind, r in sorted(groups.items())}


def floor_runs(s: evalsets.EvalSet, variant: str) -> list:
    """The floor variant's ranked list of every query, paired with its judgements (each query
    among the documents of its scope, where the set has scopes)."""
    tokenizer, mode = variant.split()
    runs: list = [None] * len(s.queries)
    for _, docs, positions in s.scoped():
        table = floor.Floor(docs, tokenizer)
        try:
            for i in positions:
                text, rel = s.queries[i]
                runs[i] = (table.ranked(text, DEEP, mode), rel)
        finally:
            table.close()
    return runs


def floor_scores(s: evalsets.EvalSet, fresh: bool) -> tuple[dict[str, dict], bool]:
    """Every floor variant's figures (floor.score_cached), scope by scope where the set has
    scopes, merged as means over all queries."""
    parts = [(floor.score_cached(docs, [s.queries[i] for i in positions], DEEP, fresh), len(positions))
             for _, docs, positions in s.scoped()]
    if len(parts) == 1:
        return parts[0][0]
    total = sum(n for _, n in parts)
    merged = {variant: {key: sum(figs[variant][key] * n for (figs, _), n in parts) / total
                        for key in parts[0][0][0][variant] if key != "queries"} | {"queries": total}
              for variant in parts[0][0][0]}
    return merged, all(cached for (_, cached), _ in parts)


def best_by_kind(s: evalsets.EvalSet) -> dict[str, dict]:
    """Per query kind, the floor variant best at that kind alone (its figures and name): the
    bar each kind is held to."""
    by_variant = {v: _by_kind(s, floor_runs(s, v)) for v in floor.VARIANTS}
    out = {}
    for kind in sorted(set(s.kinds)):
        name = floor.best({v: figs[kind] for v, figs in by_variant.items()})
        out[kind] = {**by_variant[name][kind], "variant": name}
    return out


def short_pages(s: evalsets.EvalSet, ours: list, page: int = 10) -> int:
    """Queries whose page held fewer than `page` hits while more cards matched a word of the
    query (plain FTS5 OR with the porter tokenizer, in the query's scope)."""
    theirs = floor_runs(s, "porter or")
    return sum(1 for (mine, _), (other, _) in zip(ours, theirs) if len(mine[:page]) < min(page, len(other)))


def against_floor(s: evalsets.EvalSet, runs: list, variant: str, top: int = 5,
                  theirs: list | None = None) -> dict:
    """Query by query, the first system against the floor variant `variant`: how many queries it
    ranks better, worse or the same (nDCG@10), and the ones it loses, with both top lists."""
    out = {"variant": variant, "better": 0, "worse": 0, "same": 0, "lost": []}
    for (text, rel), (ours, _), (their, _) in zip(s.queries, runs, theirs or floor_runs(s, variant)):
        a, b = metrics.ndcg_at(ours, rel), metrics.ndcg_at(their, rel)
        out["better" if a > b + 1e-9 else "worse" if b > a + 1e-9 else "same"] += 1
        if b > a + 1e-9:
            out["lost"].append({"query": text, "relevant": sorted(rel), "ndcg": round(a, 4),
                                "floor_ndcg": round(b, 4), "top": ours[:top], "floor_top": their[:top]})
    return out


def score_set(s: evalsets.EvalSet, systems: dict[str, SearcherFactory], work: Path,
              with_floor: bool = True, fresh_floor: bool = False, losses: bool = False) -> dict:
    started = time.perf_counter()
    index = engines.build_memsync(s.vault, work / f"{s.name}-{time.monotonic_ns()}.db")
    try:
        indexed = index._conn.execute("SELECT count(*) FROM cards").fetchone()[0]
        out = {"docs": len(s.floor_docs), "indexed": indexed, "queries": len(s.queries), "note": s.note,
               "systems": {}, "by_kind": {}}
        first_runs = None
        with engines.deep_pages(DEEP):
            for name, factory in systems.items():
                searcher = factory(index)
                scopes = s.scopes or [""] * len(s.queries)
                runs = [(engines.ranked(searcher, q, DEEP, s.doc_id, scope), rel)
                        for (q, rel), scope in zip(s.queries, scopes)]
                first_runs = first_runs or runs
                out["systems"][name] = metrics.summarize(runs)
                if s.kinds:
                    out["by_kind"][name] = _by_kind(s, runs)
    finally:
        index.close()
    if with_floor:
        out["floor"], out["floor_cached"] = floor_scores(s, fresh_floor)
        out["short_pages"] = short_pages(s, first_runs)
        out["best_floor"] = floor.best(out["floor"])
        theirs = floor_runs(s, out["best_floor"]) if s.kinds or losses else None
        if s.kinds:  # a set with kinds is small: the best floor by kind costs little
            out["floor_by_kind"] = _by_kind(s, theirs)
            out["best_floor_by_kind"] = best_by_kind(s)
        if losses:
            out["against_floor"] = against_floor(s, first_runs, out["best_floor"], theirs=theirs)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


# --- scoring everything -----------------------------------------------------------------------

_PREPARED: dict[tuple, tuple] = {}


def _prepared(names: list[str], quick: bool, obsidian_sets, obsidian_git):
    key = (tuple(names), quick, obsidian_sets, obsidian_git)
    if key not in _PREPARED:
        tmp = tempfile.TemporaryDirectory(prefix="memsync-retrieval-")  # lives as long as the process
        sets, skipped = evalsets.prepare(names, Path(tmp.name), QUICK_QUERIES if quick else None,
                                         obsidian_sets, obsidian_git)
        _PREPARED[key] = (tmp, sets, skipped)
    return _PREPARED[key]


def score_all(searcher_factory: SearcherFactory = shipped, sets: str = "all", *, quick: bool = False,
              systems: dict[str, SearcherFactory] | None = None, with_floor: bool = True,
              fresh_floor: bool = False, losses: bool = False, obsidian_sets: str | None = None, obsidian_git: str | None = None,
              log: bool = True) -> dict:
    """Score `searcher_factory` (or every entry of `systems`) on the chosen sets; see the module
    docstring. Returns {"sets": {name: figures}, "skipped": {name: why}, "golden": … if chosen}."""
    systems = systems or {"memsync": searcher_factory}
    names = evalsets.expand(sets)
    tmp, prepared, skipped = _prepared(names, quick, obsidian_sets, obsidian_git)
    work = Path(tmp.name)
    results: dict = {"sets": {}, "skipped": dict(skipped)}
    for s in prepared:
        results["sets"][s.name] = r = score_set(s, systems, work, with_floor, fresh_floor, losses)
        if log:
            print(_set_line(s.name, r), file=sys.stderr)
    if "golden" in names:
        results["golden"] = run_golden(systems, work)
    return results


def _set_line(name: str, r: dict) -> str:
    parts = [f"{name:<15}"] + [f"{sys_name} {m['ndcg@10']:.4f}" for sys_name, m in r["systems"].items()]
    if "against_floor" in r:
        a = r["against_floor"]
        parts.append(f"queries better/worse/same {a['better']}/{a['worse']}/{a['same']}")
    if "best_floor" in r:
        best = r["floor"][r["best_floor"]]["ndcg@10"]
        ours = next(iter(r["systems"].values()))["ndcg@10"]
        parts.append(f"floor {best:.4f} ({r['best_floor']}{', cached' if r.get('floor_cached') else ''}) "
                     f"{round(100 * (ours - best), 2) + 0.0:+.2f} pts")
    if r.get("short_pages"):
        parts.append(f"short pages {r['short_pages']}")
    line = "  ".join(parts)
    ours_by_kind = next(iter(r.get("by_kind", {}).values()), {})
    floor_by_kind = r.get("best_floor_by_kind") or r.get("floor_by_kind", {})
    if ours_by_kind and floor_by_kind:  # memsync / floor per kind, where the set has kinds
        line += "\n" + " " * 17 + "by kind (memsync / best floor for the kind): " + ", ".join(
            f"{kind} {m['ndcg@10']:.4f} / {floor_by_kind[kind]['ndcg@10']:.4f}"
            for kind, m in ours_by_kind.items() if kind in floor_by_kind)
    return line


def summary(results: dict) -> str:
    """A few lines for a terminal: each set's systems beside the best floor, then the golden set."""
    lines = [_set_line(name, r) for name, r in results["sets"].items()]
    lines += [f"skipped {name}: {why}" for name, why in results.get("skipped", {}).items()]
    g = results.get("golden")
    for name, gs in (g or {}).get("systems", {}).items():
        s = gs["summary"]
        met = ", ".join(f"{k} {'met' if ok else 'NOT met'}" for k, ok in gs["met"].items())
        lines.append(f"golden {name}: first hit {s['first_hit']:.1%}, keyword first hit "
                     f"{s['keyword_first_hit']:.1%}, keyword hits holding it "
                     f"{(s.get('keyword_hits_contain') or 0):.1%}, keyword noise@5 {s['keyword_noise_at_5']:.1%}, "
                     f"pairs held {s['pairs_held']:.1%} ({met})")
    return "\n".join(lines)


# --- the weights x tier-policy grid (opt-in) --------------------------------------------------


def grid_systems() -> dict[str, SearcherFactory]:
    out = {}
    for title, heading, weak in GRID_WEIGHTS:
        weights = WEIGHTS._replace(title=title, exact_heading=heading)
        for fill in (False, True):
            name = f"title={title:g} heading={heading:g} weak={weak:g} {'fill' if fill else 'strict'}"
            out[name] = lambda index, w=weights, f=fill, k=weak: LexicalSearcher(index, weights=w, fill=f,
                                                                                  weak_share=k)
    return out


def choose(results: dict) -> dict:
    """Each grid variant scored on all sets together: the mean of nDCG@10 on every real set and
    the golden score."""
    table = {}
    for name in grid_systems():
        parts = {s: r["systems"][name]["ndcg@10"] for s, r in results["sets"].items()}
        if "golden" in results:
            parts["golden"] = results["golden"]["systems"][name]["score"]
        table[name] = {"parts": parts, "mean": sum(parts.values()) / len(parts)}
    return {"table": table, "best": max(table, key=lambda n: round(table[n]["mean"], 6))}


def _factory(spec: str) -> tuple[str, SearcherFactory]:
    """`NAME=module:function` -> (NAME, the function), for --system."""
    name, _, target = spec.partition("=")
    module, _, function = target.partition(":")
    if not (name and module and function):
        raise SystemExit(f"--system {spec!r}: write it as NAME=module:function")
    return name, getattr(importlib.import_module(module), function)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="all", help="comma-separated sets or groups: obsidian, cmrc, "
                        "public, all, golden, scifact, cmrc-passage, cmrc-sentence, obsidian-LANG, ja-notes")
    parser.add_argument("--quick", action="store_true", help=f"only the first {QUICK_QUERIES} queries of "
                        "SciFact and CMRC (the Obsidian vaults run whole)")
    parser.add_argument("--grid", action="store_true", help="also score the weights x tier-policy grid")
    parser.add_argument("--semantic", action="store_true", help="also score hybrid search (memsync[semantic]; "
                        "vectors cached outside the repo, see bench/semantic.py for its fusion grid)")
    parser.add_argument("--obsidian-sets", help="folder of built Obsidian Help sets (MEMSYNC_OBSIDIAN_SETS)")
    parser.add_argument("--obsidian-git", help="git dir of an obsidian-help snapshot to build the sets "
                        "from (MEMSYNC_OBSIDIAN_GIT)")
    parser.add_argument("--system", action="append", default=[], metavar="NAME=MODULE:FUNCTION",
                        help="also score FUNCTION(index) -> Searcher under NAME (repeatable), e.g. "
                        "semantic=memsync.semantic:searcher")
    parser.add_argument("--losses", action="store_true", help="compare memsync with the best floor "
                        "query by query; the queries it loses go into the result JSON")
    parser.add_argument("--fresh-floor", action="store_true", help="measure the floor again even when "
                        "cached (a full run always does)")
    parser.add_argument("--out", help="result name under bench/results/ (default: retrieval for a full "
                        "run, retrieval-partial otherwise)")
    args = parser.parse_args(argv)
    systems = {"memsync": shipped, **dict(map(_factory, args.system)), **(grid_systems() if args.grid else {})}
    if args.semantic:
        from .semantic import factory

        systems["semantic"] = factory
    selected = evalsets.expand(args.sets)
    full = selected == evalsets.expand("all") and not args.quick
    results = {**machine.info(), "quick": args.quick, "selected": selected,
               **score_all(sets=args.sets, quick=args.quick, systems=systems, fresh_floor=full or args.fresh_floor,
                           losses=args.losses,
                           obsidian_sets=args.obsidian_sets, obsidian_git=args.obsidian_git)}
    if args.grid:
        results["grid"] = choose(results)
    if full and results["skipped"] and not args.out:  # never replace the full table with a thinner one
        print("some sets were skipped, so this run is saved as retrieval-partial (pass --out retrieval "
              "to publish it anyway)", file=sys.stderr)
        full = False
    path = machine.save(args.out or ("retrieval" if full else "retrieval-partial"), results)
    if path.stem == "retrieval":
        from . import report

        report.write()
    print(summary(results))
    if args.grid:
        print(f"best grid variant: {results['grid']['best']}")
    print(f"results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
