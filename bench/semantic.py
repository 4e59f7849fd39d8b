"""The `semantic` column: hybrid search beside memsync's lexical search, and the fusion grid.

    python -m bench.semantic [--sets scifact,cmrc-sentence,...] [--quick]
    python -m bench.retrieval --semantic        (the same, after the lexical run)

Every set is indexed by memsync's own Indexer and embedded by memsync's own worker; passage
vectors come from an on-disk cache outside the repository (bench/semantic_cache.py), so only
new text is embedded. For each query the lexical top 100 and the dense top 100 are taken once
through HybridSearcher, and every fusion variant is replayed over them with the searcher's own
`order()`; the shipped variant is also run end to end and must agree with its replay. The
golden set runs every variant end to end (it has dates and filters). A variant wins if it holds
or beats lexical search on every set and has the best mean; results in bench/results/semantic.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from memsync import benchmark
from memsync.search.lexical import LexicalSearcher, Query
from memsync.semantic import fusion
from memsync.semantic.hybrid import HybridSearcher
from memsync.semantic.worker import embed_pending

from . import datasets, engines, evalsets, machine, metrics
from .semantic_cache import CachedEncoder
from .semantic_warm import scifact_order

SETS = ("scifact-500", "cmrc-passage", "cmrc-sentence", *evalsets.OBSIDIAN, "scifact")
K = 10
SAMPLE = 500  # documents in scifact-500; any scifact-N is a set too


def scifact_sample(corpus: datasets.Corpus, size: int = SAMPLE) -> datasets.Corpus:
    """The first `size` documents of SciFact train in bench/semantic_warm.py's fixed order, and
    the claims whose judged documents all fall among them. Embedding all 5,183 abstracts takes
    hours on a busy 2-core machine (here 20 to 50 passages a minute at nice 19); on a sample both
    searchers see the same, smaller corpus (easier for both), so the comparison stays fair."""
    docs = scifact_order(corpus.docs)[:size]
    kept = {d[0] for d in docs}
    queries = [(q, rel) for q, rel in corpus.queries if set(rel) <= kept]
    return datasets.Corpus(f"{corpus.name}-{size}", docs, queries)


def grid() -> list[dict]:
    shipped = {"method": "blend", "weight": fusion.WEIGHT, "dense_when": fusion.DENSE_WHEN,
               "floor": fusion.FLOOR, "spread": fusion.SPREAD}
    out = [shipped]
    for spread in ("script", "vault"):
        for weight in (0.4, 0.5, 0.55):
            for dense_when in ("weak", "rerank"):
                for floor in (None, 2.5, 2.75, 3.0, 3.25):
                    out.append({"method": "blend", "weight": weight, "dense_when": dense_when,
                                "floor": floor, "spread": spread})
    for min_group in (4, 20):  # how small a script's group may be and still be its own yardstick
        out.append({**shipped, "spread": "script", "min_group": min_group})
    for weight in (0.5, 0.7):
        out.append({"method": "rrf", "weight": weight, "dense_when": "rerank", "floor": None})
    unique = []
    for v in out:
        if v not in unique:
            unique.append(v)
    return unique


def name(v: dict) -> str:
    floor = "none" if v["floor"] is None else f"{v['floor']:g}sd"
    spread = v.get("spread", fusion.SPREAD)
    if spread == "script":
        spread += f"≥{v.get('min_group', fusion.MIN_GROUP)}"
    return f"{v['method']} w={v['weight']:g} {v['dense_when']} floor={floor} {spread}"


def load(set_name: str, work: Path):
    """(vault folder, path -> doc id, queries) of one set, as bench/evalsets.py prepares it
    (Obsidian vaults: MEMSYNC_OBSIDIAN_SETS); scifact-500 is the sample above."""
    if set_name.startswith("scifact-"):
        corpus = scifact_sample(datasets.scifact(), int(set_name.split("-", 1)[1]))
        stems = engines.write_vault(work / set_name, corpus.docs)
        return work / set_name, lambda path: stems[engines.stem(path)], corpus.queries
    prepared, skipped = evalsets.prepare([set_name], work)
    if not prepared:
        raise LookupError(skipped.get(set_name, "unknown set"))
    s = prepared[0]
    return s.vault, s.doc_id, s.queries


def run_set(set_name: str, work: Path, encoder, variants: list[dict], quick: int | None) -> dict:
    started = time.perf_counter()
    vault, doc, queries = load(set_name, work)
    if quick:
        queries = queries[:quick]
    index = engines.build_memsync(vault, work / f"{set_name}.db")
    try:
        embedded = embed_pending(index, encoder)
    except LookupError as missing:  # --cached-only: what can be said without the vectors
        out = lexical_bound(index, doc, queries, str(missing))
        index.close()
        print(f"{set_name:<16} lexical {out['memsync']['ndcg@10']:.4f}  hybrid not run: "
              f"{out['bound']}", file=sys.stderr)
        return out
    hybrid = HybridSearcher(index, encoder)
    lexical = LexicalSearcher(index)
    paths = dict(index._conn.execute("SELECT id, path FROM cards").fetchall())
    lexical_runs, shipped_runs, stored = [], [], []
    for text, rel in queries:
        q = Query(text, K)
        page = lexical.search(q)
        lexical_runs.append(([doc(h.path) for h in page.hits], rel))
        shipped_runs.append(([doc(h.path) for h in hybrid.search(q).hits], rel))
        deep = lexical.search(q._replace(limit=fusion.DEPTH), cap=fusion.DEPTH).hits
        stored.append((page.matched, hybrid.candidates(q, deep, page.matched), rel))
    out = {"docs": index._conn.execute("SELECT count(*) FROM cards").fetchone()[0],
           "queries": len(queries), "embedding": embedded,
           "memsync": metrics.summarize(lexical_runs), "hybrid": metrics.summarize(shipped_runs),
           "variants": {}}
    for v in variants:
        searcher = HybridSearcher(index, encoder, **v)
        runs = []
        for matched, found, rel in stored:
            if searcher.wants_dense(matched):
                ranked = [card for card, _ in searcher.order(found)][:K]
            else:
                ranked = sorted(found.lexical, key=lambda c: -found.lexical[c])[:K]
            runs.append(([doc(paths[c]) for c in ranked], rel))
        out["variants"][name(v)] = metrics.summarize(runs)["ndcg@10"]
    out["floor_calibration"] = calibration(stored, paths, doc)
    index.close()
    out["seconds"] = round(time.perf_counter() - started, 1)
    lex, hyb = out["memsync"]["ndcg@10"], out["hybrid"]["ndcg@10"]
    print(f"{set_name:<16} lexical {lex:.4f}  hybrid {hyb:.4f}  ({out['seconds']}s)", file=sys.stderr)
    return out


def calibration(stored, paths: dict, doc) -> dict:
    """Where the floor has to sit: the standing (sd above the mean cosine of the cards in its
    script, fusion.standing) of each card that matches no query word and would enter the top 10
    without a floor, split by whether it is judged relevant; and the same for the best card of
    each query with no lexical hit at all."""
    searcher = HybridSearcher(None, None, lexical=object(), floor=None)
    true, false, alone = [], [], []
    for matched, found, rel in stored:
        if not searcher.wants_dense(matched) or not found.standing:
            continue
        standing = found.standing
        for card, _ in searcher.order(found)[:K]:
            if card not in found.lexical:
                (true if rel.get(doc(paths[card]), 0) > 0 else false).append(standing[card])
        if not found.lexical and standing:
            best = max(standing, key=standing.__getitem__)
            alone.append([round(standing[best], 2), rel.get(doc(paths[best]), 0) > 0])
    return {"relevant": _spread(true), "not_relevant": _spread(false), "no_lexical_hit_best": alone}


def _spread(values: list[float]) -> dict:
    """Count and the 5/25/50/75/95th percentiles, in sd."""
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    at = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)  # noqa: E731
    return {"n": len(values), "p5": at(0.05), "p25": at(0.25), "p50": at(0.5), "p75": at(0.75), "p95": at(0.95)}


def lexical_bound(index, doc, queries, why: str) -> dict:
    """For a set whose vectors are not there: lexical figures, and whether the shipped policy
    makes hybrid >= lexical by construction. With dense_when "weak", a query that matched every
    word gets lexical's page unchanged, and one lexical found nothing for scores 0 there, which
    hybrid cannot go below; so if every query is one or the other, hybrid nDCG@10 >= lexical."""
    lexical, shipped = LexicalSearcher(index), HybridSearcher(index, None)
    runs, tiers = [], []
    for text, rel in queries:
        page = lexical.search(Query(text, K))
        runs.append(([doc(h.path) for h in page.hits], rel))
        tiers.append(page.matched)
    strong = sum(1 for t in tiers if t is not None and not shipped.wants_dense(t))
    empty = tiers.count(None)
    holds = strong + empty == len(tiers)
    return {"docs": index._conn.execute("SELECT count(*) FROM cards").fetchone()[0],
            "queries": len(queries), "memsync": metrics.summarize(runs), "not_run": why,
            "all_tier_queries": strong, "no_hit_queries": empty, "holds_by_construction": holds,
            "bound": (f"hybrid >= lexical by construction ({strong} queries matched every word, "
                      f"{empty} had no lexical hit)" if holds else "no bound")}


def _golden_summary(report: dict, groups=None) -> dict:
    """The golden figures the report reads, or (of `groups`) those golden_ok() weighs."""
    pick = {"first_hit", "p_at_5", "noise_at_5"} if groups is None else {"first_hit", "noise_at_5"}
    short = lambda figures: {k: v if v is None else round(v, 4) for k, v in figures.items() if k in pick}  # noqa: E731
    out = {"groups": {g: short(figures) for g, figures in report["groups"].items()
                      if groups is None or g in groups}}
    if groups is None:
        out["overall"] = short(report["overall"])
        out["pairs_held"] = report["pairs"]["pairs_held"]
    return out


def run_golden(work: Path, encoder, variants: list[dict]) -> dict:
    cases, pairs = benchmark.load(datasets.GOLDEN / "queries.json")
    index = engines.build_memsync(datasets.GOLDEN / "vault", work / "golden.db")
    embed_pending(index, encoder)
    out = {"memsync": _golden_summary(benchmark.run(LexicalSearcher(index), cases, pairs)),
           "variants": {}}
    for v in variants:
        report = benchmark.run(HybridSearcher(index, encoder, **v), cases, pairs)
        if v == variants[0]:
            out["hybrid"] = _golden_summary(report)
        out["variants"][name(v)] = _golden_summary(report, GOLDEN_GROUPS)
    probe = HybridSearcher(index, encoder, floor=None)
    out["absent_best_sd"] = {}  # how far the nearest card of a query with no answer stands out
    for case in (c for c in cases if c.group == "absent"):
        found = probe.candidates(case.to_query(), [], None)
        if found.standing:
            out["absent_best_sd"][case.query] = round(max(found.standing.values()), 2)
    index.close()
    return out


def factory(index):
    """The `semantic` system of bench/retrieval.py --semantic: embed what the index lacks (from
    the vector cache where it can), then search with the shipped hybrid settings."""
    encoder = _shared_cached()
    embed_pending(index, encoder)
    return HybridSearcher(index, encoder)


_CACHED: list = []


def _shared_cached():
    if not _CACHED:
        _CACHED.append(CachedEncoder())
    return _CACHED[0]


GOLDEN_GROUPS = ("question", "keyword", "absent")  # what golden_ok() weighs


def golden_ok(lexical: dict, hybrid: dict) -> bool:
    """The question group's first hit and noise improve; the keyword and absent groups get no
    worse (an absent query is right when nothing comes back)."""
    lq, hq = lexical["groups"]["question"], hybrid["groups"]["question"]
    lk, hk = lexical["groups"]["keyword"], hybrid["groups"]["keyword"]
    la, ha = lexical["groups"]["absent"], hybrid["groups"]["absent"]
    return (hq["first_hit"] > lq["first_hit"] and hq["noise_at_5"] < lq["noise_at_5"]
            and hk["first_hit"] >= lk["first_hit"] and hk["noise_at_5"] <= lk["noise_at_5"]
            and ha["first_hit"] >= la["first_hit"])


def choose(results: dict, variants: list[dict]) -> dict:
    """The variant with the best mean nDCG@10 among those that hold lexical on every set (and
    the golden conditions); the shipped one when none does better."""
    table = {}
    for v in variants:
        n = name(v)
        gains = {s: r["variants"][n] - r["memsync"]["ndcg@10"] for s, r in results["sets"].items()
                 if "variants" in r}
        golden = results.get("golden")
        ok = all(g >= -1e-9 for g in gains.values()) and (
            golden is None or golden_ok(golden["memsync"], golden["variants"][n]))
        table[n] = {"gains": {s: round(g, 5) for s, g in gains.items()},
                    "mean_gain": round(sum(gains.values()) / max(len(gains), 1), 6), "holds": ok}
    holding = [n for n in table if table[n]["holds"]] or list(table)
    best = max(holding, key=lambda n: (round(table[n]["mean_gain"], 6), n == name(variants[0])))
    return {"table": table, "best": best, "shipped": name(variants[0])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated subset of " + ", ".join(SETS))
    parser.add_argument("--quick", type=int, default=None, help="only the first N queries of each set")
    parser.add_argument("--no-golden", action="store_true")
    parser.add_argument("--cached-only", action="store_true",
                        help="skip a set whose vectors are not all in the cache instead of embedding them")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other sets of an earlier results/<out>.json (same grid) beside these")
    parser.add_argument("--out", default="semantic")
    args = parser.parse_args(argv)
    variants = grid()
    encoder = CachedEncoder(offline=args.cached_only)
    results = {**machine.info(), "model": encoder.model, "sets": {}, "skipped": {}}
    with tempfile.TemporaryDirectory(prefix="memsync-semantic-") as tmp:
        work = Path(tmp)
        for set_name in args.sets.split(","):
            try:
                results["sets"][set_name] = run_set(set_name, work, encoder, variants, args.quick)
            except LookupError as why:
                results["skipped"][set_name] = str(why)
                print(f"skip {set_name}: {why}", file=sys.stderr)
        if not args.no_golden:
            results["golden"] = run_golden(work, encoder, variants)
    earlier = machine.RESULTS / f"{args.out}.json"
    if args.merge and earlier.exists():
        old = json.loads(earlier.read_text(encoding="utf-8"))
        results["sets"] = {**old.get("sets", {}), **results["sets"]}
        results.setdefault("golden", old.get("golden"))
        results["merged_from"] = old.get("commit")
    results["tuning"] = choose(results, variants)
    results["cache"] = {"hits": encoder.hits, "misses": encoder.misses}
    path = machine.save(args.out, results)
    if path.stem == "semantic":
        from . import report

        report.write()  # RESULTS.md and the tables in docs/benchmarks.md
    print(f"best: {results['tuning']['best']}; results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
