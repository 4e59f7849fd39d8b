"""The performance tables of RESULTS.md, rendered from a bench.perf result (a pure function of
the JSON, so bench.report can use it without importing the bench itself)."""

from __future__ import annotations

import json


def _row(label, *cells):
    return "| " + " | ".join([label, *[str(c) for c in cells]]) + " |"


def render_tables(data: dict, extras: bool = True) -> list[str]:
    sizes = data["sizes"]
    heads = [f"{int(n):,} cards" for n in sizes]
    load = data.get("load_average_at_start")
    out = ["Medians of repeated runs; each memsync figure beside its floor from the same run"
           + (f" (load average {load[0]:g} at the start, {data['load_average_at_end'][0]:g} at the end)."
              if load and data.get("load_average_at_end") else "."), "",
           "| figure | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    current: dict = {}

    def s_cards(seconds):  # cards/s of the size being rendered
        return current["cards"] / seconds

    def line(label, fmt):
        cells = []
        for size in sizes.values():
            current["cards"] = size["cards"]
            cells.append(fmt(size))
        if any(cell != "not measured" for cell in cells):  # a figure an older result lacks
            out.append(_row(label, *cells))

    def rb(key, fmt):  # a rebuild figure a result from before issue 22 does not have
        return lambda s: fmt(s["rebuild"][key]) if key in s["rebuild"] else "not measured"

    line("rebuild, cards/s", lambda s: f"{s['rebuild']['cards_per_s']:,.0f}")
    line("processes reading (usable cores)", lambda s: (
        f"{s['rebuild']['readers']} ({s['rebuild']['usable_cores']})" if "readers" in s["rebuild"]
        else "not measured"))
    line("rebuild with one reader, cards/s", rb("one_reader_seconds", lambda v: f"{s_cards(v):,.0f}"))
    line("speed-up over one reader", rb("speedup", lambda v: f"{v:.2f}×"))
    line("speed-up of single rounds, lowest – highest",
         rb("speedup_range", lambda v: f"{v[0]:.2f}–{v[1]:.2f}×" if v else "not measured"))
    line("one reader's time outside the load (one core whatever the count)",
         rb("one_reader_serial_fraction", lambda v: f"{v:.0%}"))
    line("the most that allows on these cores (Amdahl)", rb("speedup_bound", lambda v: f"{v:.2f}×"))
    line("CPU of the parallel rebuild ÷ one reader's", rb("parallel_cpu_vs_one_reader", lambda v: f"{v:.2f}×"))
    line("the most its CPU allows, every core busy outside the serial part",
         rb("work_bound", lambda v: f"{v:.2f}×"))
    line("with a busy loop a core beside it: rebuild / one reader", rb("busy", lambda v: (
        f"{v['seconds']:.2f} / {v['one_reader_seconds']:.2f} s ({v['speedup']:.2f}×)")))
    line("raw floor: read + FTS5 unicode61 insert, cards/s", rb("raw_floor_cards_per_s", lambda v: f"{v:,.0f}"))
    line("rebuild ÷ raw floor (time)", rb("vs_raw_floor", lambda v: f"{v:.1f}×"))
    line("rebuild over the index it replaces ÷ raw floor", rb("over_index_vs_raw_floor", lambda v: f"{v:.1f}×"))
    line("first index (a reconcile into a new index) ÷ rebuild", rb("first_index_vs_rebuild", lambda v: f"{v:.2f}×"))
    line("the writer alone (files read before its first row) ÷ raw floor",
         rb("writer_alone_vs_raw_floor", lambda v: f"{v:.1f}×"))
    line("floor: pre-tokenized FTS5 bulk insert, cards/s", lambda s: f"{s['rebuild']['floor_cards_per_s']:,.0f}")
    line("rebuild ÷ pre-tokenized floor (time)", lambda s: f"{s['rebuild']['vs_floor']:.1f}×")
    line("rebuild peak RSS (largest process)", lambda s: f"{s['rebuild']['peak_rss_mib']:.0f} MiB")
    line("rebuild peak RSS of the writer", rb("writer_peak_rss_mib", lambda v: f"{v:.0f} MiB"))
    line("rebuild prep: read / parse / tokenize", lambda s: " / ".join(
        f"{s['rebuild']['prep'][k]:.2f}s" for k in ("read_s", "parse_s", "tokenize_s")))
    def links(key):  # measured at 10,000 cards only
        return lambda s: (f"{s['links'][f'linked_{key}']:.1f} s ({s['links'][f'{key}_vs_plain']:.2f}× "
                          "without links)" if "links" in s else "not measured")

    per_note = next((s["links"]["links_per_note"] for s in sizes.values() if "links" in s), 0)
    line(f"with {per_note} wikilinks a note: first index", links("first_index"))
    line(f"with {per_note} wikilinks a note: rebuild over that index", links("rebuild_over_it"))
    line(f"with {per_note} wikilinks a note: rebuild into a new index", links("rebuild_new"))
    line("index ÷ notes (bytes)", lambda s: f"{s['index']['ratio']:.2f}×" if "index" in s else "not measured")
    line("reconcile, nothing changed", lambda s: f"{s['reconcile']['seconds'] * 1000:.0f} ms")
    line("floor: walk + lstat", lambda s: f"{s['reconcile']['floor_walk_seconds'] * 1000:.0f} ms")
    line("search p50 / p99 (in-process)", lambda s: f"{s['search']['p50_ms']:.2f} / {s['search']['p99_ms']:.2f} ms")
    line("floor: bare FTS5 OR query p50 / p99",
         lambda s: f"{s['search']['floor_p50_ms']:.2f} / {s['search']['floor_p99_ms']:.2f} ms")
    line("marker searches with a wrong answer", lambda s: s["search"]["marker_wrong"])
    def cli_ms(key):  # a row only once some size has it: results from before it have none
        return lambda s: f"{s['cli'][key]:.0f} ms" if key in s["cli"] else "not measured"

    for key, label in (("memsync_search_installed", "`memsync search` whole process, installed from the wheel"),
                       ("memsync_search", "`memsync search` whole process, this checkout's editable install"),
                       ("memsync_brief", "`memsync brief` whole process"),
                       ("python_startup", "floor: `python -c pass`"),
                       ("python_bare", "floor: `python -c pass`, a venv with nothing installed"),
                       ("import_click", "`python -c 'import click'` (the CLI framework alone)")):
        if any(key in s["cli"] for s in sizes.values()):
            line(label, cli_ms(key))
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
            "cli_brief": f"`memsync brief` ≤ {t.get('cli_brief_ms_max', 150):g} ms",
            "index_ratio": f"index ≤ {t.get('index_ratio_max', 3):g}× the notes' bytes",
        }
        names.update({
            "rebuild_vs_raw_floor": f"rebuild within {t.get('rebuild_vs_raw_floor_max', 3):g}× of the raw floor",
            "rebuild_speedup": f"rebuild ≥ {t.get('rebuild_speedup_min', 1.7):g}× faster than one reader",
        })
        out += ["", "Targets at 10,000 cards:", ""]
        out += [f"- {names[k]}: {'met' if ok else '**not met**'}" for k, ok in data["verdicts"].items()]
    if data.get("verdicts_100k"):
        t = data["targets_100k"]
        names = {
            "rebuild_vs_raw_floor": f"rebuild within {t['rebuild_vs_raw_floor_max']:g}× of the raw floor",
            "rebuild_speedup": f"rebuild ≥ {t['rebuild_speedup_min']:g}× faster than one reader",
            "rebuild_peak_rss": f"rebuild peak RSS ≤ {t['rebuild_peak_rss_mib_max']:g} MiB",
            "reconcile": f"reconcile ≤ {t['reconcile_s_max']} s",
            "search_p50": f"search p50 ≤ {t['search_p50_ms_max']:g} ms",
            "search_p99": f"search p99 ≤ {t['search_p99_ms_max']:g} ms",
            "cli_search": f"`memsync search` ≤ {t['cli_search_ms_max']:g} ms",
            "watch_save_p50_within_2x": "watcher save → searchable p50 within 2× of 10,000 cards",
            "watch_save_p99_within_2x": "watcher save → searchable p99 within 2× of 10,000 cards",
        }
        out += ["", "Targets at 100,000 cards:", ""]
        out += [f"- {names[k]}: {'met' if ok else '**not met**'}" for k, ok in data["verdicts_100k"].items()]
    out += _projection(data.get("projection") or {})
    out += _embedding(data.get("embedding") or {})
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


