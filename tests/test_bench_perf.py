"""The perf bench's pure parts: the 1,000,000-card projection and the tables it renders."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest

from bench import generate
from bench.perf_commands import bare_python, installed_memsync
from bench.perf_rebuild import (
    amdahl,
    busy_cores_seconds,
    measure_links,
    rebuild_once,
    serial_part,
    speedup_bound,
    speedup_spread,
    writer_alone,
)
from bench.perf_tables import render_tables
from bench.perf_verdicts import TARGETS, VERDICTS, judged, projection, verdicts_100k


def size(n: int, scale: float) -> dict:
    """A result for n cards whose every figure is `scale` times its 10k value."""
    return {
        "cards": n,
        "rebuild": {"seconds": 4.0 * scale, "cards_per_s": n / (4.0 * scale), "peak_rss_mib": 100.0 * scale,
                    "floor_cards_per_s": 1.0, "vs_floor": 2.0, "readers": 2, "usable_cores": 2,
                    "one_reader_seconds": 7.0 * scale, "speedup": 1.75, "raw_floor_cards_per_s": 1.0,
                    "vs_raw_floor": 2.5, "writer_peak_rss_mib": 90.0, "writer_alone_vs_raw_floor": 1.8,
                    "over_index_vs_raw_floor": 2.6, "first_index_vs_rebuild": 1.1,
                    "over_index_seconds": 4.5 * scale,
                    "one_reader_serial_fraction": 0.08, "speedup_bound": 1.85, "speedup_range": [1.5, 1.9],
                    "parallel_cpu_vs_one_reader": 1.1, "work_bound": 1.62,
                    "prep": {"read_s": 0.1, "parse_s": 0.2, "tokenize_s": 0.3}},
        "index": {"note_bytes": 1, "index_bytes": int(2**20 * 50 * scale), "ratio": 2.7},
        "reconcile": {"seconds": 0.05 * scale, "floor_walk_seconds": 0.02},
        "search": {"p50_ms": 1.5 * scale ** 0.5, "p99_ms": 7.0, "floor_p50_ms": 1, "floor_p99_ms": 5,
                   "marker_wrong": 0, "by_kind_p50_ms": {"marker": 0.2}},
        "cli": {"memsync_search": 70.0, "python_startup": 22.0, "grep_r": 40.0, "rg": None},
    }


def test_each_figure_grows_to_a_million_as_it_grew_from_10k_to_100k():
    proj = projection({"10000": size(10_000, 1), "100000": size(100_000, 10)})
    assert proj["from"] == [10_000, 100_000]
    # the rebuild over an index: through the WAL at every size, as one into a new file is past 100,000
    assert proj["rebuild_over_index_s"]["exponent"] == pytest.approx(1.0)
    assert proj["rebuild_over_index_s"]["projected"] == pytest.approx(450.0)
    assert proj["index_mib"]["projected"] == pytest.approx(5000.0)
    assert proj["search_p50_ms"]["exponent"] == pytest.approx(0.5)  # grows as the square root
    assert proj["search_p99_ms"]["projected"] == pytest.approx(7.0)  # flat stays flat


def test_no_projection_without_a_100k_run():
    assert projection({"1000": size(1000, 0.1), "10000": size(10_000, 1)}) == {}


def test_the_tables_show_the_raw_floor_the_speedup_and_the_projection():
    data = {"sizes": {"10000": size(10_000, 1), "100000": size(100_000, 10)},
            "load_average_at_start": [3.5, 3, 3], "load_average_at_end": [4.0, 3, 3]}
    data["sizes"]["10000"]["rebuild"]["busy"] = {"seconds": 3.5, "one_reader_seconds": 4.2, "speedup": 1.2}
    data["projection"] = projection(data["sizes"])
    text = "\n".join(render_tables(data, extras=False))
    assert "| rebuild ÷ raw floor (time) | 2.5× | 2.5× |" in text
    assert "| speed-up over one reader | 1.75× | 1.75× |" in text
    assert "| one reader's time outside the load (one core whatever the count) | 8% | 8% |" in text
    assert "| the most that allows on these cores (Amdahl) | 1.85× | 1.85× |" in text
    assert "| speed-up of single rounds, lowest – highest | 1.50–1.90× | 1.50–1.90× |" in text
    # measured at 10,000 cards only
    assert "| with a busy loop a core beside it: rebuild / one reader | 3.50 / 4.20 s (1.20×) | not measured |" in text
    assert "| CPU of the parallel rebuild ÷ one reader's | 1.10× | 1.10× |" in text
    assert "| the most its CPU allows, every core busy outside the serial part | 1.62× | 1.62× |" in text
    assert "| the writer alone (files read before its first row) ÷ raw floor | 1.8× | 1.8× |" in text
    assert "| rebuild over the index it replaces ÷ raw floor | 2.6× | 2.6× |" in text
    assert "| first index (a reconcile into a new index) ÷ rebuild | 1.10× | 1.10× |" in text
    assert "| rebuild over the index it replaces | 4.50 s | 45.00 s | 1.00 | 450.0 s |" in text
    assert "load average 3.5 at the start, 4 at the end" in text


def test_the_speedup_bound_is_what_one_readers_serial_part_allows():
    # 10 s, a batch written each second from 2 s to 8 s: the load began at 1 s and ended at 8 s
    one = {"seconds": 10.0, "batches": [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], "cpu_s": 10.0}
    assert serial_part(one) == pytest.approx(1.0 + 2.0)
    assert amdahl(0.3, 2) == pytest.approx(1 / 0.65)
    assert amdahl(0.0, 2) == pytest.approx(2.0) and amdahl(1.0, 8) == pytest.approx(1.0)
    two = {"seconds": 6.5, "batches": [1.5, 2.0, 2.5, 3.0, 3.5, 4.0], "cpu_s": 11.0, "readers": 2}
    bound = speedup_bound([one], [two], cores=2)
    assert bound["one_reader_serial_s"] == pytest.approx(3.0)
    assert bound["one_reader_serial_fraction"] == pytest.approx(0.3)
    assert bound["speedup_bound"] == pytest.approx(1 / 0.65)
    assert bound["parallel_cpu_vs_one_reader"] == pytest.approx(1.1)
    # its own serial part 1.0 + 2.5 s; the other 7.5 s of CPU on two cores: 7.25 s at the least
    assert busy_cores_seconds(two, 2) == pytest.approx(3.5 + 7.5 / 2)
    assert bound["work_bound"] == pytest.approx(10.0 / 7.25)
    assert "work_bound" not in speedup_bound([one], [{**two, "batches": [1.0]}], cores=2)
    assert speedup_bound([{"seconds": 1.0, "batches": [1.0]}], [two], cores=2) == {}  # one batch: no span
    # two batches and the end (a 1,000-card load): too short a span to tell where the load began
    assert serial_part({"seconds": 1.0, "batches": [0.4, 0.7, 0.9]}) is None


def test_the_spread_of_the_speedup_pairs_each_round_with_itself():
    one = [{"seconds": s} for s in (3.0, 3.3, 2.8)]
    parallel = [{"seconds": s} for s in (2.0, 1.8, 2.0)]
    # per round 1.5, 1.83, 1.4: not the slowest one-reader run against the fastest parallel one
    assert speedup_spread(one, parallel) == pytest.approx([1.4, 3.3 / 1.8])
    assert speedup_spread([], []) == []


def test_a_rebuild_run_reports_its_batches_and_every_process_cpu(tmp_path):
    vault = tmp_path / "vault"
    generate.generate_vault(vault, 2100)  # four batches of 500 and the end: serial_part's least
    serial, parallel = rebuild_once(tmp_path / "a.db", vault, "1"), rebuild_once(tmp_path / "b.db", vault, "2")
    for run in (serial, parallel):
        assert len(run["batches"]) >= 5 and run["batches"] == sorted(run["batches"])
        assert 0 < run["batches"][-1] <= run["seconds"] and run["cpu_s"] > 0
    assert parallel["readers"] == 2
    assert 0 < serial_part(serial) < serial["seconds"]


def test_the_writer_alone_writes_the_index_a_rebuild_writes(tmp_path):
    """The writer's share is timed over a whole rebuild: every card is written, as by a real one."""
    vault = tmp_path / "vault"
    generate.generate_vault(vault, 60)
    assert writer_alone(tmp_path / "alone.db", vault) > 0
    rebuild_once(tmp_path / "real.db", vault, "1")
    rows = "SELECT id, path, title, body FROM cards ORDER BY id"
    alone, real = (sqlite3.connect(tmp_path / name) for name in ("alone.db", "real.db"))
    assert len(alone.execute(rows).fetchall()) == 60
    assert alone.execute(rows).fetchall() == real.execute(rows).fetchall()
    matched = "SELECT rowid FROM cards_fts WHERE cards_fts MATCH 'card' ORDER BY rowid"  # each file name
    assert len(alone.execute(matched).fetchall()) == 60
    assert alone.execute(matched).fetchall() == real.execute(matched).fetchall()
    alone.close()
    real.close()


