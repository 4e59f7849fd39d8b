"""Counting and cutting text by the characters a person sees. Pure: text in, a number or text out.

The same title can come as composed (`é`, `한`) or decomposed code points (`e` + U+0301, Hangul
jamo: macOS file names, some input methods); counted as written, the decomposed one is two or
three times as long, so a bound let one through whole and cut the other, and a cut at a code
point could end inside a character (`한` shown as `하`, an accent or a skin tone lost).
"""

from __future__ import annotations

import unicodedata

from memsync import cjk

_ZWJ = "\u200d"
_MARKS = frozenset({"Mn", "Mc", "Me"})  # combining marks, variation selectors among them


def length(text: str) -> int:
    """How many characters `text` has once composed (NFC): the same for either way of typing it."""
    return len(unicodedata.normalize("NFC", text))


def columns(text: str) -> int:
    """How many terminal columns `text` takes: two for a wide character (Han, Kana, Hangul,
    full-width forms), none for a mark that joins the one before it, one for the rest."""
    return sum(0 if unicodedata.category(c) in _MARKS or c == _ZWJ
               else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int) -> str:
    """`text` with spaces after it to fill `width` columns: `str.ljust` counts code points, so a
    Chinese path in a table pushed every column after it out of line."""
    return text + " " * (width - columns(text))


def cut(text: str, most: int, mark: str = "…") -> str:
    """`text` itself when it has at most `most` characters (length); else its first `most`
    composed characters or fewer, never ending inside one, followed by `mark`."""
    composed = unicodedata.normalize("NFC", text)
    if len(composed) <= most:
        return text
    return composed[:boundary(composed, most)].rstrip() + mark


def boundary(text: str, at: int) -> int:
    """The nearest place at or before `at` where a cut of `text` (as written, composed or not)
    leaves every character whole: where a window of it may begin or end."""
    at = max(0, min(at, len(text)))
    while 0 < at < len(text) and _continues(text, at):
        at -= 1
    return at


def word_end(text: str, at: int, floor: int) -> int:
    """Where a shortened `text` may end, at or before `at`: `at` itself (kept whole) unless that
    splits a word of Latin letters or digits, then the last space after `floor`. A CJK character
    on either side is a place to cut: Chinese and Japanese put no space between words, so going
    back to a space there dropped up to half of what fit (a brief line, an extractive summary)."""
    at = boundary(text, at)
    if not 0 < at < len(text) or not (in_word(text[at - 1]) and in_word(text[at])):
        return at
    space = text.rfind(" ", 0, at)
    return space if space > floor else at


def in_word(char: str) -> bool:
    """Whether `char` joins the word beside it: a letter or digit, but not CJK (memsync.cjk
    splits `用postgres` into 用 and postgres)."""
    return char.isalnum() and not cjk.is_cjk(char)


def _continues(text: str, at: int) -> bool:
    """Whether the code point at `at` belongs to the character begun before it."""
    char, before = text[at], text[at - 1]
    if char == _ZWJ or before == _ZWJ or unicodedata.category(char) in _MARKS:
        return True
    if "\U0001f3fb" <= char <= "\U0001f3ff" or "\U000e0020" <= char <= "\U000e007f":
        return True  # an emoji's skin tone, a flag's tag letters
    if "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff":
        return True  # a Hangul vowel or final jamo NFC could not compose (old Korean)
    return _is_regional(char) and _regionals_before(text, at) % 2 == 1  # 2nd letter of a flag


def _is_regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"


def _regionals_before(text: str, at: int) -> int:
    count = 0
    while at > count and _is_regional(text[at - count - 1]):
        count += 1
    return count
