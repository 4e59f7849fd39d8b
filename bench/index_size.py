"""Index size: memsync.db (+ WAL, after a checkpoint) against the bytes of the notes it indexes.

    python -m bench.index_size [--sizes 10000] [--vault DIR ...] [--tables]

Each vault is indexed from scratch into a temporary index; --tables prints the bytes of each
table and index (SQLite's dbstat), largest first (the results file always has them). Target:
the index at most 3x the notes. `python -m bench.report` puts the results in RESULTS.md.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from contextlib import closing
from pathlib import Path

TARGET_RATIO = 3.0


def note_bytes(db: Path) -> int:
    """The bytes of the notes an index holds, as its `files` rows recorded them when it read
    them. Counted by the indexer's own rules (dot folders, the trash, Obsidian's excluded
    files, the size cap), not by a second walk that could drift from them; on the bench's
    vaults, which hold nothing excluded, it equals every .md file's size (bench.perf's count)."""
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT coalesce(sum(size), 0) FROM files").fetchone()[0]


def index_bytes(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def tables(db: Path) -> list[tuple[str, int]]:
    with closing(sqlite3.connect(db)) as conn:
        try:
            return conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                                "ORDER BY 2 DESC").fetchall()
        except sqlite3.OperationalError:  # a SQLite built without dbstat
            return []


def measure(vault: Path, db: Path) -> dict:
    from memsync.model import Source
    from memsync.store.index import Index
    from memsync.sync import Indexer

    index = Index(db)
    try:
        cards = Indexer(index, [Source("vault", "markdown", str(vault), True)]).rebuild().added
    finally:
        index.close()
    notes, size = note_bytes(db), index_bytes(db)
    return {"cards": cards, "note_bytes": notes, "index_bytes": size, "ratio": size / notes,
            "target_ratio": TARGET_RATIO}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.index_size",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="generated vaults, comma-separated card counts")
    parser.add_argument("--vault", action="append", default=[], type=Path, help="an existing vault")
    parser.add_argument("--tables", action="store_true", help="bytes per table (dbstat)")
    args = parser.parse_args(argv)
    from . import generate, machine

    out = {}
    with tempfile.TemporaryDirectory(prefix="memsync-size-") as tmp:
        work = Path(tmp)
        vaults = {str(v): v for v in args.vault}
        for n in (int(s) for s in args.sizes.split(",") if s):
            generate.generate_vault(work / f"vault-{n}", n, seed=0)
            vaults[f"generated {n}"] = work / f"vault-{n}"
        for i, (label, vault) in enumerate(vaults.items()):
            db = work / f"index-{i}.db"
            out[label] = figures = measure(vault, db)
            figures["tables"] = dict(tables(db))  # bytes by table and index, largest first
            print(f"{label}: {figures['cards']:,} cards, notes {figures['note_bytes']:,} B, index "
                  f"{figures['index_bytes']:,} B = {figures['ratio']:.2f}x (target <= {TARGET_RATIO:g}x)")
            if args.tables:
                for name, size in list(figures["tables"].items())[:12]:
                    print(f"  {name:28s} {size:>12,} B  {size / figures['note_bytes']:.2f}x")
    print(f"results: {machine.save('index_size', {**machine.info(), 'vaults': out})}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
