"""The writing system a card is mostly written in (Han, Latin, Hangul, Kana, ...). Pure.

The hybrid searcher judges a card found by meaning alone against the cards written in the same
script: a multilingual model ranks every card of the query's own language above the answer in
another language, so against the whole vault that answer does not stand out, while among the
cards of its own script it does (see fusion.FLOOR).

A CJK character counts as one (it is about a word); any other script counts by words, so a
Chinese note full of paths and English terms stays Han. Every card of a vault is told at once,
with numpy over the code points: a process's first search reads them all.
"""

from __future__ import annotations

import functools

SAMPLE = 400  # characters of title + body read: enough to tell, cheap to read for every card

# Counted by character, then by word; the first of equal counts wins.
CJK = ("han", "kana", "hangul")
ALPHABETS = ("latin", "cyrillic", "greek", "arabic", "hebrew", "devanagari", "thai", "armenian")
NAMES = ("",) + CJK + ALPHABETS
# (first code point, script) of each range; a range runs to the next start; "" is no letter.
_RANGES = [
    (0x00, ""), (0x41, "latin"), (0x5B, ""), (0x61, "latin"), (0x7B, ""), (0xC0, "latin"),
    (0x250, ""), (0x370, "greek"), (0x400, "cyrillic"), (0x500, ""), (0x531, "armenian"),
    (0x590, "hebrew"), (0x600, "arabic"), (0x700, ""), (0x900, "devanagari"), (0x980, ""),
    (0xE00, "thai"), (0xE80, ""), (0x1100, "hangul"), (0x1200, ""), (0x1E00, "latin"),
    (0x1F00, "greek"), (0x2000, ""), (0x3040, "kana"), (0x3100, ""), (0x3130, "hangul"),
    (0x3190, ""), (0x31F0, "kana"), (0x3200, ""), (0x3400, "han"), (0x4DC0, ""), (0x4E00, "han"),
    (0xA000, ""), (0xAC00, "hangul"), (0xD7B0, ""), (0xF900, "han"), (0xFB00, ""),
    (0xFF21, "latin"), (0xFF3B, ""), (0xFF41, "latin"), (0xFF5B, ""), (0xFF66, "kana"),
    (0xFFA0, ""), (0x20000, "han"), (0x31350, ""),
]


@functools.cache
def _table():
    """Script number (an index into NAMES) of every code point."""
    import numpy as np

    table = np.zeros(0x110000, dtype=np.int8)
    for (start, name), (end, _next) in zip(_RANGES, _RANGES[1:] + [(0x110000, "")]):
        table[start:end] = NAMES.index(name)
    return table


def of_cards(samples: list[str]) -> list[str]:
    """The dominant script of each text ("" when it has no letters). Japanese (Han with Kana
    between) is "kana", so it is not taken for Chinese."""
    import numpy as np

    if not samples:
        return []
    text = "\0".join(samples)  # \0 is no letter: no word runs from one text into the next
    points = np.frombuffer(text.encode("utf-32-le", "replace"), dtype=np.uint32)  # lone surrogates: "?"
    cls = _table()[points]
    counted = cls > 0
    counted[1:] &= (cls[1:] <= len(CJK)) | (cls[1:] != cls[:-1])  # a CJK character, a word's start
    at = np.flatnonzero(counted)
    ends = np.cumsum(np.fromiter((len(s) + 1 for s in samples), np.int64, len(samples)))
    owner = np.searchsorted(ends, at, side="right")
    counts = np.bincount(owner * len(NAMES) + cls[at],
                         minlength=len(samples) * len(NAMES)).reshape(len(samples), len(NAMES))
    han, kana = NAMES.index("han"), NAMES.index("kana")
    japanese = (counts[:, kana] * 4 >= counts[:, han]) & (counts[:, han] > 0)
    counts[japanese, kana] += counts[japanese, han]
    counts[japanese, han] = 0
    counts[:, 0] = 0
    best = counts.argmax(axis=1)
    return [NAMES[b] if counts[i, b] else "" for i, b in enumerate(best)]


def dominant(text: str) -> str:
    return of_cards([text])[0]


def sample(title: str, head: str) -> str:
    """What a card is judged by: its title and the start of its body."""
    return f"{title}\n{head[:SAMPLE]}"


def of_card(title: str, head: str) -> str:
    return dominant(sample(title, head))
