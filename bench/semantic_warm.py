"""Fill the bench's vector cache ahead of a run, in a fixed order, from several processes.

    nice -n 19 python -m bench.semantic_warm --sets obsidian,scifact --share 0/2 &
    nice -n 19 python -m bench.semantic_warm --sets obsidian,scifact --share 1/2 &

Each set is indexed by memsync's own Indexer and cut into passages by memsync's own splitter,
so the cache holds exactly what bench/semantic.py will ask for. SciFact goes in the order of
`scifact_order` (the first 500 are the old scifact-500 sample), so whatever share of its corpus
is embedded when time runs out is a prefix the bench can score as `scifact-N`. The processes
take alternate chunks of that order; a chunk already in the cache costs nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from memsync.semantic import passages

from . import datasets, engines, evalsets
from .semantic_cache import CachedEncoder

CHUNK = 8  # cards per model call, as the worker takes them


def scifact_order(docs: list, seed: int = 14) -> list:
    """SciFact's documents in a fixed order: the old 1,000-document draw first (its first 500
    are scifact-500), then the rest in a seeded shuffle."""
    import random

    first = random.Random(seed).sample(docs, 1000)
    taken = {d[0] for d in first}
    rest = [d for d in docs if d[0] not in taken]
    random.Random(seed + 1).shuffle(rest)
    return first + rest


def cards(set_name: str, work: Path) -> list[tuple[str, str]]:
    """(title, body) of every card of the set as memsync indexes it, in embedding order."""
    if set_name == "scifact":
        docs = scifact_order(datasets.scifact().docs)
        stems = engines.write_vault(work / set_name, docs)
        rank = {doc[0]: n for n, doc in enumerate(docs)}
        key = lambda row: rank[stems[engines.stem(row[0])]]  # noqa: E731
        vault = work / set_name
    else:
        prepared, skipped = evalsets.prepare([set_name], work)
        if not prepared:
            raise LookupError(skipped.get(set_name, "unknown set"))
        vault, key = prepared[0].vault, lambda row: row[0]
    index = engines.build_memsync(vault, work / f"{set_name}.db")
    rows = index._conn.execute("SELECT path, title, body FROM cards").fetchall()
    index.close()
    return [(title, body) for _, title, body in sorted(rows, key=key)]


def warm(set_name: str, work: Path, encoder: CachedEncoder, share: int, shares: int) -> None:
    todo = cards(set_name, work)
    started = time.perf_counter()
    for n, at in enumerate(range(0, len(todo), CHUNK)):
        if n % shares != share:
            continue
        texts = [p for title, body in todo[at : at + CHUNK]
                 for p in passages.split(title, body, encoder.token_count)]
        encoder.passages(texts)
        if n % (10 * shares) == share:
            print(f"  {set_name} {at + CHUNK}/{len(todo)} {time.perf_counter() - started:.0f}s "
                  f"misses={encoder.misses}", file=sys.stderr, flush=True)
    print(f"{set_name}: done {len(todo)} cards, {time.perf_counter() - started:.0f}s, "
          f"hits={encoder.hits} misses={encoder.misses}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic_warm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="obsidian,scifact")
    parser.add_argument("--share", default="0/1", help="k/n: this process takes every n-th chunk from the k-th")
    args = parser.parse_args(argv)
    share, shares = (int(x) for x in args.share.split("/"))
    encoder = CachedEncoder()
    with tempfile.TemporaryDirectory(prefix="memsync-warm-") as tmp:
        for set_name in [n for part in args.sets.split(",") for n in evalsets.expand(part)]:
            warm(set_name, Path(tmp), encoder, share, shares)
    return 0


if __name__ == "__main__":
    sys.exit(main())