def test_the_bare_floor_is_an_interpreter_with_nothing_installed(tmp_path):
    bare = bare_python(tmp_path)
    assert subprocess.run([bare, "-c", "pass"]).returncode == 0
    # click is installed where the bench runs, and not in the bare venv
    found = subprocess.run([bare, "-c", "import click"], capture_output=True, text=True)
    assert found.returncode != 0 and "No module named 'click'" in found.stderr
    made = (tmp_path / "bare-venv" / "pyvenv.cfg").stat().st_mtime_ns
    assert bare_python(tmp_path) == bare  # made once, then reused
    assert (tmp_path / "bare-venv" / "pyvenv.cfg").stat().st_mtime_ns == made


def test_the_installed_command_is_the_wheel_without_the_editable_hook(tmp_path):
    # Builds a wheel (pip, from the configured index for its build tools): a minute at most.
    command, why_not = installed_memsync(tmp_path)
    if command is None and "could not be built" in why_not:
        pytest.skip(why_not)
    assert command, why_not
    python = str(tmp_path / "wheel-venv" / "bin" / "python")
    probe = ("import sys, memsync, click; print(memsync.__file__); "
             "print(any('editable' in m for m in sys.modules))")
    where, hooked = subprocess.run([python, "-c", probe], capture_output=True, text=True,
                                   cwd=tmp_path, check=True).stdout.split()
    assert where.startswith(str(tmp_path / "wheel-venv")) and hooked == "False"
    assert subprocess.run([command, "--help"], capture_output=True).returncode == 0
    assert installed_memsync(tmp_path) == (command, "")  # made once, then reused


