"""Drive basic-memory (installed by setup_basic_memory.sh) on a copy of a generated vault.

basic-memory rewrites the notes it indexes (it adds a `permalink` to the frontmatter), so it
always works on a copy. Both figures are whole-process wall times, as a user or an agent's
shell meets them: `project add` (first full index) and `tool search-notes` for a marker.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = HERE / ".venv-basic-memory" / "bin" / "basic-memory"
TIMEOUT_S = 3600


def available() -> bool:
    return BIN.exists()


def _run(args: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run([str(BIN), *args], env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    return time.perf_counter() - start, proc


def measure(vault: Path, work: Path, markers: list[str], cards: int, runs: int = 3) -> dict:
    copy = work / "bm-vault"
    shutil.copytree(vault, copy)
    home = work / "bm-home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}  # its config and database live under ~/.basic-memory
    version = _run(["--version"], env)[1].stdout.strip()
    seconds, proc = _run(["project", "add", "bench", str(copy)], env)
    if proc.returncode:
        return {"failed": f"project add exited {proc.returncode}", "stderr": proc.stderr[-1500:]}
    searches, found = [], 0
    for marker in markers[:runs]:
        elapsed, proc = _run(["tool", "search-notes", marker, "--json", "--project", "bench"], env)
        searches.append(elapsed)
        with contextlib.suppress(ValueError):
            found += bool(json.loads(proc.stdout).get("results"))
    shutil.rmtree(copy, ignore_errors=True)
    return {
        "version": version, "cards": cards,
        "index_seconds": seconds, "index_cards_per_s": cards / seconds,
        "search_ms": 1000 * statistics.median(searches), "search_runs": len(searches),
        "markers_found": found,
        "note": "its figures are whole-process wall times, keyword search only (its semantic "
                "search needs SQLite extension loading, which this Python build lacks)",
    }