def _projection(proj: dict) -> list[str]:
    if not proj:
        return []
    labels = {"rebuild_over_index_s": ("rebuild over the index it replaces", "s"),
              "index_mib": ("index size", "MiB"),
              "rebuild_peak_rss_mib": ("rebuild peak RSS", "MiB"),
              "search_p50_ms": ("search p50 (in-process)", "ms"),
              "search_p99_ms": ("search p99 (in-process)", "ms"),
              "reconcile_s": ("reconcile, nothing changed", "s")}
    lo, hi = proj["from"]
    out = ["", f"Projected to {proj['to']:,} cards from the growth measured between {lo:,} and "
           f"{hi:,} (figure ∝ cards^k; not measured):", "",
           f"| figure | {lo:,} | {hi:,} | k | {proj['to']:,} (projected) |", "|---|---|---|---|---|"]
    for key, (label, unit) in labels.items():
        if key in proj:
            f = proj[key]
            out.append(_row(label, f"{f['at_lo']:,.2f} {unit}", f"{f['at_hi']:,.2f} {unit}",
                            f"{f['exponent']:.2f}", f"{f['projected']:,.1f} {unit}"))
    return out


def embedding_lines(emb: dict) -> list[str]:
    """The embedding table alone (a `bench.perf --embedding-only` run)."""
    return _embedding(emb)


