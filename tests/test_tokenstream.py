"""The token stream in C (memsync/_tokenstream.c) is the token stream in Python (cjk.stream_of),
character for character: an index must get the same tokens whichever made them, since a
contentless FTS5 row is deleted by handing FTS5 its tokens again."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync import cjk

from .conftest import compiler_at_hand, every_code_point
from .test_cjk import MIXED

try:
    from memsync import _tokenstream
except ImportError:
    _tokenstream = None  # type: ignore[assignment]


def test_the_c_stream_is_built_where_a_compiler_is_at_hand():
    if _tokenstream is None and not compiler_at_hand():
        pytest.skip("no C compiler: memsync installs without the C stream and uses cjk.stream_of")
    assert _tokenstream is not None, "a compiler is here but memsync._tokenstream was not built"
    assert cjk._stream is _tokenstream.stream  # and to_index_text uses it


needs_c = pytest.mark.skipif(_tokenstream is None, reason="memsync._tokenstream not built")


@needs_c
def test_every_code_point_is_cut_alike_in_c_and_in_python():
    # each code point after the one before it, before and after a Han character, doubled, and
    # around a Latin letter: every kind of neighbour the two cuts tell apart
    for start, text in every_code_point(0x4000, lambda c: f"{c}中{c}{c}a{c}"):
        assert _tokenstream.stream(text) == cjk.stream_of(text), hex(start)


@needs_c
@given(st.one_of(MIXED, st.text()))
def test_any_text_is_cut_alike_in_c_and_in_python(text):
    assert _tokenstream.stream(text) == cjk.stream_of(text)


@needs_c
@pytest.mark.parametrize("text", ["", " ", "中", "中文", "a", "ab c", "_中_", "é中x", "𠀋𠀋", "ＡＢ"])
def test_short_texts_are_cut_alike_and_the_result_is_a_plain_str(text):
    got = _tokenstream.stream(text)
    # equal only if as narrow: CPython compares a str's kind before its characters
    assert got == cjk.stream_of(text) and type(got) is str


@needs_c
def test_the_c_stream_refuses_what_is_not_a_str():
    with pytest.raises(TypeError, match="str"):
        _tokenstream.stream(b"bytes")


def test_without_the_c_stream_to_index_text_gives_the_same_stream(monkeypatch):
    # what a package built without a compiler runs
    text = "用Prometheus单独管理 ＡＢ 私钥, ΟΔΟΣ"
    built = cjk.to_index_text(text)
    monkeypatch.setattr(cjk, "_stream", cjk.stream_of)
    assert cjk.to_index_text(text) == built == "用 prometheus 单独 独管 管理 理 ab 私钥 钥 οδοσ"
