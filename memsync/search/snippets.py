"""What a hit shows: the card's summary, or a window of its body around the first match. Pure:
a body and the query's terms in, one line of the body's own characters out.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memsync import chars, cjk
from memsync.search.query import heads as query_heads

SNIPPET_CHARS = 160
# A hit's title and summary as shown: what a person wrote by hand may be any length (a title of
# 100,000 characters came back whole in every hit, over MCP too). The write side's own bounds.
TITLE_CHARS = 200
SUMMARY_CHARS = 300


@lru_cache(maxsize=32)  # the same terms for every hit of a search
def _heads(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """The heads of the query's words that the prefix tiers match as whole words (query.cuts:
    `postgresql` finds `postgres`), longest first: at a place, the longest one the text holds."""
    heads = query_heads(terms)
    # Plain strings: a Unicode class would cost this search milliseconds to compile (memsync.cjk).
    return re.compile("|".join(map(re.escape, heads))) if heads else None


def _in_word(char: str) -> bool:
    """Whether `char` joins the token beside it: a letter or digit, but not CJK (memsync.cjk
    splits `用postgres` into 用 and postgres)."""
    return char.isalnum() and not cjk.is_cjk(char)


def _positions(lowered: str, terms: tuple[str, ...], heads: re.Pattern[str] | None) -> list[int]:
    """Where the terms occur in the lowered text. Only when none does, where a head of one begins
    a word, as FTS5 matched it (never `elastic` inside `inelastic`): a whole word first
    (`postgres`, `postgres's`), else the start of a longer one (`postgresdb`)."""
    found = [p for p in (lowered.find(t) for t in terms if t) if p >= 0]
    if found or heads is None:
        return found
    starts = [m for m in heads.finditer(lowered) if not (m.start() and _in_word(lowered[m.start() - 1]))]
    whole = [m for m in starts if not (m.end() < len(lowered) and _in_word(lowered[m.end()]))]
    return [(whole or starts)[0].start()] if starts else []


def snippet(body: str, terms: tuple[str, ...], width: int = SNIPPET_CHARS) -> str:
    """A window of the body around the first match, in the body's own characters.

    Matching happens on the folded text (NFKC, lowercase), as in the index; the window is always
    cut from the original, so `，` stays `，` and `ﬁle` or `İstanbul` are not shown folded.
    A term found by plain lowercasing lets only a stretch of the body around it be folded: a
    long card costs what its window does. A card the prefix tiers found only by a head of a query
    word (`postgres` for `postgresql`) is shown around that head."""
    lowered = body.lower()
    heads = _heads(terms)
    found = _positions(lowered, terms, heads)
    if found and len(body) > 3 * width:
        # the window starts at most width // 3 (+ 20 to a space) before the match
        lo = max(0, min(found) - width)
        hi = lo + 3 * width
        if lo:  # begin the stretch at a space, so the window's own rule for its start holds
            space = body.rfind(" ", max(0, lo - 20), lo + 1)
            lo = space + 1 if space >= 0 else chars.boundary(body, lo)
        hi = chars.boundary(body, hi)
        return _window(body[lo:hi], terms, width, bool(lo), hi < len(body), heads)
    return _window(body, terms, width, False, False, heads)


def _window(body: str, terms: tuple[str, ...], width: int, cut_before: bool, cut_after: bool,
            heads: re.Pattern[str] | None = None) -> str:
    text = " ".join(body.split())  # runs of whitespace to one space, as \s+ would
    # Plain lowercasing finds the terms in most bodies, at the body's own positions. NFKC folding
    # (a tenth of a search's time when done on every hit) only when it does not (a card found by
    # its title or a stem), and over the first three windows at most: a card found by its title
    # alone need not be folded whole to learn that its body lacks the words (a full-width match
    # deeper in shows the opening).
    lowered = text.lower()
    positions = _positions(lowered, terms, heads) if len(lowered) == len(text) else []
    if not positions:
        if len(text) > 3 * width:
            text, cut_after = text[: chars.boundary(text, 3 * width)], True
        folded = cjk.normalize(text)  # NFKC and lower(), full-width forms folded first: cheaper
        positions = _positions(folded, terms, heads)
        if len(folded) != len(text):  # a few characters change length when folded (ﬁ, İ, ㌔)
            positions = [_unfolded(text, p) for p in positions]
    start = max(0, min(positions) - width // 3) if positions else 0
    last = max(0, len(text) - width)  # the start of a window that ends with the text
    if start >= last:  # such a window shows the most: begin at its first whole word
        start = last
        space = text.find(" ", max(0, start - 1), start + 20)
    else:  # begin at a word, not inside one
        space = text.rfind(" ", max(0, start - 20), start + 1)
    if start and space >= 0:
        start = space + 1
    # a window without a space to begin at is cut where no character is split (memsync.chars:
    # an accent typed apart, a flag, an emoji sequence, Hangul jamo)
    start = chars.boundary(text, start)
    end = chars.boundary(text, start + width)
    return (("…" if start or cut_before else "") + text[start:end]
            + ("…" if end < len(text) or cut_after else ""))


def _unfolded(text: str, at: int) -> int:
    """Where in `text` the folded text's position `at` lies: the longest start of `text` that
    folds to at most `at` characters (folding a longer start never gives fewer). The window is
    then cut from the note's own characters, not from its folded form."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(cjk.normalize(text[:mid])) <= at:
            lo = mid
        else:
            hi = mid - 1
    return lo


def shown_text(summary: str | None, body: str, terms: tuple[str, ...]) -> str:
    """What a hit shows: the card's own summary when it has one (one line the writer chose,
    DESIGN §12), else a window of the body around the first match."""
    return shortened(summary, SUMMARY_CHARS) if summary else snippet(body, terms)


def shown_title(title: str) -> str:
    return shortened(title, TITLE_CHARS)


def shortened(text: str, most: int) -> str:
    """`text` cut to `most` characters as a person counts them (memsync.chars: composed, never
    inside one), the cut marked with …; the card itself keeps it whole."""
    return chars.cut(text, most)
