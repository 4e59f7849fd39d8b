"""FTS5 indexes exactly the tokens memsync.cjk made: its tokenizer only splits at the spaces of
the stream (memsync.store.fts.TOKENIZE), and an index whose tables still use unicode61 (made
before the switch) holds and matches the same tokens."""

import sqlite3
from contextlib import closing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync import cjk
from memsync.marks import RANGES
from memsync.store import fts

from .conftest import write_card
from .helpers import found, indexed_tokens, indexer, sync

UNICODE61 = "unicode61 remove_diacritics 0"  # what memsync's tables used before "ascii"
BASE = fts.TOKENIZE.removeprefix("porter ")  # the tokenizer porter wraps


def _tokens_by_row(tokenize: str, rows: list[tuple[int, str]]) -> dict[int, list[str]]:
    """The tokens FTS5 made of each row's text, in order."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenize}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", rows)
        out: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in conn.execute("SELECT term, doc, offset FROM v"):
            out.setdefault(doc, []).append((offset, term))
    return {doc: [term for _, term in sorted(found)] for doc, found in out.items()}


def test_the_tokenizer_is_ascii_under_porter():
    assert fts.TOKENIZE == "porter ascii"


def _marked(text: str) -> bool:
    """Whether a stream holds a combining mark, which memsync keeps in its word or run."""
    return any(low <= ord(char) <= high for char in text for low, high in RANGES)


def test_every_code_point_is_indexed_as_memsync_made_it_and_as_unicode61_did():
    rows = [(cp, cjk.to_index_text(chr(cp))) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    rows = [(cp, text) for cp, text in rows if text]
    assert len(rows) > 100_000  # every letter and digit of every script
    ours, before = _tokens_by_row(BASE, rows), _tokens_by_row(UNICODE61, rows)
    for cp, text in rows:
        assert ours.get(cp, []) == text.split(" "), hex(cp)
        # unicode61 (Unicode 6.1 tables) drops letters newer than its tables (New Tai Lue's
        # vowels): those are found now; every token it did make is the one made now, but for
        # a word or a run with a mark memsync keeps in it (क़ is क and its nukta once NFKC has split it),
        # which unicode61 cuts by its own rule. The upgrade to schema 21 rebuilt the full-text
        # tables of an index holding any such word (memsync.store.schema_scripts).
        if cp in before and not _marked(text):
            assert before[cp] == ours[cp], hex(cp)
    # the marks and signs of Thai, Lao, Myanmar and Khmer are their runs' characters now
    assert sum(cp not in before and not cjk.is_cjk(chr(cp)) for cp, _ in rows) < 100


@given(st.text(max_size=60))
def test_fts5_splits_the_stream_only_at_its_spaces(text):
    stream = cjk.to_index_text(text)
    if stream:
        assert _tokens_by_row(BASE, [(1, stream)])[1] == stream.split(" ")


@pytest.mark.parametrize("query", ["Σίσυφος", "ΣΊΣΥΦΟΣ", "σίσυφοσ", "σίσυφος"])
def test_a_greek_word_is_found_whichever_sigma_ends_it(vault, query):
    write_card(vault, "myth.md", "Myth", "ο Σίσυφος κυλά την πέτρα")
    sync()
    assert found(query) == ["myth.md"]


def test_a_letter_newer_than_unicode61s_tables_is_found(vault):
    write_card(vault, "tai-lue.md", "Script", "the word ᦶᦷ and more")
    sync()
    assert found("ᦶᦷ") == ["tai-lue.md"]


def _to_unicode61(db) -> None:
    """Rewrite cards_fts as an index made before the switch has it: unicode61, and each body's
    stream without the sigma fold."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT t.seq, t.title, t.h1, t.headings, t.tags, t.links, c.body "
                            "FROM card_terms t JOIN cards c USING (seq)").fetchall()
        columns = ", ".join(fts.FTS_COLUMNS["cards_fts"])
        conn.execute("DROP TABLE cards_fts")
        conn.execute(f"CREATE VIRTUAL TABLE cards_fts USING fts5({columns}, content = '', "
                     f"tokenize = 'porter {UNICODE61}')")
        conn.executemany(f"INSERT INTO cards_fts (rowid, {columns}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(*row[:6], " ".join(cjk.tokens(row[6]))) for row in rows])
        conn.commit()


def test_an_index_made_with_unicode61_updates_cleanly_and_holds_what_a_rebuild_does(vault, home):
    write_card(vault, "myth.md", "Myth", "ο Σίσυφος κυλά την πέτρα ΠΕΤΡΟΣ")
    write_card(vault, "other.md", "Other", "λόγος και σκοπός")
    sync()
    db = home / "memsync.db"
    _to_unicode61(db)
    write_card(vault, "myth.md", "Myth", "ο Σίσυφος ξανά, ΤΕΛΟΣ")  # its old rows are deleted
    (vault / "other.md").unlink()
    assert sync().changed == 2
    assert found("σίσυφοσ") == ["myth.md"] and found("τελος") == ["myth.md"]
    with closing(sqlite3.connect(db)) as conn:
        # seq is storage order: the rows are compared without it (a row left by a wrong delete
        # would show up as one more)
        before_rebuild = sorted(map(repr, indexed_tokens(conn).values()))
        assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'cards_fts'"
                            ).fetchone()[0].count("unicode61") == 1
    work, index = indexer(home / "fresh.db")
    try:
        work.rebuild()
        assert sorted(map(repr, indexed_tokens(index._conn).values())) == before_rebuild
    finally:
        index.close()
