"""The near-duplicate detection's loops in C (shingle_values in memsync/_tokenstream.c, the
candidates and overlaps in memsync/_overlap.c) give what their Python twins in
memsync.lifecycle.shingles give: the same values, candidates and similarities, so an audit
reports the same whichever ran."""

from __future__ import annotations

import random
from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync import config
from memsync.lifecycle import audit, shingles
from memsync.lifecycle.opening import index_of

from .conftest import compiler_at_hand, every_code_point, write_card
from .test_cjk import MIXED
from .test_lifecycle_duplicates_scale import varied_cards

try:
    from memsync import _overlap, _tokenstream
except ImportError:
    _overlap = _tokenstream = None  # type: ignore[assignment]

needs_c = pytest.mark.skipif(shingles._candidates_in_c is None or shingles._values_in_c is None,
                             reason="memsync's C extensions not built")


def python_only(monkeypatch) -> None:
    """What a package built without a compiler runs."""
    for name in ("_values_in_c", "_candidates_in_c", "_common_in_c"):
        monkeypatch.setattr(shingles, name, None)


def test_the_c_loops_are_built_and_used_where_a_compiler_is_at_hand():
    if _overlap is None and not compiler_at_hand():
        pytest.skip("no C compiler: memsync installs without them and shingles in Python")
    assert _overlap is not None, "a compiler is here but memsync._overlap was not built"
    assert shingles._values_in_c is _tokenstream.shingle_values
    assert shingles._candidates_in_c is _overlap.candidates
    assert shingles._common_in_c is _overlap.common


@needs_c
def test_every_code_point_gives_the_same_shingles_in_c_and_in_python():
    # each code point as a word of its own, inside a word, beside a Han character and in a run
    # of itself: every place the two cuts could tell apart
    for start, text in every_code_point(0x2000, lambda c: f"{c} x{c}y 中{c}{c}文 "):
        assert shingles.packed(text).tolist() == sorted(shingles.shingles(text)), hex(start)


@needs_c
@given(st.one_of(MIXED, st.text()))
def test_any_text_gives_the_same_shingles_in_c_and_in_python(text):
    assert shingles.packed(text).tolist() == sorted(shingles.shingles(text))


@needs_c
@pytest.mark.parametrize("text", ["", " ", "one", "one two", "部署", "部署脚本", "a 中 b", "中a中",
                                  "𠀋𠀋𠀋x", "ＡＢ cd", "_x_y_", "é ß ǅ", "x" * 5000])
def test_short_texts_give_the_same_shingles_packed_to_their_length(text):
    got = shingles.packed(text)
    assert got.tolist() == sorted(shingles.shingles(text))
    assert got.buffer_info()[1] == len(got) and got.itemsize == 4


def _drawn_sets(seed: int) -> list[frozenset[int]]:
    """Sets of small, overlapping ranges: many shared sketch values, some in more sketches than
    the common limit, some sets smaller than SHARED, a few empty."""
    rng = random.Random(seed)
    out = []
    for _ in range(300):
        low = rng.choice([0, 0, 100, 400])
        size = rng.choice([0, 1, 2, 3, 10, 30, 60])
        out.append(frozenset(rng.sample(range(low, low + rng.choice([80, 200])), size)))
    return out


@needs_c
@pytest.mark.parametrize("seed", range(4))
def test_the_candidates_counted_in_c_are_those_counted_in_python(seed):
    sets = _drawn_sets(seed)
    packed = [array("I", sorted(s)) for s in sets]
    for given_sets in (sets, packed):
        in_c = list(shingles._counted_in_c(given_sets))
        assert in_c == list(shingles._counted(given_sets))
        assert len(in_c) > 50 and all(earlier == sorted(earlier) for _, earlier in in_c)


@needs_c
@pytest.mark.parametrize("seed", range(4))
def test_the_similarities_merged_in_c_are_those_of_sets(seed, monkeypatch):
    sets = _drawn_sets(seed)
    packed = [array("I", sorted(s)) for s in sets]
    pairs = [(i, j) for i in range(0, 300, 7) for j in range(1, 300, 5)]
    in_c = [shingles.jaccard(packed[i], packed[j]) for i, j in pairs]
    python_only(monkeypatch)
    assert in_c == [shingles.jaccard(sets[i], sets[j]) for i, j in pairs]
    assert in_c == [shingles.jaccard(packed[i], packed[j]) for i, j in pairs]


@needs_c
def test_the_c_loops_refuse_what_they_cannot_read():
    with pytest.raises(TypeError, match="str"):
        _tokenstream.shingle_values(b"bytes")
    with pytest.raises(ValueError, match="32-bit"):
        _overlap.common(b"abc", array("I"))
    with pytest.raises(ValueError, match="run from 0"):
        _overlap.candidates(array("I", [1, 2]), array("I", [0, 1]), 4, 20)
    with pytest.raises(ValueError, match="not decrease"):
        _overlap.candidates(array("I", [1, 2]), array("I", [0, 2, 1, 2]), 4, 20)
    assert _overlap.candidates(array("I"), array("I", [0]), 4, 20) == b""


def _report(cfg) -> dict:
    with index_of(cfg) as index:
        report = audit.run(cfg, index, listed=10**9)
    del report["seconds"]
    return report


@needs_c
@pytest.mark.parametrize("seed", [1, 2])
def test_the_audit_reports_the_same_with_and_without_the_c_loops(seed, cli, vault, monkeypatch):
    for path, body in varied_cards(seed).items():
        write_card(vault, path, path.removesuffix(".md"), body)
    write_card(vault, "zh-a.md", "部署", "部署脚本把静态文件复制到站点根目录。然后重新加载，新文件就生效了。")
    write_card(vault, "zh-b.md", "部署笔记", "部署脚本把静态文件复制到站点根目录。之后重新加载，新文件就生效了。")
    cli("index")
    cfg = config.load()
    in_c = _report(cfg)
    python_only(monkeypatch)
    assert _report(cfg) == in_c
    groups = in_c["duplicates"]
    assert len(groups) >= 10 and any(len(g["cards"]) > 2 for g in groups)
    assert any({c["path"] for c in g["cards"]} == {"zh-a.md", "zh-b.md"} for g in groups)
