"""Counting and cutting text by the characters a person sees (memsync.chars)."""

import unicodedata

import pytest

from memsync import chars


@pytest.mark.parametrize(("text", "most", "shown"), [
    ("abc", 3, "abc"),
    ("abcd", 3, "abc…"),
    ("ab 🇯🇵", 4, "ab…"),  # never half a flag
    ("🇯🇵🇫🇷", 3, "🇯🇵…"),
    ("a👍🏽b", 2, "a…"),  # nor a hand without its skin tone
    ("aq\u0303b", 2, "a…"),  # nor a letter without its mark (q̃ has no composed form)
    ("a👨\u200d👩b", 2, "a…"),  # nor part of a ZWJ sequence
    ("a👨\u200d👩b", 3, "a…"),
    ("a👨\u200d👩b", 4, "a👨\u200d👩…"),
    ("ᄒᆞᆫ글", 1, "…"),  # old Korean that NFC leaves as jamo
])
def test_a_cut_never_ends_inside_a_character(text, most, shown):
    assert chars.cut(text, most) == shown


def test_a_text_typed_decomposed_counts_and_cuts_as_its_composed_twin():
    composed = "한국어 café " * 30
    decomposed = unicodedata.normalize("NFD", composed)
    assert len(decomposed) == 450 and len(composed) == 270
    assert chars.length(decomposed) == chars.length(composed) == 270
    assert chars.cut(decomposed, 200) == chars.cut(composed, 200)
    assert chars.cut(decomposed, 270) == decomposed  # whole: as written


@pytest.mark.parametrize(("text", "at", "shown"), [
    ("deploy with make deploy", 16, "deploy with make"),  # inside a word: back to its space
    ("deploy with make deploy", 11, "deploy with"),  # at a word's end: kept
    ("用 nginx 转发，端口改成八零八零", 15, "用 nginx 转发，端口改成"),  # CJK either side: kept
    ("用 nginx 转发，CPU 超过九十", 16, "用 nginx 转发，CPU 超"),
    ("Redis 部署在 ecsprod", 13, "Redis 部署在"),  # a Latin word after CJK is still whole
    ("word", 0, ""),
])
def test_a_shortened_text_ends_between_words_or_at_any_cjk_character(text, at, shown):
    assert text[:chars.word_end(text, at, at // 2)] == shown


@pytest.mark.parametrize(("text", "columns"), [
    ("vault", 5), ("我的笔记", 8), ("ＡＰＩ密钥", 10), ("서버", 4), ("カタカナ", 8),
    ("e\u0301", 1),  # an accent typed apart takes no column of its own
])
def test_wide_characters_take_two_columns(text, columns):
    assert chars.columns(text) == columns and chars.columns(chars.pad(text, 12)) == 12
