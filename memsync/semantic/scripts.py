"""The writing system a card is mostly written in (Han, Latin, Hangul, Kana, ...). Pure.

The hybrid searcher judges a card found by meaning alone against the cards written in the same
script: a multilingual model ranks every card of the query's own language above the answer in
another language, so against the whole vault that answer does not stand out, while among the
cards of its own script it does (see fusion.FLOOR).

A CJK character counts as one (it is about a word); any other script counts by words, so a
Chinese note full of paths and English terms stays Han.
"""

from __future__ import annotations

import bisect
import functools
import re

SAMPLE = 400  # characters of title + body read: enough to tell, cheap to read for every card

_CJK = {
    "han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f",
    "kana": "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "hangul": "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f",
}
# (first code point, script) of the alphabets a word can start with, in order
_ALPHABETS = [
    (0x0000, "latin"), (0x0370, "greek"), (0x0400, "cyrillic"), (0x0530, "armenian"),
    (0x0590, "hebrew"), (0x0600, "arabic"), (0x0700, "other"), (0x0900, "devanagari"),
    (0x0980, "other"), (0x0E00, "thai"), (0x0E80, "other"), (0x1E00, "latin"), (0x1F00, "greek"),
    (0x2000, "other"),
]
_STARTS = [start for start, _ in _ALPHABETS]


@functools.cache
def _patterns() -> dict[str, re.Pattern]:
    cjk = "".join(_CJK.values())
    out = {name: re.compile(f"[{chars}]") for name, chars in _CJK.items()}
    out["words"] = re.compile(rf"[^\W\d_{cjk}]+")
    return out


def dominant(text: str) -> str:
    """The script most of `text` is written in; "" when it has no letters. Japanese (Han with
    Kana between) is "kana", so it is not taken for Chinese."""
    patterns = _patterns()
    counts = {name: len(patterns[name].findall(text)) for name in _CJK}
    if counts["kana"] * 4 >= counts["han"] > 0:
        counts["kana"] += counts.pop("han")
    for word in patterns["words"].findall(text):
        script = _ALPHABETS[bisect.bisect_right(_STARTS, ord(word[0])) - 1][1]
        counts[script] = counts.get(script, 0) + 1
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else ""


def of_card(title: str, head: str) -> str:
    """The script of a card from its title and the start of its body."""
    return dominant(f"{title}\n{head[:SAMPLE]}")
