"""A note's frontmatter as data: what yaml.load with python-frontmatter's safe loader gives, for
less. Pure: YAML text in, data out.

libyaml (C) scans and composes the node tree; making the data from it is PyYAML's Python
constructor, which walks every node through its general machinery (anchors, recursion, the
generators of nested maps). Most frontmatter is one mapping of plain values and lists of
strings, whose data this module makes directly, with the constructor's own functions for every
value that is not a string (a date, a number): a third less time a load, and each note is loaded
when it is indexed and twice when consolidate edits it. Any other tree is handed to the
constructor whole. tests/test_yamldata.py compares the two.
"""

from __future__ import annotations

from typing import Any

from frontmatter.default_handlers import SafeLoader, YAMLHandler
from yaml import YAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
# The scalar tags the safe loader resolves a plain value to, made by the constructor's function
_OTHER_SCALARS = frozenset(_TAG + name for name in ("null", "bool", "int", "float", "timestamp"))
_UNLIKE = object()  # a node this module leaves to the constructor


# The safe loader, save that a date that cannot be (2024-02-30, a 13th month) is its text. YAML
# 1.1 makes a date of every plain YYYY-MM-DD, and PyYAML raises building one that does not exist,
# which lost a note's whole frontmatter (title, tags, summary, supersede pointers) to one mistyped
# `created:`; Obsidian reads the value as text and the rest as written. (Made by type(): the
# safe loader is python-frontmatter's pick of the C or the Python one, a variable to mypy.)
_DatesAsWritten: Any = type("_DatesAsWritten", (SafeLoader,), {})


def _date_or_text(loader, node):
    try:
        return SafeLoader.construct_yaml_timestamp(loader, node)
    except ValueError:
        return loader.construct_scalar(node)


_DatesAsWritten.add_constructor(_TAG + "timestamp", _date_or_text)


# Values a frontmatter may stand for once its aliases are followed. An alias is the node it names
# again, so nine lists of nine aliases of the list before ("billion laughs") are a few hundred
# bytes that stand for 9^9 values: whatever walks them (a tag list flattened, str() of a value)
# runs for minutes or fills the memory. Without aliases a value is a few bytes of text at least.
MOST_VALUES = 100_000


class TooManyValues(YAMLError):
    """The frontmatter's aliases stand for more values than MOST_VALUES, or for a value that
    holds itself."""

    def __str__(self) -> str:
        return (f"frontmatter's YAML aliases (*name) stand for more than {MOST_VALUES:,} values "
                "or for a value inside itself; write the values out")


def load(text: str, dates_as_written: bool = False):
    """yaml.load(text, Loader=SafeLoader); with `dates_as_written`, a date that cannot be is
    read as its text (_DatesAsWritten) instead of raising ValueError. TooManyValues for an
    alias bomb."""
    loader = (_DatesAsWritten if dates_as_written else SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text and _values(node, {}, set()) > MOST_VALUES:  # an alias needs an anchor
            raise TooManyValues()
        data = _mapping(loader, node)
        return loader.construct_document(node) if data is _UNLIKE else data
    finally:
        loader.dispose()


def _values(node: Node, known: dict[int, int], open_: set[int]) -> int:
    """How many values `node` stands for, its aliases followed (each node counted once); past
    MOST_VALUES for a node inside itself."""
    if type(node) is ScalarNode:
        return 1
    if id(node) in known:
        return known[id(node)]
    if id(node) in open_:
        return MOST_VALUES + 1
    open_.add(id(node))
    children = [n for pair in node.value for n in pair] if type(node) is MappingNode else node.value
    total = 1
    for child in children:
        total += _values(child, known, open_)
        if total > MOST_VALUES:
            break
    open_.discard(id(node))
    known[id(node)] = total
    return total


def _mapping(loader, node: Node):
    """A mapping of string keys to plain values, made as the constructor would make it (a later
    key of the same name wins), or _UNLIKE. A merge key (`<<`) or `=` is tagged otherwise."""
    if type(node) is not MappingNode or node.tag != _MAP:
        return _UNLIKE
    out = {}
    lists: set[int] = set()
    for at, (key, value) in enumerate(node.value):
        if type(key) is not ScalarNode or key.tag != _STR:
            return _UNLIKE
        if type(value) is SequenceNode:
            if id(value) in lists:  # an alias of a list: the constructor gives the same object
                return _UNLIKE
            lists.add(id(value))
        try:
            made = _value(loader, value)
        except (ValueError, TypeError):  # a date that is none (0000-00-00)
            # the constructor merges keys (`<<`) before it makes any value, and fails there first
            if any(type(k) is not ScalarNode or k.tag != _STR for k, _ in node.value[at + 1:]):
                return _UNLIKE
            raise
        if made is _UNLIKE:
            return _UNLIKE
        out[key.value] = made
    return out


def _value(loader, node: Node):
    if type(node) is ScalarNode:
        if node.tag == _STR:
            return node.value
        if node.tag in _OTHER_SCALARS:
            return loader.yaml_constructors[node.tag](loader, node)
    elif type(node) is SequenceNode and node.tag == _SEQ \
            and all(type(item) is ScalarNode and item.tag == _STR for item in node.value):
        return [item.value for item in node.value]
    return _UNLIKE


class Handler(YAMLHandler):
    """python-frontmatter's YAML handler, loading with `load` (a date that cannot be as text)."""

    def load(self, fm: str, **kwargs: object):
        return load(fm, dates_as_written=True) if not kwargs else super().load(fm, **kwargs)
