"""The golden set (bench/golden/): a small memory-style vault with hand-written queries and
pairs, scored by memsync.benchmark for memsync's searchers beside a plain FTS5 floor. Part of
`python -m bench.retrieval`; its targets are GOLDEN_TARGETS.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from memsync import benchmark
from memsync.notes import parse
from memsync.search.lexical import Searcher
from memsync.store.index import Index

from . import datasets, engines

GOLDEN_TARGETS = {"keyword_first_hit": 1.0, "keyword_hits_contain": 1.0, "pairs_held": 0.95}

SearcherFactory = Callable[[Index], Searcher]


def golden_docs(vault: Path) -> list[tuple[str, str, str]]:
    """The golden cards as (rel path, title + aliases + tags, body): the text memsync indexes."""
    docs = []
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        card = parse(path.read_bytes(), rel)
        docs.append((rel, " ".join([card.title, *card.aliases, *card.tags]), card.body))
    return docs


def keyword_hits_contain(report: dict, docs: list[tuple[str, str, str]]) -> float | None:
    """Share of the keyword queries' strict-part hits (those of the tier that matched first; a
    filled page goes on below them, labelled) whose card holds the keyword itself: the bar is
    every one (a card that holds it only in passing still counts; ranking judges those)."""
    text = {rel: f"{head} {body}".casefold() for rel, head, body in docs}
    hits = [(r["query"].casefold(), path) for r in report["results"] if r["group"] == "keyword"
            for path in r["returned"][: r.get("strict", len(r["returned"]))]]
    if not hits:
        return None
    return sum(query in text.get(path.split("#")[0], "") for query, path in hits) / len(hits)


def _golden_summary(report: dict, docs: list[tuple[str, str, str]]) -> dict:
    groups = report["groups"]
    return {
        "first_hit": report["overall"]["first_hit"],
        "p_at_5": report["overall"]["p_at_5"],
        "noise_at_5": report["overall"]["noise_at_5"],
        "keyword_first_hit": groups.get("keyword", {}).get("first_hit"),
        "keyword_noise_at_5": groups.get("keyword", {}).get("noise_at_5"),
        "keyword_hits_contain": keyword_hits_contain(report, docs),
        "pairs_held": report["pairs"]["pairs_held"],
    }


def golden_score(summary: dict) -> float:
    """One number for the golden set: the mean of its four headline figures (noise inverted)."""
    parts = [summary["first_hit"], summary["p_at_5"], 1 - summary["noise_at_5"], summary["pairs_held"]]
    return sum(parts) / len(parts)


def golden_targets(summary: dict) -> dict[str, bool]:
    return {key: (summary[key] or 0) >= bar - 1e-9 for key, bar in GOLDEN_TARGETS.items()}


def run_golden(systems: dict[str, SearcherFactory], work: Path) -> dict:
    vault = datasets.GOLDEN / "vault"
    cases, pairs = benchmark.load(datasets.GOLDEN / "queries.json")
    docs = golden_docs(vault)
    out = {"docs": len(docs), "queries": len(cases), "pairs": len(pairs), "targets": GOLDEN_TARGETS,
           "systems": {}}
    ref = benchmark.run(engines.FloorSearcher(docs, "bigram", "or"), cases, pairs)
    out["floor"] = {"variant": "bigram or", "summary": _golden_summary(ref, docs), "groups": ref["groups"]}
    index = engines.build_memsync(vault, work / f"golden-{time.monotonic_ns()}.db")
    try:
        for name, factory in systems.items():
            report = benchmark.run(factory(index), cases, pairs)
            summary = _golden_summary(report, docs)
            out["systems"][name] = {"summary": summary, "score": golden_score(summary),
                                    "met": golden_targets(summary), "groups": report["groups"],
                                    "failed_pairs": report["pairs"]["failed"]}
    finally:
        index.close()
    return out