def _embedding(emb: dict) -> list[str]:
    if not emb:
        return []
    if "skipped" in emb or "failed" in emb:
        return ["", f"Embedding on every core: {emb.get('skipped') or 'failed'}"]
    cores = emb["usable_cores"]
    out = ["", f"Embedding (`memsync index --embed`), docs/s, one engine vs {cores} one-thread engine processes "
           f"(load average {emb['load_average_at_start'][0]:g} at the start):", "",
           f"| cards | docs (passages) | 1 core | {cores} cores | speed-up |", "|---|---|---|---|---|"]
    for name in ("short_cards", "long_notes"):
        if name in emb:
            e = emb[name]
            out.append(_row(name.replace("_", " "), f"{e['docs']} ({e['passages']})",
                            f"{e['one_core_docs_per_s']:.2f}", f"{e['all_cores_docs_per_s']:.2f}",
                            f"{e['speedup']:.2f}×"))
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
    cold = comp.get("cold_start")
    if cold:
        lines.append(_row("cold start with no index: every card indexed, RSS / peak",
                          f"{cold['index_all_s']:.1f} s, {cold['rss_mb']:.0f} / {cold['peak_mb']:.0f} MB"))
        if "catch_up_peak_mb" in cold:
            lines.append(_row("of which the watcher's own peak / its catch-up process's",
                              f"{cold['watcher_peak_mb']:.0f} / {cold['catch_up_peak_mb']:.0f} MB"))
    checks = comp.get("checks") or {}
    if checks:
        lines += ["", "Targets: " + ", ".join(f"{k} {'met' if ok else '**not met**'}" for k, ok in checks.items())]
        if comp["vault_cards"] != 10_000:  # bench.watch_latency's targets are for its own vault
            lines[-1] += " (the targets were set for 10,000 cards)"
    return [*lines, ""]


def _component(name: str, comp: dict) -> list[str]:
    if "skipped" in comp or "failed" in comp:
        return [f"- {name}: {comp.get('skipped') or 'failed: ' + str(comp.get('failed'))}"]
    if name.startswith("watch_latency") and "single_save" in comp:
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
