"""What a perf run concludes: the targets (issue 22's at 100,000 cards beside the 10,000-card
ones), whether each was met, and the 1,000,000-card projection from the growth measured."""

from __future__ import annotations

import math

from . import index_size

TARGETS = {  # at 10k cards
    "rebuild_vs_floor_max": 3.0, "rebuild_cards_per_s_min": 2000, "reconcile_s_max": 0.5,
    "search_p50_ms_max": 2.0, "search_p99_ms_max": 10.0, "cli_search_ms_max": 70.0,
    "cli_brief_ms_max": 150.0,
    "index_ratio_max": index_size.TARGET_RATIO,
    # issue 22, at 10k and 100k: the raw floor, the speed-up on 2 cores or more
    "rebuild_vs_raw_floor_max": 3.0, "rebuild_speedup_min": 1.7,
}
TARGETS_100K = {"rebuild_vs_raw_floor_max": 3.0, "rebuild_speedup_min": 1.7,
                "rebuild_peak_rss_mib_max": 300.0, "reconcile_s_max": 0.5,
                "search_p50_ms_max": 4.0, "search_p99_ms_max": 20.0, "cli_search_ms_max": 80.0}


# figure -> where it is in a size's result. The rebuild over an index, which goes through the WAL
# at every size: one into a new file skips the WAL up to sync.JOURNALED_REBUILD_FILES, and would
# grow faster past it than its measured points say.
PROJECTED = {
    "rebuild_over_index_s": ("rebuild", "over_index_seconds"), "index_mib": ("index", "index_bytes"),
    "rebuild_peak_rss_mib": ("rebuild", "peak_rss_mib"),
    "search_p50_ms": ("search", "p50_ms"), "search_p99_ms": ("search", "p99_ms"),
    "reconcile_s": ("reconcile", "seconds"),
}


def projection(sizes: dict, to: int = 1_000_000) -> dict:
    """Each figure at `to` cards, extrapolated from its growth between the two largest sizes
    measured: figure ~ cards^k, k from those two points (k = 1: linear)."""
    measured = sorted(int(n) for n in sizes)
    if len(measured) < 2 or measured[-1] < 100_000:
        return {}
    lo, hi = measured[-2], measured[-1]
    out: dict = {"from": [lo, hi], "to": to}
    for name, (part, key) in PROJECTED.items():
        a, b = sizes[str(lo)][part][key], sizes[str(hi)][part][key]
        if name == "index_mib":
            a, b = a / 2**20, b / 2**20
        k = math.log(b / a) / math.log(hi / lo) if a > 0 and b > 0 else 1.0
        out[name] = {"at_lo": a, "at_hi": b, "exponent": round(k, 3), "projected": b * (to / hi) ** k}
    return out


# verdict -> where its figure is in a size's result, and its target: one named *_max is a
# ceiling, one named *_min a floor
CHECKS = {
    "rebuild_vs_floor": ("rebuild", "vs_floor", "rebuild_vs_floor_max"),
    "rebuild_cards_per_s": ("rebuild", "cards_per_s", "rebuild_cards_per_s_min"),
    "rebuild_vs_raw_floor": ("rebuild", "vs_raw_floor", "rebuild_vs_raw_floor_max"),
    "rebuild_peak_rss": ("rebuild", "peak_rss_mib", "rebuild_peak_rss_mib_max"),
    "reconcile": ("reconcile", "seconds", "reconcile_s_max"),
    "search_p50": ("search", "p50_ms", "search_p50_ms_max"),
    "search_p99": ("search", "p99_ms", "search_p99_ms_max"),
    # as the README installs memsync (a wheel, no editable import hook), where the run made one
    "cli_search": ("cli", ("memsync_search_installed", "memsync_search"), "cli_search_ms_max"),
    "cli_brief": ("cli", "memsync_brief", "cli_brief_ms_max"),
    "index_ratio": ("index", "ratio", "index_ratio_max"),
    "rebuild_speedup": ("rebuild", "speedup", "rebuild_speedup_min"),
}
# Which verdicts each size is judged by, in the order the tables list them
VERDICTS = ("rebuild_vs_floor", "rebuild_cards_per_s", "reconcile", "search_p50", "search_p99",
            "cli_search", "cli_brief", "index_ratio", "rebuild_vs_raw_floor", "rebuild_speedup")
VERDICTS_100K = ("rebuild_vs_raw_floor", "rebuild_peak_rss", "reconcile", "search_p50", "search_p99",
                 "cli_search", "rebuild_speedup")


def judged(size: dict, targets: dict, names: tuple[str, ...]) -> dict[str, bool]:
    """Whether each figure of `names` (CHECKS) met its target. A figure the run did not measure
    (an older result) is left out, and so is the speed-up on one core, where none can be had."""
    out = {}
    for name in names:
        part, figures, target = CHECKS[name]
        found = [f for f in ((figures,) if isinstance(figures, str) else figures) if f in size.get(part, {})]
        if not found:
            continue
        figure = found[0]
        if name == "rebuild_speedup" and size["rebuild"].get("usable_cores", 1) < 2:
            continue
        value, limit = size[part][figure], targets[target]
        out[name] = value <= limit if target.endswith("_max") else value >= limit
    return out


def verdicts(data: dict) -> dict:
    size = data["sizes"].get("10000")
    return judged(size, TARGETS, VERDICTS) if size else {}


SAVE_MODES = ("in_place", "temp_rename")  # bench.watch_latency's two ways of saving a note


def verdicts_100k(data: dict) -> dict:
    size = data["sizes"].get("100000")
    if not size:
        return {}
    out = judged(size, TARGETS_100K, VERDICTS_100K)
    watch = data.get("components", {})
    small, big = watch.get("watch_latency", {}), watch.get("watch_latency_100k", {})
    if "single_save" in small and "single_save" in big:
        # Each way of saving on its own: half the saves are in place (about 15 ms) and half by a
        # rename (about 55 ms), so the median of all of them lands on either by one save.
        modes = [m for m in SAVE_MODES if m in small["single_save"] and m in big["single_save"]] or ["all"]
        for q in ("p50_ms", "p99_ms"):
            out[f"watch_save_{q[:3]}_within_2x"] = all(
                big["single_save"][m][q] <= 2 * small["single_save"][m][q] for m in modes)
    return out
