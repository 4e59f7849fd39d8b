"""Where and when a bench ran: machine, commit, date, versions. Recorded in every result file."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


# What a run measures: a change here makes its figures those of no commit. The results, the
# reports and the docs a run writes do not (a run after another finds them changed).
MEASURED = ("memsync", "adapters", "bench", ":!bench/results", ":!bench/RESULTS.md", "pyproject.toml")


def info() -> dict:
    return {
        "date": dt.datetime.now().astimezone().replace(microsecond=0).isoformat(),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no", "--", *MEASURED)),
        "machine": {
            "cpu": _cpu(), "cores": os.cpu_count(), "memory_gib": _memory_gib(),
            "os": f"{platform.system()} {platform.release()}",
        },
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
    }


def save(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def usable_cores() -> int:
    """The cores this process may run on (memsync.cores.usable), as a run reports them."""
    from memsync import cores

    return cores.usable()


def load_average() -> list[float]:
    """The 1, 5 and 15-minute load averages, rounded: how busy the machine was around a run."""
    return [round(x, 2) for x in os.getloadavg()]
