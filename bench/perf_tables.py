"""The performance tables of RESULTS.md, rendered from a bench.perf result (a pure function of
the JSON, so bench.report can use it without importing the bench itself)."""

from __future__ import annotations

import json


def _row(label, *cells):
    return "| " + " | ".join([label, *[str(c) for c in cells]]) + " |"


def render_tables(data: dict, extras: bool = True) -> list[str]:
    sizes = data["sizes"]
    heads = [f"{int(n):,} cards" for n in sizes]
    out = ["Medians of repeated runs; each memsync figure beside its floor from the same run.", "",
           "| figure | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]

    def line(label, fmt):
        out.append(_row(label, *[fmt(s) for s in sizes.values()]))

    line("rebuild, cards/s", lambda s: f"{s['rebuild']['cards_per_s']:,.0f}")
    line("floor: FTS5 bulk insert, cards/s", lambda s: f"{s['rebuild']['floor_cards_per_s']:,.0f}")
    line("rebuild ÷ floor (time)", lambda s: f"{s['rebuild']['vs_floor']:.1f}×")
    line("rebuild peak RSS", lambda s: f"{s['rebuild']['peak_rss_mib']:.0f} MiB")
    line("rebuild prep: read / parse / tokenize", lambda s: " / ".join(
        f"{s['rebuild']['prep'][k]:.2f}s" for k in ("read_s", "parse_s", "tokenize_s")))
    line("index ÷ notes (bytes)", lambda s: f"{s['index']['ratio']:.2f}×" if "index" in s else "not measured")
    line("reconcile, nothing changed", lambda s: f"{s['reconcile']['seconds'] * 1000:.0f} ms")
    line("floor: walk + lstat", lambda s: f"{s['reconcile']['floor_walk_seconds'] * 1000:.0f} ms")
    line("search p50 / p99 (in-process)", lambda s: f"{s['search']['p50_ms']:.2f} / {s['search']['p99_ms']:.2f} ms")
    line("floor: bare FTS5 OR query p50 / p99",
         lambda s: f"{s['search']['floor_p50_ms']:.2f} / {s['search']['floor_p99_ms']:.2f} ms")
    line("marker searches with a wrong answer", lambda s: s["search"]["marker_wrong"])
    line("`memsync search` whole process", lambda s: f"{s['cli']['memsync_search']:.0f} ms")
    line("floor: `python -c pass`", lambda s: f"{s['cli']['python_startup']:.0f} ms")
    line("`grep -rl`", lambda s: f"{s['cli']['grep_r']:.0f} ms")
    line("`rg -l`", lambda s: "not installed" if s["cli"].get("rg") is None else f"{s['cli']['rg']:.0f} ms")
    out += ["", "In-process search p50 by query kind (ms):", ""]
    kinds = list(next(iter(sizes.values()))["search"]["by_kind_p50_ms"])
    out += ["| kind | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for kind in kinds:
        out.append(_row(kind, *[f"{s['search']['by_kind_p50_ms'][kind]:.2f}" for s in sizes.values()]))
    if data.get("verdicts"):
        t = data["targets"]
        names = {
            "rebuild_vs_floor": f"rebuild within {t['rebuild_vs_floor_max']:g}× of the floor",
            "rebuild_cards_per_s": f"rebuild ≥ {t['rebuild_cards_per_s_min']:,} cards/s",
            "reconcile": f"reconcile ≤ {t['reconcile_s_max']} s",
            "search_p50": f"search p50 ≤ {t['search_p50_ms_max']:g} ms",
            "search_p99": f"search p99 ≤ {t['search_p99_ms_max']:g} ms",
            "cli_search": f"`memsync search` ≤ {t['cli_search_ms_max']:g} ms",
            "index_ratio": f"index ≤ {t.get('index_ratio_max', 3):g}× the notes' bytes",
        }
        out += ["", "Targets at 10,000 cards:", ""]
        out += [f"- {names[k]}: {'met' if ok else '**not met**'}" for k, ok in data["verdicts"].items()]
    if not extras:
        return out
    out += ["", "### Watcher and MCP", ""]
    for name, comp in data.get("components", {}).items():
        out += _component(name, comp)
    out += ["### Peer", ""]
    for name, peer in data.get("peers", {}).items():
        if "index_seconds" not in peer:
            out.append(f"- {name}: {peer.get('skipped') or peer.get('failed')}")
            continue
        ours = data["sizes"][str(peer["cards"])]
        version = peer["version"].split()[-1] if peer["version"] else "?"
        out += [f"{name} {version} on the same {peer['cards']:,}-card vault; {peer['note']}.", "",
                f"| figure | memsync | {name} |", "|---|---|---|",
                _row("first full index", f"{ours['rebuild']['seconds']:.1f} s (rebuild, in-process)",
                     f"{peer['index_seconds']:.1f} s ({peer['index_cards_per_s']:.1f} cards/s)"),
                _row("search for a marker, whole process", f"{ours['cli']['memsync_search']:.0f} ms",
                     f"{peer['search_ms']:.0f} ms ({peer['markers_found']}/{peer['search_runs']} found)")]
    return out


def _watch(comp: dict) -> list[str]:
    save, burst, idle, mem = comp["single_save"], comp["burst"], comp["idle"], comp["memory_end"]
    lines = [f"`watch_latency`: a live `memsync watch` over a {comp['vault_cards']:,}-card vault.", "",
             "| figure | value |", "|---|---|"]
    for how, row in save.items():
        if isinstance(row, dict):
            lines.append(_row(f"single save → searchable ({how}), p50 / p99",
                              f"{row['p50_ms']:.0f} / {row['p99_ms']:.0f} ms"))
    lines += [
        _row(f"burst of {burst['files']:,} files: searchable after the last write",
             f"{burst['searchable_after_last_write_s']:.2f} s"),
        _row(f"idle CPU over {idle['seconds']:.0f} s", f"{idle['cpu_pct']:.2f} %"),
        _row("watcher RSS / peak", f"{mem['rss_mb']:.0f} / {mem['peak_mb']:.0f} MB"),
    ]
    checks = comp.get("checks") or {}
    if checks:
        lines += ["", "Targets: " + ", ".join(f"{k} {'met' if ok else '**not met**'}" for k, ok in checks.items())]
    return [*lines, ""]


def _component(name: str, comp: dict) -> list[str]:
    if "skipped" in comp or "failed" in comp:
        return [f"- {name}: {comp.get('skipped') or 'failed: ' + str(comp.get('failed'))}"]
    if name == "watch_latency" and "single_save" in comp:
        return _watch(comp)
    results = comp.get("results")
    lines = [f"`{name}`: {comp.get('what', '')}", ""]
    if isinstance(results, dict) and all(isinstance(v, dict) for v in results.values()):
        keys = [k for k in ("median_s", "p50_s", "p99_s", "p90_s", "min_s", "max_s", "runs")
                if any(k in v for v in results.values())]
        lines += ["| measure | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
        for label, row in results.items():
            lines.append(_row(label, *[_num(row.get(k)) for k in keys]))
    else:
        lines.append("```\n" + json.dumps(results if results is not None else comp, indent=1)[:3000] + "\n```")
    return [*lines, ""]


def _num(value) -> str:
    if isinstance(value, float):
        return f"{value * 1000:.1f} ms" if value < 100 else f"{value:.1f}"
    return "–" if value is None else str(value)