def test_the_whole_process_verdict_is_the_installed_commands_where_measured():
    measured = size(10_000, 1)
    both = {**measured, "cli": {**measured["cli"], "memsync_search": 75.0, "memsync_search_installed": 68.0}}
    assert judged(both, TARGETS, VERDICTS)["cli_search"] is True
    editable_only = {**measured, "cli": {**measured["cli"], "memsync_search": 75.0}}
    assert judged(editable_only, TARGETS, VERDICTS)["cli_search"] is False
    text = "\n".join(render_tables({"sizes": {"10000": both}}, extras=False))
    assert "| `memsync search` whole process, installed from the wheel | 68 ms |" in text
    assert "| `memsync search` whole process, this checkout's editable install | 75 ms |" in text


def test_the_startup_floors_are_shown_when_measured():
    old = size(10_000, 1)
    new = {**old, "cli": {**old["cli"], "python_bare": 15.0, "import_click": 41.0}}
    text = "\n".join(render_tables({"sizes": {"10000": new, "100000": size(100_000, 10)}}, extras=False))
    assert "| floor: `python -c pass`, a venv with nothing installed | 15 ms | not measured |" in text
    assert "| `python -c 'import click'` (the CLI framework alone) | 41 ms | not measured |" in text
    assert "nothing installed" not in "\n".join(render_tables({"sizes": {"10000": old}}, extras=False))


def test_the_linked_vault_is_the_same_cards_with_links_at_their_end(tmp_path):
    plain = generate.generate_vault(tmp_path / "plain", 40)
    assert generate.generate_vault(tmp_path / "linked", 40, links=3) == plain
    for rel, _ in plain:
        text = (tmp_path / "plain" / rel).read_text(encoding="utf-8")
        linked = (tmp_path / "linked" / rel).read_text(encoding="utf-8")
        assert linked.startswith(text[:-1]) and linked.count("[[card-") == 3


