"""cjk.normalize with its passes in C (fold_width and lower in memsync/_tokenstream.c) gives what
it gave in Python, NFKC of the text with its full-width forms folded first, then lower case:
character for character on every code point among neighbours of each kind, and on random text.
The index and the queries must fold alike, whichever side made a token."""

from __future__ import annotations

import unicodedata

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

needs_c = pytest.mark.skipif(_tokenstream is None, reason="memsync._tokenstream not built")


def as_before(text: str) -> str:
    """normalize as it was written in Python alone."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", cjk._FULL_WIDTH.sub(cjk._fold_full_width, text))
    return text.lower()


def python_only(monkeypatch) -> None:
    """What a package built without a compiler runs."""
    monkeypatch.setattr(cjk, "_fold_width", cjk.fold_width)
    monkeypatch.setattr(cjk, "_lower", str.lower)


def test_the_c_passes_are_built_and_used_where_a_compiler_is_at_hand():
    if _tokenstream is None and not compiler_at_hand():
        pytest.skip("no C compiler: memsync installs without them and normalizes in Python")
    assert _tokenstream is not None, "a compiler is here but memsync._tokenstream was not built"
    assert (cjk._fold_width, cjk._lower) == (_tokenstream.fold_width, _tokenstream.lower)


# Each code point alone and doubled, after a Han character and a capital, before a combining
# mark (NFKC composes), beside full-width forms and the ideographic space, and where a capital
# sigma ends a word or does not (str.lower reads its neighbours).
def _neighbours(c: str) -> str:
    return f"{c}中{c}{c}A{c}\u0301Ｑ{c}\u3000Σ{c} Σ{c}Σ {c}"


@needs_c
def test_every_code_point_is_normalized_as_before():
    for start, text in every_code_point(0x2000, _neighbours):
        assert cjk.normalize(text) == as_before(text), hex(start)


@needs_c
def test_each_c_pass_is_its_python_twin_on_every_code_point():
    for start, text in every_code_point(0x4000, _neighbours):
        assert _tokenstream.fold_width(text) == cjk.fold_width(text), hex(start)
        assert _tokenstream.lower(text) == text.lower(), hex(start)


@given(st.one_of(MIXED, st.text(), st.text(st.sampled_from("Aa中Ｑｑ\u3000Σσς\u0301İﬁ가\u11a8 .,"))))
def test_any_text_is_normalized_as_before_with_and_without_c(text):
    assert cjk.normalize(text) == as_before(text)
    with pytest.MonkeyPatch.context() as patch:
        python_only(patch)
        assert cjk.normalize(text) == as_before(text)


@needs_c
@pytest.mark.parametrize("text", ["", "中", "ＡＢ", "\u3000", "Ａ中", "abc中", "ÀB", "ΟΔΟΣ", "İ", "é"])
def test_results_are_plain_str_of_the_narrowest_kind(text):
    for made, twin in ((_tokenstream.fold_width(text), cjk.fold_width(text)),
                       (_tokenstream.lower(text), text.lower())):
        assert made == twin and type(made) is str  # equal only if as narrow (CPython compares kinds)


@needs_c
def test_a_str_subclass_comes_back_as_a_plain_str():
    class Tagged(str):
        pass

    for made in (_tokenstream.fold_width(Tagged("中文")), _tokenstream.lower(Tagged("中文"))):
        assert type(made) is str and made == "中文"


@needs_c
@pytest.mark.parametrize("name", ["fold_width", "lower"])
def test_the_c_passes_refuse_what_is_not_a_str(name):
    with pytest.raises(TypeError, match="str"):
        getattr(_tokenstream, name)(b"bytes")
