"""Render bench/RESULTS.md from the JSON results (never typed by hand).

    python -m bench.report
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .machine import RESULTS

OUT = Path(__file__).resolve().parent / "RESULTS.md"


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _f(value, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _pct(value) -> str:
    return "–" if value is None else f"{value:.1%}"


def _table(headers: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def _stamp(data: dict) -> str:
    m = data["machine"]
    dirty = " (uncommitted changes)" if data.get("dirty") else ""
    return (f"_Run {data['date']} at commit `{data['commit']}`{dirty}; {m['cpu']}, {m['cores']} cores, "
            f"{m['memory_gib']} GiB; Python {data['python']}, SQLite {data['sqlite']}._")


# --- retrieval ------------------------------------------------------------------------------


def retrieval_md(data: dict) -> list[str]:
    out = ["## Retrieval quality", "", _stamp(data), ""]
    if data.get("quick"):
        out += ["**Quick run: only part of each real set's queries; not for decisions.**", ""]
    out += [
        "Real sets: memsync as shipped (`WEIGHTS`, tier policy of `LexicalSearcher`) beside the plain "
        "FTS5 floor (same pre-tokenized text in one column, every query token quoted and OR-ed, "
        "`bm25()`), and the same floor with FTS5's Porter stemmer.", "",
    ]
    rows = []
    for name, r in data["real"].items():
        for label, key in (("FTS5 floor", "reference"), ("FTS5 floor + porter", "reference_porter"),
                           (f"memsync ({data['shipped']})", "memsync")):
            m = r[key]
            rows.append([name, r["docs"], r["queries"], label, _f(m["ndcg@10"]), _f(m["recall@10"]),
                         _f(m["recall@100"]), _f(m["mrr@10"])])
    out += _table(["set", "docs", "queries", "system", "nDCG@10", "R@10", "R@100", "MRR@10"], rows)
    for name, why in data.get("skipped", {}).items():
        out.append(f"\nSkipped {name}: {why}")
    g = data["golden"]
    out += ["", f"Golden memory-style set ({g['docs']} cards, {g['queries']} queries, {g['pairs']} pairs). "
            "The floor knows no validity or dates, so it also returns superseded cards.", ""]
    rows = []
    for label, key in (("FTS5 floor", "reference"), (f"memsync ({data['shipped']})", "memsync")):
        s = g[key]["summary"]
        rows.append([label, _pct(s["first_hit"]), _pct(s["p_at_5"]), _pct(s["noise_at_5"]),
                     _pct(s["keyword_first_hit"]), _pct(s["keyword_noise_at_5"]), _pct(s["pairs_held"])])
    out += _table(["system", "first hit", "P@5 (capped)", "noise@5", "keyword first hit",
                   "keyword noise@5", "pairs held"], rows)
    out += ["", "memsync on the golden set, by group:", ""]
    rows = []
    for name, s in g["memsync"]["groups"].items():
        tiers = ", ".join(f"{t} {n}" for t, n in s["tiers"].items())
        rows.append([name, s["queries"], _pct(s["first_hit"]), _pct(s["p_at_5"]), _pct(s["noise_at_5"]), tiers])
    out += _table(["group", "queries", "first hit", "P@5 (capped)", "noise@5", "tiers"], rows)
    failed = g["memsync"].get("failed_pairs") or []
    if failed:
        out += ["", "Pairs not held:"] + [f"- `{p['query']}`: {p['above']} above {p['below']} ({p['why']})" for p in failed]
    tuning = data.get("tuning")
    if tuning:
        sets = list(next(iter(tuning["table"].values()))["parts"])
        out += ["", "### Tuning grid", "",
                "nDCG@10 on each real set (top-10 pages) and the golden score (mean of first hit, "
                "P@5, 1 − noise, pairs held); variants are ranked by the mean over all sets.", ""]
        rows = []
        for name, t in sorted(tuning["table"].items(), key=lambda kv: -kv[1]["mean"]):
            mark = " **(best)**" if name == tuning["best"] else ""
            mark += " **(best without stemming)**" if name == tuning.get("best_settable") != tuning["best"] else ""
            mark += " (shipped)" if name == tuning["shipped"] else ""
            rows.append([name + mark, *(_f(t["parts"][s]) for s in sets), _f(t["mean"])])
        out += _table(["variant", *sets, "mean"], rows)
        out += ["", "`porter` variants index the same text with FTS5's `porter unicode61` tokenizer in a "
                "scratch index (memsync's own tokenizer is unchanged)."]
    return out


def retrieval_summary(data: dict) -> str:
    lines = []
    for name, r in data["real"].items():
        lines.append(f"{name:<14} nDCG@10 memsync {r['memsync']['ndcg@10']:.4f}  floor {r['reference']['ndcg@10']:.4f}")
    s = data["golden"]["memsync"]["summary"]
    lines.append(f"golden         first hit {_pct(s['first_hit'])}, keyword noise {_pct(s['keyword_noise_at_5'])}, "
                 f"pairs held {_pct(s['pairs_held'])}")
    if data.get("tuning"):
        t = data["tuning"]
        lines.append(f"best variant: {t['best']}; best without stemming: {t.get('best_settable')}; "
                     f"shipped: {t['shipped']}")
    return "\n".join(lines)


# --- performance ----------------------------------------------------------------------------


def perf_md(data: dict) -> list[str]:
    from .perf import render_tables

    return ["## Performance", "", _stamp(data), "", *render_tables(data)]


def write() -> Path:
    parts = ["# memsync benchmarks", "",
             "Generated by `python -m bench.report` from `bench/results/*.json`; do not edit by hand. "
             "Regenerate with `make bench`.", ""]
    retrieval = _load("retrieval")
    perf = _load("perf")
    if retrieval:
        parts += retrieval_md(retrieval) + [""]
    if perf:
        parts += perf_md(perf) + [""]
    big = _load("perf-100k")
    if big:
        from .perf import render_tables

        parts += ["### 100,000 cards (`python -m bench.perf --sizes '' --big`, a separate run)", "",
                  _stamp(big), "", *render_tables(big, extras=False), ""]
    OUT.write_text("\n".join(parts), encoding="utf-8")
    write_readme(parts[4:])
    return OUT


README = OUT.parent.parent / "README.md"
START, END = "<!-- bench-results:start -->", "<!-- bench-results:end -->"


def write_readme(lines: list[str]) -> None:
    """Put the same tables into the README, between its markers, one heading level down."""
    text = README.read_text(encoding="utf-8")
    if START not in text or END not in text:
        return
    kept, skipping = [], False
    for line in lines:  # the tuning grid stays in RESULTS.md only
        if line.startswith("#"):
            skipping = line.startswith("### Tuning grid")
        if not skipping:
            kept.append("#" + line if line.startswith("#") else line)
    body = "\n".join(kept).strip()
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    README.write_text(f"{head}{START}\n{body}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    print(write(), file=sys.stderr)
