"""Retrieval quality: memsync beside the plain FTS5 floor, on real data and on the golden set.

    python -m bench.retrieval [--quick] [--no-tuning]

Sets: SciFact train (English), CMRC 2018 trial at passage and sentence level (Chinese), and the
memory-style golden vault in bench/golden/. Every figure is computed in this run, from indexes
built here with memsync's own Indexer. The tuning grid (BM25 column weights, strict fallback vs
fill, Porter stemming in a scratch index) is scored on all sets together; the result says which
variant won, and memsync/search.py carries the winner.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from memsync import benchmark
from memsync import search as search_mod
from memsync.notes import parse
from memsync.search import LexicalSearcher

from . import datasets, engines, machine, metrics

GRID_WEIGHTS = [(1.0, 1.0, 1.0), (2.0, 1.0, 1.0), (3.0, 1.0, 1.0), (3.0, 2.0, 1.0), (5.0, 3.0, 1.0)]
DEEP = 100  # recall@100 for the shipped configuration and the floor
QUICK_QUERIES = 150


def variants(tuning: bool) -> list[dict]:
    shipped = {"weights": tuple(search_mod.WEIGHTS), "fill": _default_fill(), "stem": False}
    if not tuning:
        return [{"name": "shipped", **shipped}]
    out = []
    for weights in GRID_WEIGHTS:
        for fill in (False, True):
            out.append({"weights": weights, "fill": fill, "stem": False})
    # Stemming, measured in a scratch index with FTS5's porter tokenizer (memsync.cjk unchanged).
    for weights, fill in [((5.0, 3.0, 1.0), False), ((5.0, 3.0, 1.0), True), ((3.0, 1.0, 1.0), True)]:
        out.append({"weights": weights, "fill": fill, "stem": True})
    for v in out:
        v["name"] = _name(v)
    if not any(_same(v, shipped) for v in out):
        out.insert(0, {"name": _name(shipped), **shipped})
    return out


def _default_fill() -> bool:
    import inspect

    return bool(inspect.signature(LexicalSearcher).parameters["fill"].default)


def _name(v: dict) -> str:
    w = "/".join(f"{x:g}" for x in v["weights"])
    return f"w={w} {'fill' if v['fill'] else 'strict'}{' porter' if v['stem'] else ''}"


def _same(a: dict, b: dict) -> bool:
    return tuple(a["weights"]) == tuple(b["weights"]) and a["fill"] == b["fill"] and a["stem"] == b["stem"]


# --- real data sets -------------------------------------------------------------------------


def run_real(corpus: datasets.Corpus, work: Path, grid: list[dict], shipped: dict) -> dict:
    started = time.perf_counter()
    vault = work / corpus.name
    ids = engines.write_vault(vault, corpus.docs)
    indexes = {False: engines.build_memsync(vault, work / f"{corpus.name}.db")}
    if any(v["stem"] for v in grid):
        indexes[True] = engines.build_memsync(vault, work / f"{corpus.name}-porter.db", engines.PORTER)
    indexed = indexes[False].conn.execute("SELECT count(*) FROM cards").fetchone()[0]
    if indexed != len(corpus.docs):
        raise SystemExit(f"{corpus.name}: memsync indexed {indexed} of {len(corpus.docs)} documents")
    out = {"docs": len(corpus.docs), "queries": len(corpus.queries)}
    ref = engines.Reference(corpus.docs)
    out["reference"] = metrics.summarize([(ref.ranked(q, DEEP), rel) for q, rel in corpus.queries])
    porter_ref = engines.Reference(corpus.docs, engines.PORTER)
    out["reference_porter"] = metrics.summarize(
        [(porter_ref.ranked(q, DEEP), rel) for q, rel in corpus.queries]
    )
    with engines.deep_pages(DEEP):
        searcher = LexicalSearcher(indexes[False], weights=shipped["weights"], fill=shipped["fill"])
        out["memsync"] = metrics.summarize(
            [(engines.memsync_ranked(searcher, q, DEEP, ids), rel) for q, rel in corpus.queries]
        )
    out["variants"] = {}
    for v in grid:
        searcher = LexicalSearcher(indexes[v["stem"]], weights=v["weights"], fill=v["fill"])
        figures = metrics.summarize(
            [(engines.memsync_ranked(searcher, q, 10, ids), rel) for q, rel in corpus.queries]
        )
        figures.pop("recall@100")  # top-10 pages only: the grid is scored on nDCG@10
        out["variants"][v["name"]] = figures
        print(f"  {corpus.name:<14} {v['name']:<24} nDCG@10 {figures['ndcg@10']:.4f}", file=sys.stderr)
    for index in indexes.values():
        index.close()
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


# --- the golden set ---------------------------------------------------------------------------


def golden_docs(vault: Path) -> list[tuple[str, str, str]]:
    """The golden cards as (rel path, title + aliases + tags, body): the text memsync indexes."""
    docs = []
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        card = parse(path.read_bytes(), rel)
        docs.append((rel, " ".join([card.title, *card.aliases, *card.tags]), card.body))
    return docs


def _golden_summary(report: dict) -> dict:
    groups = report["groups"]
    return {
        "first_hit": report["overall"]["first_hit"],
        "p_at_5": report["overall"]["p_at_5"],
        "noise_at_5": report["overall"]["noise_at_5"],
        "keyword_first_hit": groups.get("keyword", {}).get("first_hit"),
        "keyword_noise_at_5": groups.get("keyword", {}).get("noise_at_5"),
        "pairs_held": report["pairs"]["pairs_held"],
    }


def golden_score(summary: dict) -> float:
    """One number for the golden set: the mean of its four headline figures (noise inverted)."""
    parts = [summary["first_hit"], summary["p_at_5"], 1 - summary["noise_at_5"], summary["pairs_held"]]
    return sum(parts) / len(parts)


def run_golden(work: Path, grid: list[dict], shipped: dict) -> dict:
    vault = datasets.GOLDEN / "vault"
    cases, pairs = benchmark.load(datasets.GOLDEN / "queries.json")
    indexes = {False: engines.build_memsync(vault, work / "golden.db")}
    if any(v["stem"] for v in grid):
        indexes[True] = engines.build_memsync(vault, work / "golden-porter.db", engines.PORTER)
    out = {"docs": len(golden_docs(vault)), "queries": len(cases), "pairs": len(pairs)}
    ref = benchmark.run(engines.ReferenceSearcher(golden_docs(vault)), cases, pairs)
    out["reference"] = {"summary": _golden_summary(ref), "groups": ref["groups"]}
    report = benchmark.run(
        LexicalSearcher(indexes[False], weights=shipped["weights"], fill=shipped["fill"]), cases, pairs
    )
    out["memsync"] = {"summary": _golden_summary(report), "groups": report["groups"],
                      "failed_pairs": report["pairs"]["failed"]}
    out["variants"] = {}
    for v in grid:
        searcher = LexicalSearcher(indexes[v["stem"]], weights=v["weights"], fill=v["fill"])
        summary = _golden_summary(benchmark.run(searcher, cases, pairs))
        summary["score"] = golden_score(summary)
        out["variants"][v["name"]] = summary
    for index in indexes.values():
        index.close()
    return out


# --- choosing ---------------------------------------------------------------------------------


def choose(results: dict, grid: list[dict]) -> dict:
    """Score each variant on all sets together: the mean of nDCG@10 on each real set and the
    golden score. Ties keep the shipped configuration."""
    table = {}
    for v in grid:
        parts = {name: r["variants"][v["name"]]["ndcg@10"] for name, r in results["real"].items()}
        parts["golden"] = results["golden"]["variants"][v["name"]]["score"]
        table[v["name"]] = {"parts": parts, "mean": sum(parts.values()) / len(parts)}
    def pick(names):
        return max(names, key=lambda name: (round(table[name]["mean"], 6), name == results["shipped"]))

    # Constants in memsync/search.py can set weights and the tier policy; stemming needs a
    # tokenizer change, so the best variant without it is reported on its own.
    settable = [v["name"] for v in grid if not v["stem"]]
    return {"table": table, "best": pick(table), "best_settable": pick(settable),
            "shipped": results["shipped"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"only the first {QUICK_QUERIES} queries of each real set")
    parser.add_argument("--no-tuning", action="store_true", help="skip the weights/tier/stemming grid")
    parser.add_argument("--out", default="retrieval", help="result name under bench/results/")
    args = parser.parse_args(argv)
    grid = variants(not args.no_tuning)
    shipped = {"weights": tuple(search_mod.WEIGHTS), "fill": _default_fill(), "stem": False}
    results = {**machine.info(), "shipped": _name(shipped), "real": {}, "skipped": {}}
    missing = datasets.available()
    loaders = [("scifact", lambda: datasets.scifact(), "scifact"),
               ("cmrc-passage", lambda: datasets.cmrc("passage"), "cmrc2018"),
               ("cmrc-sentence", lambda: datasets.cmrc("sentence"), "cmrc2018")]
    with tempfile.TemporaryDirectory(prefix="memsync-retrieval-") as tmp:
        work = Path(tmp)
        for name, load, source in loaders:
            if missing[source]:
                results["skipped"][name] = missing[source]
                print(f"skip {name}: {missing[source]}", file=sys.stderr)
                continue
            corpus = load()
            if args.quick:
                corpus.queries = corpus.queries[:QUICK_QUERIES]
            print(f"{name}: {len(corpus.docs)} docs, {len(corpus.queries)} queries", file=sys.stderr)
            results["real"][name] = run_real(corpus, work, grid, shipped)
        results["golden"] = run_golden(work, grid, shipped)
    if len(grid) > 1:
        results["tuning"] = choose(results, grid)
    results["quick"] = args.quick
    path = machine.save(args.out, results)
    from . import report

    report.write()
    print(report.retrieval_summary(results))
    print(f"results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
