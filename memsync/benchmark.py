"""Retrieval quality on the user's own vault: the library behind `memsync bench`.

Ground truth lives in `<home>/bench_queries.json` (it names this machine's cards, so it never
goes in a repository). Truth is a *set* of acceptable cards per query, named by relative path:
ids change meaning when an index is rebuilt on another machine, paths do not. A query whose set
is empty must return nothing; it counts for first-hit accuracy and noise, never for precision.

    {"queries": [{"query": "ecs-prod", "relevant": ["02-Projects/shop.md"], "group": "keyword"},
                 {"query": "数据库 地址", "relevant": ["..."], "as_of": "2026-03-01"}],
     "pairs":   [{"query": "nginx", "above": "03-Knowledge/nginx.md", "below": "x.md"}]}

Metrics (each a pure function of a ranked list and a truth set, so tests can hit them directly):
first-hit accuracy, capped P@5 (denominator min(5, |relevant|): running out of relevant cards is
not noise), noise rate @5 (share of the returned top 5 that is not acceptable), the tier that
answered, and the share of pairwise "A ranks above B" constraints held.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from memsync.search.lexical import Query, Searcher
from memsync.store import tally

from .errors import BadArgument, BadEnvironment

K = 5
DEPTH = 20  # how deep pairwise constraints look: one full page
# For every metric: does a larger value mean better retrieval?
HIGHER_IS_BETTER = {"first_hit": True, "p_at_5": True, "noise_at_5": False, "pairs_held": True}
EPSILON = 1e-9
EXAMPLE = (
    '{"queries": [{"query": "nginx", "relevant": ["03-Knowledge/nginx.md"], "group": "keyword"}], '
    '"pairs": []}'
)


@dataclass(frozen=True)
class Case:
    query: str
    relevant: frozenset[str]
    group: str = "default"
    as_of: str | None = None
    include_invalid: bool = False
    kind: str | None = None
    source: str | None = None

    def to_query(self, limit: int = K) -> Query:
        return Query(self.query, limit, kind=self.kind, source=self.source, as_of=self.as_of,
                     include_invalid=self.include_invalid)


@dataclass(frozen=True)
class Pair:
    query: str
    above: str
    below: str
    as_of: str | None = None
    include_invalid: bool = False
    why: str = ""

    def to_query(self) -> Query:
        return Query(self.query, DEPTH, as_of=self.as_of, include_invalid=self.include_invalid)


# --- pure metrics ---------------------------------------------------------------------------


def first_hit_ok(ranked: list[str], relevant: frozenset[str]) -> bool:
    """The top hit is acceptable; with an empty truth set, nothing may come back at all."""
    if not relevant:
        return not ranked
    return bool(ranked) and ranked[0] in relevant


def capped_precision(ranked: list[str], relevant: frozenset[str], k: int = K) -> float | None:
    """P@k with denominator min(k, |relevant|); None when there is no truth to be precise about."""
    if not relevant:
        return None
    return sum(1 for p in ranked[:k] if p in relevant) / min(k, len(relevant))


def noise_rate(ranked: list[str], relevant: frozenset[str], k: int = K) -> float:
    """Share of the returned top k that is not acceptable (0 when nothing was returned)."""
    top = ranked[:k]
    if not top:
        return 0.0
    return sum(1 for p in top if p not in relevant) / len(top)


def pair_held(ranked: list[str], above: str, below: str) -> bool:
    """`above` is found, and ranks before `below` (or `below` is not found at all)."""
    if above not in ranked:
        return False
    return below not in ranked or ranked.index(above) < ranked.index(below)


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


# --- loading the ground truth ---------------------------------------------------------------


def _bad(path: Path, what: str) -> BadEnvironment:
    return BadEnvironment(f"{path}: {what}. Expected a file like: {EXAMPLE}")


def _paths(value, path: Path, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(path, f"{where}: 'relevant' must be a list of card paths (may be empty)")
    return frozenset(v[2:] if v.startswith("./") else v for v in value)


def _text_or_none(entry: dict, key: str, path: Path, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(path, f"{where}: '{key}' must be text, not {json.dumps(value)}")
    return value


def load(path: Path) -> tuple[list[Case], list[Pair]]:
    if not path.exists():
        raise BadEnvironment(
            f"no ground truth at {path}: write the queries you care about and the card paths "
            f"that answer them, e.g. {EXAMPLE}"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _bad(path, f"not valid JSON ({exc})") from None
    if isinstance(data, list):  # a bare list of queries is accepted too
        data = {"queries": data}
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise _bad(path, "needs a 'queries' list")
    cases = []
    for n, entry in enumerate(data["queries"], 1):
        where = f"query #{n}"
        if not isinstance(entry, dict) or not isinstance(entry.get("query"), str) or not entry["query"].strip():
            raise _bad(path, f"{where} needs a non-empty 'query' (text)")
        cases.append(Case(
            query=entry["query"], relevant=_paths(entry.get("relevant", []), path, where),
            group=str(entry.get("group") or "default"), as_of=_text_or_none(entry, "as_of", path, where),
            include_invalid=bool(entry.get("include_invalid", False)),
            kind=_text_or_none(entry, "kind", path, where), source=_text_or_none(entry, "source", path, where),
        ))
    pairs = []
    for n, entry in enumerate(data.get("pairs") or [], 1):
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) and entry[k] for k in ("query", "above", "below")
        ):
            raise _bad(path, f"pair #{n} needs 'query', 'above' and 'below'")
        pairs.append(Pair(
            entry["query"], entry["above"], entry["below"], as_of=_text_or_none(entry, "as_of", path, f"pair #{n}"),
            include_invalid=bool(entry.get("include_invalid", False)), why=entry.get("why", ""),
        ))
    if not cases and not pairs:
        raise _bad(path, "holds no queries")
    return cases, pairs


# --- running --------------------------------------------------------------------------------


def _summary(rows: list[dict]) -> dict:
    judged = [r for r in rows if r["relevant"]]
    tiers: dict[str, int] = {}
    for r in rows:
        tiers[r["matched"] or "none"] = tiers.get(r["matched"] or "none", 0) + 1
    return {
        "queries": len(rows),
        "first_hit": mean([float(r["first_hit"]) for r in rows]),
        "p_at_5": mean([r["p_at_5"] for r in judged]),
        "noise_at_5": mean([r["noise_at_5"] for r in rows]),
        "tiers": tiers,
    }


def run(searcher: Searcher, cases: list[Case], pairs: list[Pair], known=None) -> dict:
    """Run every case and pair through `searcher`; `known(path)` flags truth naming no card."""
    rows = []
    for case in cases:
        result = searcher.search(case.to_query())
        ranked = [h.path for h in result.hits]
        rows.append({
            "query": case.query, "group": case.group, "relevant": sorted(case.relevant),
            "as_of": case.as_of, "returned": ranked[:K], "matched": result.matched,
            # the strict part: the hits of the tier that matched first (a filled page goes on below)
            "strict": sum(1 for h in result.hits[:K] if getattr(h, "matched", result.matched) == result.matched),
            "first_hit": first_hit_ok(ranked, case.relevant),
            "p_at_5": capped_precision(ranked, case.relevant),
            "noise_at_5": noise_rate(ranked, case.relevant),
        })
    groups = {}
    for name in dict.fromkeys(r["group"] for r in rows):
        groups[name] = _summary([r for r in rows if r["group"] == name])
    pair_rows: list[dict] = []
    for pair in pairs:
        ranked = [h.path for h in searcher.search(pair.to_query()).hits]
        pair_rows.append({
            "query": pair.query, "above": pair.above, "below": pair.below, "why": pair.why,
            "held": pair_held(ranked, pair.above, pair.below),
        })
    held = sum(r["held"] for r in pair_rows)
    named = {p for c in cases for p in c.relevant} | {p for q in pairs for p in (q.above, q.below)}
    return {
        "overall": _summary(rows),
        "groups": groups,
        "pairs": {
            "total": len(pair_rows), "held": held,
            "pairs_held": held / len(pair_rows) if pair_rows else None,
            "failed": [r for r in pair_rows if not r["held"]],
        },
        "unknown_paths": sorted(p for p in named if known and not known(p)),
        "results": rows,
    }


def metrics(report: dict) -> dict[str, float]:
    """Flat `scope.metric -> value` view of a report: what a baseline comparison looks at."""
    flat = {}
    for scope, summary in [("overall", report["overall"]), *report["groups"].items()]:
        for name in ("first_hit", "p_at_5", "noise_at_5"):
            if summary.get(name) is not None:
                flat[f"{scope}.{name}"] = summary[name]
    if report["pairs"]["pairs_held"] is not None:
        flat["pairs.pairs_held"] = report["pairs"]["pairs_held"]
    return flat


def compare(report: dict, baseline: dict) -> list[dict]:
    """Every metric that got worse than in `baseline` (a report saved earlier)."""
    try:
        before = metrics(baseline)
    except (KeyError, TypeError, AttributeError):
        raise BadArgument(
            "the baseline is not a saved `memsync bench` report; create one with "
            "`memsync bench --save FILE`"
        ) from None
    now = metrics(report)
    worse = []
    for key, old in before.items():
        new = now.get(key)
        higher = HIGHER_IS_BETTER[key.rsplit(".", 1)[1]]
        if new is None:
            worse.append({"metric": key, "baseline": old, "now": None})
        elif (new < old - EPSILON) if higher else (new > old + EPSILON):
            worse.append({"metric": key, "baseline": old, "now": new})
    return worse


def read_baseline(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadArgument(
            f"cannot read the baseline {path} ({exc}); save one with `memsync bench --save FILE`"
        ) from None


def save(report: dict, path: Path) -> None:
    Path(path).write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def evaluate(index, queries: Path, searcher: Searcher | None = None) -> dict:
    """Load the truth at `queries` and run it against an open Index."""
    from memsync.search.lexical import LexicalSearcher

    cases, pairs = load(Path(queries))

    def known(path: str) -> bool:
        return tally.has_path(index, path)

    report = run(searcher or LexicalSearcher(index), cases, pairs, known)
    report["queries_file"] = str(queries)
    return report
