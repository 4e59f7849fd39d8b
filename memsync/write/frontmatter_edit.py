"""Edit a note's raw text: set or drop frontmatter keys, replace the body. Pure: str in, str out.

Re-dumping the YAML would reorder keys, re-quote values, drop comments and reformat dates that
a person wrote by hand. So we never parse-and-dump: we find the lines of the keys we were asked
to change and rewrite those lines only. Every other byte (other keys, unknown keys, comments,
their order and quoting, line endings, a BOM) comes back exactly as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import yaml

from memsync import yamldata

_FENCE_OPEN = re.compile(r"---[ \t]*\r?\n?\Z")
_FENCE_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*\r?\n?\Z")
_KEY = re.compile(r"(?P<key>[A-Za-z_][\w\-]*)[ \t]*:(?:[ \t]+|(?=[\r\n])|\Z)")
# A line ends at LF, CRLF or a lone CR (old Mac OS files), as memsync.notes reads it.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BREAKS = ("\r\n", "\r", "\n")


@dataclass
class Layout:
    """A note split into its parts; joining them gives back the original text."""

    bom: str
    newline: str
    fm: list[str] | None  # lines between the fences (with their line ends), None = no frontmatter
    opener: str
    closer: str
    body: str  # everything after the closing fence

    def join(self) -> str:
        if self.fm is None:
            return self.bom + self.body
        return self.bom + self.opener + "".join(self.fm) + self.closer + self.body


def split(text: str) -> Layout:
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    rest = text[len(bom):]
    lines = _LINES.findall(rest)
    newline = next((end for end in _BREAKS if lines and lines[0].endswith(end)), "\n")
    if lines and _FENCE_OPEN.match(lines[0]) and lines[0].endswith(_BREAKS):
        for i in range(1, len(lines)):
            if _FENCE_CLOSE.match(lines[i]):
                return Layout(bom, newline, lines[1:i], lines[0], lines[i], "".join(lines[i + 1:]))
    return Layout(bom, newline, None, "", "", rest)


def _blocks(fm: list[str]) -> list[tuple[str, int, int]]:
    """(key, first line, end line) for each top-level key; a block includes its indented or
    `- item` continuation lines (a block list, a folded string)."""
    blocks = []
    i = 0
    while i < len(fm):
        match = _KEY.match(fm[i])
        if not match:
            i += 1
            continue
        end = i + 1
        last_content = end
        while end < len(fm):
            line = fm[end]
            if line.strip() == "":
                end += 1
                continue
            if line[0] in " \t" or line.startswith("- ") or line.rstrip("\r\n") == "-":
                end += 1
                last_content = end
                continue
            break
        blocks.append((match.group("key"), i, last_content))
        i = last_content
    return blocks


def keys(text: str) -> list[str]:
    layout = split(text)
    return [] if layout.fm is None else [key for key, _, _ in _blocks(layout.fm)]


def key_blocks(text: str) -> list[tuple[str, str]]:
    """(key, its lines as written, with `\n` line ends) for each top-level frontmatter key, in
    order: what supersede carries over to the new card byte for byte."""
    layout = split(text)
    if layout.fm is None:
        return []
    out = []
    for key, start, end in _blocks(layout.fm):
        lines = [line.rstrip("\r\n") + "\n" for line in layout.fm[start:end]]
        out.append((key, "".join(lines)))
    return out


def set_keys(text: str, values: dict[str, str | None]) -> str:
    """Give each key the rendered YAML value (None removes the key). Other lines stay as they are.

    A key that is not there yet goes at the end of the frontmatter; a note without frontmatter
    gets one, holding only the keys being set.
    """
    layout = split(text)
    nl = layout.newline
    if layout.fm is None:
        lines = [f"{key}: {value}{nl}" for key, value in values.items() if value is not None]
        if not lines:
            return text
        layout.fm, layout.opener, layout.closer = lines, f"---{nl}", f"---{nl}"
        return layout.join()
    fm = list(layout.fm)
    for key, value in values.items():
        found = [b for b in _blocks(fm) if b[0] == key]
        if found:
            _, start, end = found[-1]  # YAML keeps the last of duplicate keys
            if value is None:
                del fm[start:end]
            else:
                prefix = _KEY.match(fm[start]).group(0)  # type: ignore[union-attr]  # _blocks found a key
                if not prefix.endswith((" ", "\t")):
                    prefix = prefix.rstrip() + " "
                fm[start:end] = [f"{prefix}{value}{nl}"]
        elif value is not None:
            if fm and not fm[-1].endswith(_BREAKS):
                fm[-1] += nl
            fm.append(f"{key}: {value}{nl}")
    layout.fm = fm
    return layout.join()


def set_body(text: str, body: str) -> str:
    """Replace the body; the frontmatter text and any blank lines after it are kept."""
    layout = split(text)
    nl = layout.newline
    blank = re.match(r"(?:[ \t]*(?:\r\n|\r|\n))*", layout.body).group(0) if layout.fm is not None else ""  # type: ignore[union-attr]  # * always matches
    if layout.fm is not None and not layout.closer.endswith(_BREAKS):
        layout.closer += nl
    layout.body = blank + (body.replace("\n", nl) + nl if body else "")
    return layout.join()


def body_region(text: str) -> str:
    return split(text).body


# --- rendering values -------------------------------------------------------------------------

def _printable(ch: str) -> bool:
    """Characters a YAML reader accepts raw inside a double-quoted scalar (and not a line break)."""
    o = ord(ch)
    return (0x20 <= o <= 0x7E or 0xA0 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000) \
        and o not in (0x2028, 0x2029)


# A character _printable refuses, found by one search instead of a call per character (a
# consolidate plan renders a summary for most of 100,000 cards); a test compares the two.
_UNPRINTABLE = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _plain_printable(value: str) -> bool:
    """Whether `value` could go unquoted: not empty, no blank around it, every character printable."""
    return bool(value) and value == value.strip() and _UNPRINTABLE.search(value) is None


def quoted(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)  # JSON strings are YAML double-quoted strings
    return "".join(c if _printable(c) or c in "\t" else f"\\u{ord(c):04x}" for c in text)


def _loads(text: str):
    """The text as python-frontmatter's loader reads it (memsync.yamldata), None when it cannot:
    not YAML, or a value YAML reads as something that cannot be (the date 2024-02-30)."""
    try:
        return yamldata.load(text)
    except (yaml.YAMLError, ValueError):
        return None


def scalar(value: str) -> str:
    """The value as YAML that reads back as exactly this string: plain when safe, else quoted."""
    return value if _plain_printable(value) and _loads(f"k: {value}") == {"k": value} else quoted(value)


def number_or_scalar(value: str) -> str:
    """For priority-like fields: `5` stays a bare number (read back as text "5")."""
    return value if re.fullmatch(r"-?[1-9]\d{0,17}|0", value) else scalar(value)


def flow_list(items) -> str:
    rendered = []
    for item in items:
        if _plain_printable(item) and _loads(f"k: [{item}]") == {"k": [item]}:
            rendered.append(item)
        else:
            rendered.append(quoted(item))
    return "[" + ", ".join(rendered) + "]"
