"""`memsync bench`: retrieval quality on this machine's vault, against a saved baseline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import api, benchmark
from . import Context, command, emit, main


def _pct(value) -> str:
    return "-" if value is None else f"{value:.1%}"


def render(report: dict) -> str:
    lines = [f"{'group':<16} {'queries':>7} {'first hit':>10} {'P@5':>7} {'noise@5':>8}  tiers"]
    for name, s in [*report["groups"].items(), ("overall", report["overall"])]:
        tiers = ", ".join(f"{t} {n}" for t, n in s["tiers"].items())
        lines.append(
            f"{name:<16} {s['queries']:>7} {_pct(s['first_hit']):>10} {_pct(s['p_at_5']):>7} "
            f"{_pct(s['noise_at_5']):>8}  {tiers}"
        )
    pairs = report["pairs"]
    if pairs["total"]:
        lines.append(f"pairs held: {pairs['held']}/{pairs['total']} ({_pct(pairs['pairs_held'])})")
        lines += [f"  failed: {p['query']!r}: {p['above']} above {p['below']}" for p in pairs["failed"]]
    missed = [r for r in report["results"] if not r["first_hit"]]
    for row in missed[:20]:
        lines.append(f"  first hit wrong: {row['query']!r} -> {row['returned'][:1] or 'nothing'}")
    if report["unknown_paths"]:
        lines.append("truth names paths not in the index (typo, or not indexed yet?):")
        lines += [f"  {p}" for p in report["unknown_paths"]]
    for worse in report.get("regressions", []):
        lines.append(
            f"REGRESSION {worse['metric']}: {_pct(worse['baseline'])} -> {_pct(worse['now'])}"
        )
    if "regressions" in report and not report["regressions"]:
        lines.append("no regression against the baseline")
    return "\n".join(lines)


@command(main, "bench")
@click.option("--queries", "queries_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Ground-truth file (default <home>/bench_queries.json).")
@click.option("--save", "save_to", type=click.Path(dir_okay=False, path_type=Path),
              help="Save this run as a baseline file.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="Compare with a saved run; exit 1 if any metric got worse.")
def bench(obj: Context, as_json: bool, queries_file, save_to, baseline):
    """Measure search quality on your own vault against your own ground truth.

    The truth file lists queries and the card paths that answer them; queries with no
    relevant card must return nothing. Metrics: first-hit accuracy, P@5 capped at the
    number of relevant cards, noise @5, the tier that answered, pairs held.

    \b
    Example:
      memsync bench --save ~/bench-before.json
      memsync bench --baseline ~/bench-before.json   # exit 1 on any regression
    """
    cfg = obj.cfg
    api.require_index(cfg)
    old = benchmark.read_baseline(baseline) if baseline else None
    with api.open_index(cfg) as index:
        report = benchmark.evaluate(index, queries_file or cfg.bench_queries)
    if old is not None:
        report["regressions"] = benchmark.compare(report, old)
    if save_to:
        benchmark.save(report, save_to)
    emit(report, as_json, render)
    if report.get("regressions"):
        sys.exit(1)
