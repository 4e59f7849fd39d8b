"""Edit a JSON settings file in place, changing only the bytes of what is added or removed.

Clients' settings files are the user's: other keys, other hooks, their order, indentation and
(where the client reads JSON with comments, as Gemini CLI does) comments must survive an
install and an uninstall. `json.load` + `json.dump` would keep the keys but rewrite the rest,
so this parses the text into spans (where each value, member and item starts and ends) and
splices: an insert adds one member or item, a removal takes out exactly what an insert added,
so install then uninstall gives the file back byte for byte. Comments (`//`, `/* */`) and
trailing commas are read as JSONC allows. Text in, text out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


class JSONCError(ValueError):
    def __init__(self, message: str, pos: int, text: str):
        line = text.count("\n", 0, pos) + 1
        super().__init__(f"{message} at line {line}")


@dataclass
class Node:
    kind: str  # object | array | scalar
    start: int
    end: int  # one past the value's last character
    value: Any = None  # scalars only
    members: list[tuple[str, Node]] = field(default_factory=list)  # objects, in order
    key_starts: list[int] = field(default_factory=list)  # where each member's key begins
    items: list[Node] = field(default_factory=list)  # arrays

    def get(self, key: str) -> Node | None:
        """The member `key`; of a key written twice the last, the one a client reads (JSON.parse,
        as Python's json, keeps the last)."""
        for name, node in reversed(self.members):
            if name == key:
                return node
        return None

    def count(self, key: str) -> int:
        return sum(1 for name, _node in self.members if name == key)

    def plain(self) -> Any:
        if self.kind == "object":
            return {name: node.plain() for name, node in self.members}
        if self.kind == "array":
            return [node.plain() for node in self.items]
        return self.value


_SCALAR = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null', re.S)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise JSONCError("a /* comment is not closed", self.pos, text)
                self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise JSONCError("the file ends where a value should be", self.pos, self.text)
        ch = self.text[self.pos]
        if ch == "{":
            return self.container("object", "}")
        if ch == "[":
            return self.container("array", "]")
        match = _SCALAR.match(self.text, self.pos)
        if not match:
            raise JSONCError("not JSON", self.pos, self.text)
        try:  # the pattern finds a scalar's extent; json says whether it is one (01, "\x" are not)
            value = json.loads(match.group())
        except ValueError:
            raise JSONCError("not JSON", self.pos, self.text) from None
        self.pos = match.end()
        return Node("scalar", match.start(), match.end(), value)

    def container(self, kind: str, close: str) -> Node:
        node = Node(kind, self.pos, -1)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith(close, self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            if kind == "object":
                self.skip()
                node.key_starts.append(self.pos)
                key = self.value()
                if not isinstance(key.value, str) or key.kind != "scalar":
                    raise JSONCError("a key must be a string", key.start, self.text)
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise JSONCError("':' expected", self.pos, self.text)
                self.pos += 1
                node.members.append((key.value, self.value()))
            else:
                node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith(close, self.pos):
                raise JSONCError(f"',' or '{close}' expected", self.pos, self.text)


def parse(text: str) -> Node:
    """The root value of a JSON/JSONC text (an empty text is an empty object)."""
    if not text.strip():
        return Node("object", 0, 0)
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise JSONCError("text after the JSON value", parser.pos, text)
    return root


def loads(text: str) -> Any:
    return parse(text).plain()


_STRING_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def comments(text: str) -> list[str]:
    """The text's comments, in order (strings skipped, so a // inside one is no comment)."""
    return [m.group().rstrip() for m in _STRING_OR_COMMENT.finditer(text) if m.group()[0] != '"']


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def indent_unit(text: str) -> str:
    """The file's indentation step: the leading whitespace of its first indented line."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _render(value: Any, unit: str, indent: str) -> str:
    lines = json.dumps(value, ensure_ascii=False, indent=unit).split("\n")
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def _trailing_comma(text: str, after: int) -> int | None:
    """Where a comma right after `after` (past blanks and comments) sits, if there is one."""
    parser = _Parser(text)
    parser.pos = after
    parser.skip()
    return parser.pos if text.startswith(",", parser.pos) else None


def _insert(text: str, container: Node, piece: str, last_end: int | None) -> str:
    unit = indent_unit(text)
    outer = _line_indent(text, container.start)
    inner = outer + unit
    rendered = piece.replace("\n", "\n" + inner)
    if last_end is None:  # empty: the item goes right after the bracket, on a line of its own
        at = container.start + 1
        close = container.end - 1
        inside = text[at:close]
        tail = inside if inside.strip() else ""  # keep comments that sat inside, drop blanks
        return text[:at] + "\n" + inner + rendered + (tail if tail else "\n" + outer) + text[close:]
    comma = _trailing_comma(text, last_end)
    if comma is not None:  # JSONC's trailing comma: ours goes after it
        return text[:comma + 1] + "\n" + inner + rendered + text[comma + 1:]
    return text[:last_end] + ",\n" + inner + rendered + text[last_end:]


def append_item(text: str, array: Node, value: Any) -> str:
    unit = indent_unit(text)
    last = array.items[-1].end if array.items else None
    return _insert(text, array, json.dumps(value, ensure_ascii=False, indent=unit), last)


def add_member(text: str, obj: Node, key: str, value: Any) -> str:
    unit = indent_unit(text)
    piece = json.dumps(key, ensure_ascii=False) + ": " + json.dumps(value, ensure_ascii=False, indent=unit)
    last = obj.members[-1][1].end if obj.members else None
    return _insert(text, obj, piece, last)


def _remove_span(text: str, container: Node, spans: list[tuple[int, int]], i: int) -> str:
    """Take out entry i of a container whose entries span `spans` (start, end), with its comma."""
    start, end = spans[i]
    if len(spans) == 1:
        return text[:container.start + 1] + text[container.end - 1:]
    if i == len(spans) - 1:
        return text[:spans[i - 1][1]] + text[end:]
    return text[:start] + text[spans[i + 1][0]:]


def remove_item(text: str, array: Node, i: int) -> str:
    return _remove_span(text, array, [(n.start, n.end) for n in array.items], i)


def remove_member(text: str, obj: Node, key: str) -> str:
    """The text without member `key` (of a key written twice, the last: the one get() gives)."""
    spans = [(start, node.end) for start, (_name, node) in zip(obj.key_starts, obj.members, strict=True)]
    names = [name for name, _node in obj.members]
    return _remove_span(text, obj, spans, len(names) - 1 - names[::-1].index(key))
