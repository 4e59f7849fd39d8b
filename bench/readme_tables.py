"""The short benchmark summary in README.md, between its markers: what a newcomer asks first
(how good is the search on each kind of query, with and without meaning; how fast at 10,000 and
100,000 cards), each figure beside the floor measured in the same run. Rendered from
bench/results/*.json by `python -m bench.report`, like docs/benchmarks.md; never typed by hand.
"""

from __future__ import annotations

from pathlib import Path

from . import markers
from .markdown import table

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- bench-summary:start -->", "<!-- bench-summary:end -->"
# Where the hybrid column comes from: a retrieval run with `--semantic` (lexical, hybrid and
# the floors of the same run), and where the plain lexical figures come from when it is absent.
SEMANTIC_RUN, LEXICAL_RUN = "retrieval-semantic", "retrieval"


def _f(value) -> str:
    return "–" if value is None else f"{value:.3f}"


def _ms(value) -> str:
    return "–" if value is None else f"{value:.1f} ms"


def _s(value) -> str:
    return "–" if value is None else f"{value:.2f} s"


def _ndcg(figures: dict | None) -> float | None:
    return None if figures is None else figures["ndcg@10"]


def quality_rows(data: dict) -> list[list[str]]:
    """One row per set and kind of query (a set without kinds: one row): queries, the best plain
    FTS5 variant for that kind, memsync, memsync with --semantic (– when not run)."""
    rows = []
    for name, r in data["sets"].items():
        kinds = sorted(r.get("by_kind", {}).get("memsync", {})) or [None]
        for kind in kinds:
            if kind is None:
                ours = r["systems"]["memsync"]
                hybrid = r["systems"].get("semantic")
                floor = r["floor"][r["best_floor"]] if r.get("best_floor") else None
            else:
                ours = r["by_kind"]["memsync"][kind]
                hybrid = r["by_kind"].get("semantic", {}).get(kind)
                floor = r.get("best_floor_by_kind", {}).get(kind)
            rows.append([name, kind or "all", str(ours["queries"]), _f(_ndcg(floor)),
                         _f(_ndcg(ours)), _f(_ndcg(hybrid))])
    return rows


def speed_rows(sizes: dict[str, dict], start: dict | None = None) -> list[list[str]]:
    """One row per measure, a column per size, each figure beside its floor. `start`: a later
    `bench.perf --start-only` run (card count -> figures), which the whole-process row prefers."""
    def cell(size: dict, measure: str) -> str:
        if measure == "search":
            s = size["search"]
            return (f"{s['p50_ms']:.2f} / {s['p99_ms']:.1f} ms "
                    f"(FTS5 OR {s['floor_p50_ms']:.2f} / {s['floor_p99_ms']:.1f})")
        if measure == "rebuild":
            r = size["rebuild"]
            return f"{_s(r['seconds'])} (raw floor {_s(r.get('raw_floor_seconds'))}, one reader {_s(r.get('one_reader_seconds'))})"
        if measure == "first":
            r = size["rebuild"]
            return (f"{_s(r['first_index_seconds'])} (the rebuild {_s(r['seconds'])})"
                    if "first_index_seconds" in r else "not measured")
        if measure == "reconcile":
            r = size["reconcile"]
            return f"{_s(r['seconds'])} (walk + lstat {_s(r.get('floor_walk_seconds'))})"
        c = (start or {}).get(str(size["cards"]), size.get("cli", {}))
        installed = "memsync_search_installed" in c  # the command as the README installs it
        return (f"{_ms(c.get('memsync_search_installed' if installed else 'memsync_search'))} "
                f"({'wheel install, ' if installed else ''}`python -c pass` {_ms(c.get('python_startup'))})")
    labels = {"search": "search p50 / p99, in-process", "rebuild": "rebuild",
              "first": "first index, into a new index", "reconcile": "reconcile, nothing changed", "cli": "`memsync search`, whole process"}
    if start:
        labels["cli"] += " (`bench.perf --start-only`)"
    rows = [[label, *(cell(size, measure) for size in sizes.values())] for measure, label in labels.items()]
    return [row for row in rows if any(c != "not measured" for c in row[1:])]  # older results lack some


def render(load) -> list[str]:
    """The summary's lines; `load(name)` gives bench/results/<name>.json or None."""
    lines: list[str] = []
    lexical, semantic = load(LEXICAL_RUN), load(SEMANTIC_RUN)
    runs = [run for run in (lexical, semantic) if run]
    if runs:
        # A set the --semantic run scored is taken whole from it (lexical, hybrid and floors of
        # one run); the others from the lexical run.
        sets = {name: r for run in runs for name, r in run["sets"].items()}
        commits = " and ".join(f"`{run['commit']}`" for run in runs)
        lines += [f"Search quality, nDCG@10 by kind of query (`python -m bench.retrieval`, commits {commits}; "
                  "the last column is `memsync[semantic]`'s shipped blend, – where not run):", "",
                  *table(["set", "kind", "queries", "best plain FTS5", "memsync", "memsync --semantic"],
                          quality_rows({"sets": sets})), ""]
    sizes = {}
    for name in ("perf", "perf-100k"):
        data = load(name)
        for n, size in (data or {}).get("sizes", {}).items():
            if "search" in size and int(n) >= 10_000:
                sizes[f"{int(n):,} cards (`{data['commit']}`)"] = size
    if sizes:
        start = load("start")
        later = {n: figures for n, figures in (start or {}).get("sizes", {}).items()
                 if any(str(size["cards"]) == n for size in sizes.values())}
        source = f" (the whole-process row from commit `{start['commit']}`)" if later and start else ""
        lines += [f"Speed on this 2-core machine (`python -m bench.perf`, medians), each beside its floor{source}:", "",
                  *table(["", *sizes], speed_rows(sizes, later or None)), ""]
    return lines


def write(load, readme: Path = README) -> None:
    """Put the summary into the README between its markers (nothing when they are missing)."""
    markers.replace(readme, START, END, "\n".join(render(load)).strip())


def shown(readme: Path = README) -> str:
    """What the README holds between its markers now."""
    return markers.shown(readme, START, END)
