"""`--json` output: what json.dumps gives, written as it is encoded rather than made whole first
(a consolidate plan over 100,000 cards is 21 MB of JSON)."""

from __future__ import annotations

import json
import sys
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from memsync.cli import emit, json_pieces

PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=40,
)


@given(st.dictionaries(st.text(max_size=8), PLAIN, max_size=6), st.integers(1, 200))
def test_the_pieces_join_to_what_json_dumps_gives(data, size):
    assert "".join(json_pieces(data, size)) == json.dumps(data, ensure_ascii=False, indent=2)


def _plan_like(steps: int) -> dict:
    return {"steps": [{"path": f"03-Knowledge/card-{n:06}.md", "title": f"部署脚本 {n}",
                       "summary": "The deploy script copies the static files. " * 3, "id": n}
                      for n in range(steps)], "counts": {"steps": steps}}


def test_a_large_result_is_written_without_being_held_whole(tmp_path, monkeypatch):
    data = _plan_like(20_000)
    expected = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    with open(tmp_path / "out.json", "w", encoding="utf-8") as out:
        monkeypatch.setattr(sys, "stdout", out)
        tracemalloc.start()
        try:
            emit(data, True, None)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == expected
    assert peak < len(expected) / 8  # the whole text alone is len(expected) bytes or more


def test_the_people_form_is_left_as_it_was(capsys):
    emit({"n": 1}, False, lambda data: f"n is {data['n']}")
    assert capsys.readouterr().out == "n is 1\n"
