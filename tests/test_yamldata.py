"""memsync.yamldata makes a frontmatter's data as PyYAML's safe loader does: the same keys,
values and types (True is not 1, a date is not a string) for every tree, the ones it makes
itself and the ones it hands to the constructor."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml
from frontmatter.default_handlers import SafeLoader
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync import notes, yamldata


def _typed(value):
    """A value with the type of every part spelled out, so 1 == True == 1.0 cannot pass."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple, set)):
        return (type(value).__name__, [_typed(v) for v in value])
    return (type(value).__name__, value)


def same_as_pyyaml(text: str) -> None:
    try:
        expected = yaml.load(text, Loader=SafeLoader)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, ValueError, TypeError) as exc:  # a date that is none: ValueError
        with pytest.raises(type(exc)):
            yamldata.load(text)
        return
    assert _typed(yamldata.load(text)) == _typed(expected)


FRONTMATTERS = [
    "",
    "# only a comment",
    "title: deploy\nkind: knowledge\ntags: [ops, nginx]\ncreated: 2024-08-06T11:54:00+08:00",
    "created: 2024-01-02\nupdated: 2024-01-02 10:00:00\ninvalid_at: 2024-13-45x",
    "priority: 5\nttl: 1.5\nflag: yes\nother: off\nnothing: ~\nempty:\nnull_word: null",
    "title: 'Quoted: title'\nsummary: \"double \\u00e9\"\naliases:\n  - first\n  - second",
    "tags:\n- ops\n- 5\n- true",  # a list of other scalars: the constructor's
    "custom: {nested: [1, 2]}\nlist_of_maps:\n  - a: 1",
    "base: &b {kind: x}\nmerged:\n  <<: *b\n  title: y",
    "<<: {kind: x}\ntitle: y",  # a merge at the top
    "=: value\ntitle: y",
    "a: &s [one, two]\nb: *s",  # one list under two keys: the same object, as PyYAML makes it
    "a: &x one\nb: *x",
    "title: first\ntitle: second",  # the later key wins
    "? complex\n: key",
    "1: numeric key\ntrue: bool key",
    "title: !!str 2024-01-01\nnumber: !!int '7'\nraw: !!binary aGVsbG8=",
    "set: !!set {a, b}\nomap: !!omap [a: 1]",
    "- a list\n- at the top",
    "just a string",
    "title: [unclosed",
    "a: b: c",
    "%YAML 1.1\n---\ntitle: directive",
    "title: one\n---\ntitle: two",  # two documents
    "title: x\ncustom: !custom tag",
    "title: |\n  block\n  text\nfolded: >-\n  a\n  b",
    "created: 0000-00-00\n<<: ",  # a date that is none, then a merge of nothing: the merge fails first
]


@pytest.mark.parametrize("text", FRONTMATTERS)
def test_each_frontmatter_loads_as_pyyaml_loads_it(text):
    same_as_pyyaml(text)


def test_one_list_under_two_keys_stays_one_object():
    data = yamldata.load("a: &s [one, two]\nb: *s")
    assert data["a"] is data["b"]


def test_a_date_stays_a_date():
    assert yamldata.load("created: 2024-01-02") == {"created": dt.date(2024, 1, 2)}


_KEY = st.sampled_from(["title", "kind", "tags", "created", "summary", "x_1", "<<", "="])
_VALUE = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
    st.sampled_from(["yes", "No", "~", "null", "5", "0x1f", "1_000", ".inf", "2024-02-30",
                     "2024-01-02T03:04:05Z", "[a, b]", "[a, 1]", "{a: 1}", "&a x", "*a", "!!str 5",
                     "'q'", '"d"', "- x", "a # c", "|", ">"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_KEY, _VALUE, st.sampled_from(["", "  ", "\t", "- "])), max_size=6))
def test_random_frontmatter_loads_as_pyyaml_loads_it(lines):
    same_as_pyyaml("\n".join(f"{indent}{key}: {value}" for key, value, indent in lines))


def test_notes_reads_frontmatter_through_it():
    card = notes.parse(b"---\ntitle: deploy\ntags: [ops]\ncreated: 2024-01-02\n---\nbody text\n", "a.md")
    assert (card.title, card.tags, card.created, card.body) == ("deploy", ("ops",), "2024-01-02", "body text")


@pytest.mark.parametrize("value", ["2024-02-30", "2023-13-01", "2024-02-30 10:00:00", "[2024-02-30]"])
def test_a_date_that_cannot_be_costs_a_note_no_other_field(value):
    """Obsidian reads `created: 2024-02-30` as text and the other properties as written; the
    note's title, tags and summary were all dropped for it (frontmatter could not be read)."""
    card = notes.parse(f"---\ntitle: deploy\ntags: [ops]\nsummary: how we deploy\ncreated: {value}\n"
                       "---\nbody text\n".encode(), "a.md")
    assert (card.title, card.tags, card.summary, card.body) == ("deploy", ("ops",), "how we deploy", "body text")
    assert "could not be read" not in (card.problem or "")
    assert yamldata.load("created: 2024-01-02", dates_as_written=True) == {"created": dt.date(2024, 1, 2)}


def test_frontmatter_that_is_only_a_date_that_cannot_be_is_no_mapping():
    card = notes.parse(b"---\n0000-00-00\n---", "a.md")  # found by tests/test_fuzz.py
    assert card.problem == "frontmatter is not a key/value mapping"


def laughs(levels: int) -> str:
    """`a` a list of nine strings, each next key a list of nine aliases of the one before: a
    few hundred bytes that stand for 9**levels values ("billion laughs")."""
    keys = [chr(ord("a") + i) for i in range(levels)]
    lines = [f"a: &a [{', '.join(['lol'] * 9)}]"]
    lines += [f"{k}: &{k} [{', '.join(['*' + prev] * 9)}]" for prev, k in zip(keys, keys[1:])]
    return "\n".join(lines) + f"\ntags: *{keys[-1]}\n"


def test_aliases_that_stand_for_too_many_values_are_refused():
    assert yamldata.load(laughs(4))["tags"][0][0][0] == ["lol"] * 9  # 6,561 of them in the tags
    with pytest.raises(yamldata.TooManyValues):
        yamldata.load(laughs(6))  # 531,441
    with pytest.raises(yamldata.TooManyValues):
        yamldata.load("tags: &a [x, *a]\n")  # a list inside itself: no end


def test_a_note_whose_aliases_explode_is_read_without_its_frontmatter_at_once():
    card = notes.parse(f"---\ntitle: laughs\n{laughs(7)}---\nthe body stays\n".encode(), "lol.md")
    assert card.tags == () and card.title == "lol" and card.body.strip() == "the body stays"
    assert "aliases" in card.problem and "write the values out" in card.problem
