"""How long an agent waits for `memsync mcp`: spawn to the `initialize` reply.

Each run starts a fresh process with its own data home, sends one `initialize` line and stops the
clock when the reply line arrives. Measured on an empty vault and on a large one (indexing starts
only after the handshake, so the two should match), beside two floors taken in the same run: a
bare interpreter, and an interpreter that only imports the MCP SDK.

    python -m bench.mcp_startup [--runs 15] [--cards 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMSYNC = str(Path(sys.executable).with_name("memsync"))
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}) + "\n"


def until_initialized(env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [MEMSYNC, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=env,
    )
    proc.stdin.write(INITIALIZE.encode())
    proc.stdin.flush()
    reply = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(60)
    if json.loads(reply).get("id") != 1:
        raise SystemExit(f"unexpected first line from memsync mcp: {reply[:200]!r}")
    return elapsed


def until_ready(code: str) -> float:
    """A floor measured the same way: spawn until the child's first stdout line (the process
    exit would add interpreter teardown, which the server's figure does not include)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code + "; print('ready', flush=True)"],
                            stdout=subprocess.PIPE)
    proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.wait(60)
    return elapsed


def make_vault(root: Path, cards: int) -> Path:
    vault = root / "vault"
    for n in range(cards):
        folder = vault / f"03-Knowledge/batch-{n // 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"card-{n}.md").write_text(
            f"---\ntitle: card {n}\nkind: knowledge\n---\nfact number {n} about host-{n % 97}.\n",
            encoding="utf-8",
        )
    vault.mkdir(parents=True, exist_ok=True)
    return vault


def summary(times: list[float]) -> dict:
    ordered = sorted(times)
    return {
        "runs": len(times),
        "median_s": round(statistics.median(ordered), 4),
        "min_s": round(ordered[0], 4),
        "max_s": round(ordered[-1], 4),
        "p90_s": round(ordered[int(0.9 * (len(ordered) - 1))], 4),
    }


def measure(runs: int, cards: int) -> dict:
    # Variants take turns within each round, so load from elsewhere on a noisy machine hits all
    # of them alike and the ratios stay meaningful.
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        vaults = {
            "memsync_mcp_empty_vault": make_vault(Path(tmp) / "empty", 0),
            f"memsync_mcp_vault_{cards}_cards": make_vault(Path(tmp) / "large", cards),
        }
        for n in range(runs):
            for name, vault in vaults.items():
                # A fresh data home every run: no index yet, as on a first start.
                env = {**os.environ, "MEMSYNC_VAULT": str(vault),
                       "MEMSYNC_HOME": str(Path(tmp) / f"home-{name}-{n}")}
                env.pop("MEMSYNC_DB", None)
                times.setdefault(name, []).append(until_initialized(env))
            times.setdefault("floor_python", []).append(until_ready("pass"))
            times.setdefault("floor_import_sdk", []).append(until_ready("import mcp.server.mcpserver"))
    return {name: summary(values) for name, values in times.items()}


def machine_info() -> dict:
    try:
        from bench import machine
    except ImportError:
        import platform

        return {"python": sys.version.split()[0], "os": platform.platform(), "cores": os.cpu_count()}
    return machine.info()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cards", type=int, default=2000)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    results = measure(max(args.runs, 10), args.cards)
    median = results["memsync_mcp_empty_vault"]["median_s"]
    sdk = results["floor_import_sdk"]["median_s"]
    data = {
        "bench": "mcp_startup",
        "what": "spawn of `memsync mcp` to its initialize reply, fresh data home each run",
        "results": results,
        "sdk_import_share": round(sdk / median, 3),
        "overhead_beyond_sdk_s": round(median - sdk, 4),
        "target_s": 1.2,
        # Other work on the machine inflates every figure alike; the ratios are what hold.
        "load_avg_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        **machine_info(),
    }
    out = Path(__file__).resolve().parent / "results" / "mcp_startup.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    for name, row in results.items():
        print(f"{name:34} median {row['median_s'] * 1000:7.1f} ms  "
              f"(min {row['min_s'] * 1000:.1f}, p90 {row['p90_s'] * 1000:.1f}, n={row['runs']})")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
