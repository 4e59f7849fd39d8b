"""Embedding cards that lack a vector for their current content, a small batch at a time.

The model runs outside any transaction; each batch is written in one short one, recording the
file hash the text was read at, so a card edited meanwhile is simply picked up again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from . import passages, store

if TYPE_CHECKING:
    from .encoder import Encoder, PassageEncoder
    from .pool import EnginePool

BATCH = 8  # cards per model call: short enough to pause within about a second on short cards
PER_ENGINE = 4  # cards per engine in a foreground batch, so every engine has work to the end


def embed_foreground(index, threads: int | None = None,
                     progress: Callable[[int, int], None] | None = None) -> dict:
    """`memsync index --embed`: someone waits, so every usable core (or `threads`, which then
    wins over OMP_NUM_THREADS) works on it, one engine process each (memsync.semantic.pool).
    The watcher's background embedding keeps one thread at the lowest priority
    (memsync.semantic.background)."""
    from memsync import cores

    asked, usable = threads or cores.from_environment(), cores.usable()
    with foreground_encoder(threads) as encoder:
        report = embed_pending(index, encoder, progress=progress,
                               batch=max(BATCH, PER_ENGINE * encoder.threads))
    report["threads"] = encoder.threads
    if asked and asked > usable:
        report["warnings"] = [f"{asked} threads were asked for, but this process may use "
                              f"{usable} core{'s' if usable > 1 else ''}: {encoder.threads} "
                              "engine(s) embedded (more would only share those cores, each "
                              "holding the model)"]
    return report


@contextmanager
def foreground_encoder(threads: int | None = None) -> Iterator[Encoder | EnginePool]:
    """The engines of a foreground embedding: one in this process for one core, else a pool of
    one-thread engine processes. `threads` None: OMP_NUM_THREADS when set, else every usable
    core; never more than the usable cores, since an engine process past them only takes turns
    on a core with the others, and loads the model beside them."""
    from memsync import cores

    from .encoder import Encoder
    from .pool import EnginePool

    count = min(threads or cores.from_environment() or cores.usable(), cores.usable())
    if count == 1:
        yield Encoder(1, force=True)
        return
    with EnginePool(count) as pool:
        yield pool


def embed_pending(index, encoder: PassageEncoder, limit: int | None = None,
                  pause: Callable[[], bool] = lambda: False,
                  progress: Callable[[int, int], None] | None = None, batch: int = BATCH) -> dict:
    """Embed up to `limit` pending cards (all when None); stops early when `pause()` says so.
    Returns how many cards were embedded, linked to vectors that already existed, and left.

    Engines in processes of their own (EnginePool) hold one batch while the next is read and
    cut into passages, and while the one before is written (encoder.start): they then never
    wait for this process, nor for each other at the end of a batch. The engine of this process
    (Encoder, `eager`) embeds inside start(), where holding a batch back overlaps nothing and
    only writes it late: each batch is written as soon as it is embedded, and pause() is asked
    before the next one begins."""
    started = time.perf_counter()
    done: dict[str, float] = {"embedded": 0, "reused": 0, "passages": 0}
    total = store.counts(index, encoder.model)["pending"]
    if limit is not None:
        total = min(total, limit)
    asked, below = 0, None
    overlap = not encoder.eager

    def write(embedded: _Batch) -> None:
        embedded.write(index, encoder.model, done)
        if progress:
            progress(int(done["embedded"] + done["reused"]), total)

    flying = None  # a batch in the engines, written once the next one is handed over
    while True:
        upcoming = None
        if asked < total and not pause():
            rows = store.pending(index, encoder.model, min(batch, total - asked), below)
            if rows:
                upcoming = _Batch(index, encoder, rows)
                asked += len(rows)
                below = rows[-1]["seq"]
        if flying is not None:
            write(flying)
            flying = None
        if upcoming is None:
            break
        if overlap:
            flying = upcoming
        else:
            write(upcoming)
    seconds = time.perf_counter() - started
    with index.transaction():
        store.prune(index)
        if done["embedded"] >= BATCH:  # enough to be a rate, not a start-up cost
            store.record_rate(index, done["embedded"] / seconds)
    done["pending"] = store.counts(index, encoder.model)["pending"]
    done["seconds"] = round(seconds, 3)
    return done


class _Batch:
    """Pending cards handed to the engines: their texts cut into passages (a text with a vector
    already, or one twice in the batch, is embedded once) and the vectors to come."""

    def __init__(self, index, encoder: PassageEncoder, rows):
        self.links: list[tuple[int, str, str]] = []
        self.fresh: dict[str, list[str]] = {}  # text hash -> its passages
        for row in rows:
            text = passages.card_text(row["title"], row["body"])
            digest = store.text_hash(text)
            self.links.append((row["id"], row["file_hash"], digest))
            if digest not in self.fresh and not store.has(index, encoder.model, digest):
                self.fresh[digest] = passages.split(row["title"], row["body"], encoder.token_count)
        self.texts = [p for parts in self.fresh.values() for p in parts]
        self.vectors = encoder.start(self.texts)

    def write(self, index, model: str, done: dict) -> None:
        """Wait for the vectors, then store them and link each card, in one short transaction."""
        vecs = self.vectors()
        with index.transaction():
            at = 0
            for digest, parts in self.fresh.items():
                store.put(index, model, digest, vecs[at : at + len(parts)])
                at += len(parts)
            for link in self.links:
                store.link(index, *link)
        done["embedded"] += len(self.fresh)
        done["reused"] += len(self.links) - len(self.fresh)
        done["passages"] += len(self.texts)
