"""Whole-process times: `memsync search` and `memsync brief` beside `python -c pass` (the
interpreter memsync runs on, and a venv with nothing installed), `import click`, `grep -rl` and
`rg -l`, in the same rounds; `memsync search` both as this checkout's editable command and as
its wheel installed."""

from __future__ import annotations

import compileall
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

import memsync

from . import generate
from .perf_rebuild import rebuild_once
from .perf_search import search_queries

MEMSYNC = str(Path(sys.executable).with_name("memsync"))


def wall(cmd: list[str], env: dict | None = None, ok=(0,)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{cmd[:3]} exited {proc.returncode}")
    return elapsed


def prepare_brief(home: Path, db: Path) -> Path:
    """What a brief reads besides the cards: read counts on 200 cards and this agent's last brief
    at 2026-05-01, six weeks before the newest generated card (so "changed" has ~700 to sort). The project is the folder name `g003`, which
    ~500 generated cards sit in (bench.generate). Returns the project's folder."""
    conn = sqlite3.connect(db)
    with conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM cards ORDER BY id LIMIT 200")]
        conn.executemany("INSERT OR REPLACE INTO card_stats (id, read_count, last_read_at) VALUES (?, ?, NULL)",
                         [(card_id, 1 + n % 17) for n, card_id in enumerate(ids)])
    conn.close()
    project = home / "g003"
    project.mkdir(parents=True, exist_ok=True)
    (home / "brief.json").write_text(json.dumps({"last_brief": {f"cli:{project}": "2026-05-01T00:00:00+00:00"}}))
    return project


def bare_python(work: Path) -> str:
    """The interpreter of a venv with nothing installed (made once under `work`): the floor of
    starting Python. The interpreter memsync runs on pays for every .pth file of its site-packages
    on every start; an editable install's import hook takes 14 ms of the 29 a `python -c pass`
    took there (15 in a venv with nothing installed), which a wheel install does not pay."""
    import venv

    builder = venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt")
    python = builder.ensure_directories(work / "bare-venv").env_exe  # where venv puts it
    if not os.path.exists(python):
        builder.create(work / "bare-venv")
    return python


def installed_memsync(work: Path) -> tuple[str | None, str]:
    """The `memsync` command of this checkout built as a wheel and installed, not editable, into
    a venv of its own (made once under `work`), as `pipx install .` or `pip install .` installs
    it: no editable import hook runs at its start. Its dependencies are this venv's, reached by
    a path line in a .pth file, so nothing is fetched; that folder is then on sys.path but not a
    site folder, so the .pth files in it (the editable hook) are not run. Returns the command,
    or None and why it could not be made."""
    import sysconfig
    import venv

    bin_dir = work / "wheel-venv" / "bin"
    if (bin_dir / "memsync").exists():
        return str(bin_dir / "memsync"), ""
    wheels = work / "wheel"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "--wheel-dir", str(wheels), str(Path(memsync.__file__).parents[1])],
                          capture_output=True, text=True)
    if proc.returncode:
        return None, f"the wheel could not be built: {proc.stderr.strip()[-300:]}"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(work / "wheel-venv")
    python = bin_dir / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                           "--no-deps", *map(str, wheels.glob("memsync-*.whl"))],
                          capture_output=True, text=True)
    if proc.returncode:
        return None, f"the wheel could not be installed: {proc.stderr.strip()[-300:]}"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "memsync_bench_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(bin_dir / "memsync"), ""


def cli_wall(home: Path, db: Path, vault: Path, markers: list[str], runs: int,
             others: dict[str, str] | None = None) -> dict:
    """Medians of whole-process times; `others` adds more memsync commands (label -> path), such
    as one installed from the wheel, timed in the same rounds."""
    env = {**os.environ, "MEMSYNC_HOME": str(home), "MEMSYNC_DB": str(db), "MEMSYNC_VAULT": str(vault)}
    project = prepare_brief(home, db)
    # Byte-code as an installed package has it: a checkout edited under PYTHONDONTWRITEBYTECODE
    # would otherwise compile its changed modules again in every timed run.
    compileall.compile_dir(str(Path(memsync.__file__).parent), quiet=1)
    timings: dict[str, list[float]] = {}
    bare = bare_python(home.parent)
    installed, why_not = installed_memsync(home.parent)
    rg = shutil.which("rg")
    for n in range(runs):
        marker = markers[n % len(markers)]
        # Variants take turns within a round, so background noise hits them alike.
        timings.setdefault("memsync_search", []).append(wall([MEMSYNC, "search", marker, "--json"], env))
        timings.setdefault("memsync_brief", []).append(
            wall([MEMSYNC, "brief", "--project", str(project), "--peek", "--json"], env))
        if installed:
            timings.setdefault("memsync_search_installed", []).append(
                wall([installed, "search", marker, "--json"], env))
        for label, command in (others or {}).items():
            timings.setdefault(label, []).append(wall([command, "search", marker, "--json"], env))
        timings.setdefault("python_startup", []).append(wall([sys.executable, "-c", "pass"]))
        timings.setdefault("python_bare", []).append(wall([bare, "-c", "pass"]))
        timings.setdefault("import_click", []).append(wall([sys.executable, "-c", "import click"]))
        timings.setdefault("grep_r", []).append(wall(["grep", "-rl", "--include=*.md", marker, str(vault)]))
        if rg:
            timings.setdefault("rg", []).append(wall([rg, "-l", marker, str(vault)]))
    out = {name: 1000 * median(values) for name, values in timings.items()}
    out["runs"] = runs
    if not installed:
        out["installed_note"] = why_not
    if not rg:
        out["rg"] = None
        out["rg_note"] = "ripgrep not installed (apt-get install ripgrep)"
    return out


def measure_start(n: int, work: Path, runs: int, others: dict[str, str]) -> dict:
    """`memsync search` whole-process time alone (`--start-only`): a vault, one rebuild, then
    rounds of memsync beside `python -c pass`, `grep -rl` and `rg -l`."""
    vault = work / f"vault-{n}"
    cards = generate.generate_vault(vault, n, seed=0)
    db = work / f"m-{n}.db"
    rebuild_once(db, vault)
    markers = search_queries(cards, random.Random(n), 40)["marker"]
    out = cli_wall(work / f"home-{n}", db, vault, markers, runs, others)
    shutil.rmtree(vault)
    return out
