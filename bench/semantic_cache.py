"""An on-disk cache of passage vectors for the bench, kept outside the repository.

Embedding a bench corpus takes tens of minutes on a small machine; the cache keys each vector
by model and passage text (sha256), so any run that embeds the same passage again, in any
scratch index, reads it instead. memsync itself never uses this: it keeps vectors in its index.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

from memsync.semantic.encoder import Encoder

CHUNK = 16  # passages per model call; each chunk is committed, so an interrupted run keeps it


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "memsync" / "bench-vectors"
    return Path(os.environ.get("MEMSYNC_VECTOR_CACHE", default))


class CachedEncoder(Encoder):
    def __init__(self, threads: int | None = 1, folder: Path | None = None, offline: bool = False):
        super().__init__(threads)
        self.offline = offline  # a miss is an error (LookupError), not hours of embedding
        folder = folder or cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        name = self.model.replace("/", "_") + ".sqlite"
        self.db_path = folder / name
        self.db = sqlite3.connect(str(self.db_path), timeout=60, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID")
        self.hits = self.misses = 0
        self._queries: dict[str, object] = {}  # in memory: the grid asks each query many times

    def query(self, text: str):
        if text not in self._queries:
            self._queries[text] = super().query(text)
        return self._queries[text]

    def passages(self, texts: list[str]):
        import numpy as np

        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        found = {}
        for at in range(0, len(keys), 500):
            part = keys[at : at + 500]
            marks = ",".join("?" * len(part))
            found.update(self.db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", part))
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing and self.offline:
            raise LookupError(f"{len(missing)} passages are not in the vector cache {self.db_path} yet; "
                              "run without --cached-only to embed them")
        for at in range(0, len(missing), CHUNK):
            chunk = missing[at : at + CHUNK]
            vecs = super().passages([texts[i] for i in chunk])
            rows = [(keys[i], v.astype(np.float32).tobytes()) for i, v in zip(chunk, vecs)]
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
            found.update(rows)
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = np.frombuffer(found[k], dtype=np.float32)
        return out
