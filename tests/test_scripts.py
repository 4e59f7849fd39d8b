"""Scripts beyond Latin and CJK: a combining mark stays in the word it follows (Devanagari,
Bengali, Tamil, Hebrew and Arabic points), Thai, Lao, Myanmar and Khmer are searched by bigrams
as Chinese is, and an index cut the old way is made again on its upgrade (schema 21)."""

from __future__ import annotations

import re
import sqlite3
import sys
import unicodedata
from contextlib import closing

import pytest

from memsync import cjk, config, marks
from memsync.store import fts
from memsync.store.bulkload import UNFINISHED
from memsync.store.index import Index

from .conftest import write_card
from .helpers import found, found_strict, indexing, rebuild_view, sync
from .test_migrations import hashes_after_migrating_from

HINDI = "हिन्दी में नोट्स लिखना आसान है"
THAI = "การซิงค์ข้อมูลระหว่างอุปกรณ์ทำงานทุกคืน"


def test_a_word_keeps_its_vowel_signs_and_viramas():
    assert cjk.to_index_text(HINDI) == "हिन्दी में नोट्स लिखना आसान है"
    assert cjk.to_index_text("বাংলা নোট") == "বাংলা নোট"
    assert cjk.to_index_text("שָׁלוֹם עוֹלָם") == "שָׁלוֹם עוֹלָם"


def test_a_mark_after_a_space_or_a_han_character_still_separates():
    assert cjk.to_index_text("abc \u093f def") == "abc def"
    assert cjk.to_index_text("葛\U000e0100城") == "葛 城"  # an ideographic variation selector


def test_thai_lao_myanmar_and_khmer_are_cut_into_bigrams():
    assert cjk.to_index_text("ข้อมูล") == "ข้ ้อ อม มู ูล ล"
    for text in ("ພາສາລາວ", "မြန်မာစာ", "ភាសាខ្មែរ"):
        tokens = cjk.to_index_text(text).split(" ")
        assert tokens[:-1] == [text[i:i + 2] for i in range(len(text) - 1)], text


def test_a_hindi_word_finds_its_note_and_not_one_of_the_same_consonants(vault, home):
    write_card(vault, "notes.md", "Hindi", f"{HINDI}.\n")
    write_card(vault, "other.md", "Other", "नाटास और कुछ नहीं, जो नोट्स जैसा दिखता था.\n".replace("नोट्स", "नटस"))
    sync()
    assert found("नोट्स") == ["notes.md"]  # न ट स with other vowels is another word


def test_a_thai_word_inside_a_sentence_is_found(vault, home):
    write_card(vault, "sync.md", "Sync", f"{THAI}\n")
    write_card(vault, "else.md", "Else", "ข้าวผัดอร่อยมาก\n")
    sync()
    assert found_strict("ข้อมูล") == ["sync.md"]  # looser tiers fill the page below it
    assert found_strict("อุปกรณ์") == ["sync.md"]


def test_the_marks_table_is_the_unicode_databases():
    listed = {code for low, high in marks.RANGES for code in range(low, high + 1)}
    have = {code for code in range(sys.maxunicode + 1) if unicodedata.category(chr(code))[0] == "M"}
    if unicodedata.unidata_version == marks.UNICODE_VERSION:
        assert listed == have
    else:  # a newer Python knows more marks: those still separate, nothing is cut wrongly
        assert listed <= have


def _old_cut(text: str) -> str:
    """The stream memsync made of a text before schema 21: every mark a separator, the scripts
    of NEW_RUNS cut as words."""
    from memsync.store.schema_scripts import NEW_RUNS

    word = "".join(f"{chr(low)}-{chr(high)}" for low, high in cjk._CJK_RANGES if (low, high) not in NEW_RUNS
                   and not any(a <= low <= b for a, b in NEW_RUNS))
    pattern = re.compile(rf"(?=([{word}]{{2}}|[{word}]|[^\W_{word}]+))(?:[{word}]|[^\W_{word}]+)")
    return cjk.fts_fold(" ".join(pattern.findall(cjk.normalize(text))))


def test_an_index_holding_marked_words_is_made_again_on_its_upgrade(vault, home, capfd):
    write_card(vault, "hindi.md", "Hindi", f"{HINDI}.\n")
    write_card(vault, "plain.md", "Plain", "Nothing but English here.\n")
    sync()
    db = config.load().db.path
    with closing(sqlite3.connect(db)) as conn:
        ids = dict(conn.execute("SELECT path, id FROM cards"))
    capfd.readouterr()
    hashes = hashes_after_migrating_from(20)
    assert set(hashes.values()) == {""}  # every file is read again
    assert "schema 21" in capfd.readouterr().err
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT count(*) FROM cards_fts").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM meta WHERE key = ?", (UNFINISHED,)).fetchone() == (1,)
    # the rows written by the old cut went with the tables: the full text is as a rebuild's
    assert sync().updated == 2
    index = Index(db)
    try:
        assert dict(index._conn.execute("SELECT path, id FROM cards")) == ids
        assert index.meta(UNFINISHED) is None
    finally:
        index.close()
    assert found("नोट्स") == ["hindi.md"]
    rebuilt = db.with_name("rebuilt.db")
    with indexing(rebuilt) as work:
        work.rebuild()
    assert rebuild_view(db) == rebuild_view(rebuilt)


@pytest.mark.parametrize(("text", "cut_otherwise"), [
    ("Istanbul, not İstanbul", True),  # İ folds to i and a combining dot
    ("कक्षा क़", True), ("ข้อมูล", True), ("x\U0001d167y", True),
    ("中文 and English", False), ("notes ❤\ufe0f", False),  # the emoji's selector separated, still does
    ("葛\U000e0100城", False), ("été, déjà", False), ("abc \u093f def", False)])
def test_the_upgrade_finds_the_texts_the_new_cut_reads_otherwise(text, cut_otherwise):
    from memsync.store.schema_scripts import recut

    assert recut(text) is cut_otherwise
    assert (cjk.to_index_text(text) != _old_cut(text)) is cut_otherwise


def test_an_index_without_marked_words_is_left_as_it_was(vault, home):
    write_card(vault, "zh.md", "中文", "同步笔记，没有任何变音符号。\n")
    write_card(vault, "fr.md", "Été", "Les notes de l'été, déjà composées.\n")
    sync()
    db = config.load().db.path
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT count(*) FROM cards_fts").fetchone()
    hashes = hashes_after_migrating_from(20)
    assert "" not in hashes.values()
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT count(*) FROM cards_fts").fetchone() == rows
        assert conn.execute("SELECT count(*) FROM meta WHERE key = ?", (UNFINISHED,)).fetchone() == (0,)
    assert found("同步") == ["zh.md"] and fts.TOKENIZE