def test_what_links_cost_is_measured_and_shown(tmp_path):
    vault = tmp_path / "vault-60"
    generate.generate_vault(vault, 60)
    links = measure_links(60, tmp_path, vault, 1)
    assert links["linked_first_index"] > 0 and links["plain_rebuild_new"] > 0
    assert links["rebuild_over_it_vs_plain"] == links["linked_rebuild_over_it"] / links["plain_rebuild_over_it"]
    assert not (tmp_path / "vault-60-linked").exists()  # the linked copy is removed
    sizes = {"10000": {**size(10_000, 1), "links": {**links, "linked_first_index": 16.0,
                                                    "first_index_vs_plain": 2.96}},
             "100000": size(100_000, 10)}
    text = "\n".join(render_tables({"sizes": sizes}, extras=False))
    assert "| with 3 wikilinks a note: first index | 16.0 s (2.96× without links) | not measured |" in text


def watcher(cards: int, cold_peak: float) -> dict:
    return {"vault_cards": cards, "single_save": {"all": {"p50_ms": 30.0, "p99_ms": 50.0}},
            "burst": {"files": 1000, "searchable_after_last_write_s": 0.8},
            "idle": {"seconds": 60, "cpu_pct": 0.0}, "memory_end": {"rss_mb": 41.0, "peak_mb": 41.0},
            "cold_start": {"index_all_s": 6.66, "rss_mb": 69.0, "peak_mb": cold_peak},
            "checks": {"rss": True, "rss_cold_start": cold_peak <= 80}}


def test_the_watcher_table_shows_the_cold_start_and_whose_targets_they_are():
    data = {"sizes": {"10000": size(10_000, 1)}, "components": {"watch_latency": watcher(10_000, 70.4),
                                        "watch_latency_100k": watcher(100_000, 188.8)}}
    text = "\n".join(render_tables(data))
    assert "| cold start with no index: every card indexed, RSS / peak | 6.7 s, 69 / 70 MB |" in text
    assert "| cold start with no index: every card indexed, RSS / peak | 6.7 s, 69 / 189 MB |" in text
    ten, hundred = text.split("100,000-card vault")
    assert "rss_cold_start met" in ten and "set for 10,000 cards" not in ten
    assert "rss_cold_start **not met** (the targets were set for 10,000 cards)" in hundred


def test_the_cold_start_shows_the_catch_up_process_beside_the_watcher():
    apart = watcher(10_000, 69.0)
    apart["cold_start"].update(watcher_peak_mb=38.0, catch_up_peak_mb=69.0)
    text = "\n".join(render_tables({"sizes": {"10000": size(10_000, 1)},
                                    "components": {"watch_latency": apart}}))
    assert "| of which the watcher's own peak / its catch-up process's | 38 / 69 MB |" in text


def test_the_watcher_at_100k_is_judged_by_each_way_of_saving():
    def saves(all_p50, in_place, rename):
        return {"single_save": {"all": {"p50_ms": all_p50, "p99_ms": rename},
                                "in_place": {"p50_ms": in_place, "p99_ms": in_place},
                                "temp_rename": {"p50_ms": rename, "p99_ms": rename}}}

    # half in place, half renamed: the median of all saves fell on the fast half at 10,000
    # and on the slow half at 100,000, while each way of saving took 1.3x as long
    data = {"sizes": {"100000": size(100_000, 10)},
            "components": {"watch_latency": saves(15.0, 14.0, 54.0),
                           "watch_latency_100k": saves(50.0, 18.0, 70.0)}}
    verdict = verdicts_100k(data)
    assert verdict["watch_save_p50_within_2x"] and verdict["watch_save_p99_within_2x"]
    data["components"]["watch_latency_100k"] = saves(50.0, 29.0, 70.0)  # in place: over 2x
    assert not verdicts_100k(data)["watch_save_p50_within_2x"]


def test_busy_loops_run_through_the_block_and_end_with_it():
    from bench import busy

    with busy.busy_loops(2) as loops:
        assert len(loops) == 2 and all(loop.poll() is None for loop in loops)  # still spinning
    assert all(loop.returncode is not None for loop in loops)  # killed and reaped, none left


def test_the_busy_rebuild_alternates_one_reader_and_every_core(tmp_path):
    vault = tmp_path / "vault"
    generate.generate_vault(vault, 600)
    asked = []

    def rebuild(workers: str) -> dict:
        asked.append(workers)
        return rebuild_once(tmp_path / "busy.db", vault, workers)

    from bench import busy

    result = busy.measure(rebuild, 2)
    assert asked == ["1", "auto", "1", "auto"]
    assert result["loops"] >= 1 and result["rounds"] == 2
    assert result["speedup"] == pytest.approx(result["one_reader_seconds"] / result["seconds"])
