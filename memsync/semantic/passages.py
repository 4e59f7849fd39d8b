"""Cutting a card into passages the model can take whole. Pure: token counts come from a callable.

multilingual-e5 reads at most 512 tokens (its `passage: ` prefix and two special tokens
included) and would silently average longer text over windows, blurring a long note into its
mean. A card is cut at paragraph, then sentence, then character boundaries into passages that
each fit, every passage led by the card's title so it keeps its context; a card then scores by
its best passage.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MAX_TOKENS = 512  # the model's window, prefix and special tokens included
MAX_PASSAGES = 32  # ~16k tokens; text past that is still found lexically
_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCES = re.compile(r"(?<=[.!?;。！？；])\s*")


def card_text(title: str, body: str) -> str:
    """The text a one-passage card is embedded as."""
    title, body = title.strip(), body.strip()
    return f"{title}\n\n{body}" if title and body else title or body


def split(title: str, body: str, count: Callable[[str], int], limit: int = MAX_TOKENS) -> list[str]:
    """Passages of the card; `count(text)` is the model's token count for a passage."""
    whole = card_text(title, body)
    if count(whole) <= limit:
        return [whole]
    base = count("")  # prefix and special tokens, paid once per passage
    lead = f"{title.strip()}\n\n" if title.strip() else ""
    room = max(32, limit - count(lead) - 8)  # a little slack: counts of joined pieces can differ
    pieces = [p for part in _PARAGRAPHS.split(body) for p in _fit(part.strip(), room, count, base)]
    passages: list[str] = []
    current: list[str] = []
    used = 0
    for piece in pieces:
        size = count(piece) - base + 1
        if current and used + size > room:
            passages.append(lead + "\n".join(current))
            current, used = [], 0
        current.append(piece)
        used += size
    if current:
        passages.append(lead + "\n".join(current))
    return passages[:MAX_PASSAGES]


def _fit(text: str, room: int, count: Callable[[str], int], base: int) -> list[str]:
    """`text` as pieces of at most `room` tokens: whole, else by sentences, else by characters."""
    if not text:
        return []
    if count(text) - base <= room:
        return [text]
    sentences = [s for s in _SENTENCES.split(text) if s.strip()]
    if len(sentences) > 1:
        return [p for s in sentences for p in _fit(s, room, count, base)]
    half = len(text) // 2  # one unbroken run (a table, a URL list, CJK without punctuation)
    return _fit(text[:half], room, count, base) + _fit(text[half:], room, count, base)
