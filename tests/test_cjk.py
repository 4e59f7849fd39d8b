import re
import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from memsync import cjk


def test_chinese_becomes_overlapping_bigrams_then_its_last_character():
    assert cjk.tokens("阿里云") == ["阿里", "里云", "云"]


def test_every_character_of_a_run_starts_a_document_token():
    # what makes the one-character query `"钥" *` find every occurrence, 私钥 included
    text = "登录使用私钥"
    starts = {token[0] for token in cjk.tokens(text)}
    assert starts == set(text)


def test_queries_keep_plain_bigrams():
    assert cjk.phrases("阿里云") == [["阿里", "里云"]]


def test_latin_words_are_lowercased():
    assert cjk.tokens("Nginx ECS-Prod") == ["nginx", "ecs", "prod"]


def test_latin_inside_chinese_is_split_out_as_a_word():
    assert "prometheus" in cjk.tokens("用prometheus单独管理")
    assert cjk.tokens("用prometheus单独管理") == ["用", "prometheus", "单独", "独管", "管理", "理"]


def test_full_width_equals_half_width():
    assert cjk.tokens("ＮＧＩＮＸ１２３") == cjk.tokens("nginx123")


def test_underscore_and_punctuation_separate_words():
    assert cjk.tokens("~/.ssh/id_ed25519") == ["ssh", "id", "ed25519"]


def test_kana_and_hangul_are_bigrammed():
    assert cjk.tokens("カタカナ") == ["カタ", "タカ", "カナ", "ナ"]
    assert cjk.tokens("한국어") == ["한국", "국어", "어"]


def test_single_cjk_character_is_one_token():
    assert cjk.tokens("用 a") == ["用", "a"]


def test_query_phrases_group_cjk_runs_and_joined_words():
    assert cjk.phrases("ecs-prod 阿里云") == [["ecs", "prod"], ["阿里", "里云"]]
    assert cjk.phrases("用prometheus单独") == [["用"], ["prometheus"], ["单独"]]


@given(st.text())
def test_tokens_never_contain_spaces_or_empty_strings(text):
    for token in cjk.tokens(text):
        assert token and not any(ch.isspace() for ch in token)


@given(st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=2))
def test_every_bigram_of_a_han_text_is_a_token(text):
    toks = set(cjk.tokens(text))
    for i in range(len(text) - 1):
        assert cjk.normalize(text[i : i + 2]) in toks


@given(st.text())
def test_index_text_is_the_joined_token_stream(text):
    assert cjk.to_index_text(text) == " ".join(cjk.tokens(text))


# Text that mixes what the stream cuts between: Han, kana and Hangul runs, Latin words and digits,
# underscores, full-width forms, punctuation and spaces, an astral Han character.
MIXED = st.text(alphabet=st.sampled_from(list("数据库同步私钥かなカナ한국어abcXYZ019_-.,，：（）ＡＢ１ \n\u3000é𠀋")))


@given(MIXED)
def test_index_text_of_mixed_scripts_is_the_joined_token_stream(text):
    assert cjk.to_index_text(text) == " ".join(cjk.tokens(text))


def test_a_japanese_runs_words_are_its_parts_between_hiragana():
    assert cjk.content_runs("金沢で朝に海鮮丼を食べる") == ["金沢", "海鮮丼"]
    assert cjk.content_runs("コンテナのパスワード") == ["コンテナ", "パスワード"]
    assert cjk.content_runs("書くとき") == []  # one kanji alone is no word to credit


def test_a_run_without_hiragana_has_no_parts_of_its_own():
    assert cjk.content_runs("东京都的天气") == []  # Chinese: the run stays whole
    assert cjk.content_runs("동기화") == []
    assert cjk.content_runs("海鮮丼") == []


@given(st.text(alphabet=st.sampled_from(
    "aZ09 _-.,\u3000\uff01\uff0c\uff21\uff41\uff10\u0301\u0308\u00e9\u00c5\u212b\u2126\ufb01"
    "\u4e2d\u6587\u3042\u30a2\uac00\u1100\u1161\u11a8\uff76\uff9e\u2460\u00bd")))
def test_normalize_is_nfkc_then_lowercase(text):
    # normalize folds full-width forms on their own before NFKC: the result must not change
    assert cjk.normalize(text) == unicodedata.normalize("NFKC", text).lower()


def test_every_code_point_is_classed_by_char_as_the_pattern_classes_it():
    # the by-char split (short texts of a process that has not built the Unicode classes)
    # must cut where the pattern does: CJK, another letter or digit, or a separator
    cjk_char = re.compile(f"[{cjk._CJK_CLASS}]")
    word_char = re.compile(r"[^\W_]")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        expected = 2 if cjk_char.match(char) else 1 if word_char.match(char) else 0
        assert cjk._char_kind(char) == expected, hex(code)
        assert cjk._starts_cjk(char) == (expected == 2), hex(code)


@given(st.one_of(MIXED, st.text()))
def test_the_by_char_split_equals_the_pattern_split(text):
    assert cjk._pieces_by_char(text) == cjk._piece_pattern().findall(text)
