"""What a hit shows: the card's summary, or a window of its body around its matches. Pure:
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


def _positions(lowered: str, terms: tuple[str, ...], heads: re.Pattern[str] | None,
               firsts: dict[str, int] | None = None) -> list[int]:
    """Where the terms occur in the lowered text. Only when none does, where a head of one begins
    a word, as FTS5 matched it (never `elastic` inside `inelastic`): a whole word first
    (`postgres`, `postgres's`), else the start of a longer one (`postgresdb`)."""
    found = list((_firsts(lowered, terms) if firsts is None else firsts).values())
    if found or heads is None:
        return found
    starts = [m for m in heads.finditer(lowered) if not (m.start() and chars.in_word(lowered[m.start() - 1]))]
    whole = [m for m in starts if not (m.end() < len(lowered) and chars.in_word(lowered[m.end()]))]
    return [(whole or starts)[0].start()] if starts else []


# Places looked at per query word: the first few of each, so a word on every line of a long log
# costs no more than a rare one.
_PLACES_PER_TERM = 8


def _firsts(lowered: str, terms: tuple[str, ...]) -> dict[str, int]:
    """The first place of each query word the text holds."""
    return {t: at for t in terms if t and (at := lowered.find(t)) >= 0}


def _richest(lowered: str, firsts: dict[str, int], width: int) -> int:
    """Where the window that shows the most of the query's words begins its match, the first of
    those: `needle-at-the-end` shows the one line holding all four words, not the first `the`
    of a long log. `firsts`: the words the text holds, each at its first place. In most cards
    the first match's window shows them all (or the text is one window long), and nothing more
    is looked at; else only the first places of each word are tried (_PLACES_PER_TERM), in
    order, until a window shows them all."""
    first = min(firsts.values())
    if len(firsts) < 2 or len(lowered) <= width:
        return first

    def shown(at: int) -> int:
        lo = max(0, at - width // 3)
        seen = lowered[lo:lo + width]
        return sum(1 for t in firsts if t in seen)

    best, most = first, shown(first)
    if most == len(firsts):
        return first
    places: set[int] = set()
    for term, at in firsts.items():
        for _ in range(_PLACES_PER_TERM):
            if at < 0:
                break
            places.add(at)
            at = lowered.find(term, at + 1)
    for at in sorted(places):
        count = shown(at)
        if count > most:
            best, most = at, count
            if count == len(firsts):
                break
    return best


def snippet(body: str, terms: tuple[str, ...], width: int = SNIPPET_CHARS) -> str:
    """A window of the body around its matches, in the body's own characters: where the most of
    the query's words show, the first such place.

    Matching happens on the folded text (NFKC, lowercase), as in the index; the window is always
    cut from the original, so `，` stays `，` and `ﬁle` or `İstanbul` are not shown folded.
    A term found by plain lowercasing lets only a stretch of the body around it be folded: a
    long card costs what its window does. A card the prefix tiers found only by a head of a query
    word (`postgres` for `postgresql`) is shown around that head."""
    lowered = body.lower()
    heads = _heads(terms)
    firsts = _firsts(lowered, terms)
    found = _positions(lowered, terms, heads, firsts)
    if found and len(body) > 3 * width:
        # the window starts at most width // 3 (+ 20 to a space) before the match
        at = _richest(lowered, firsts, width) if firsts else min(found)
        lo = max(0, at - width)
        hi = lo + 3 * width
        if lo:  # begin the stretch at a space, so the window's own rule for its start holds
            space = body.rfind(" ", max(0, lo - 20), lo + 1)
            lo = space + 1 if space >= 0 else chars.boundary(body, lo)
        hi = chars.boundary(body, hi)
        stretch = body[lo:hi]
        focus = None
        if len(lowered) == len(body):  # the place, in the stretch with its whitespace collapsed
            before = stretch[:at - lo]
            focus = len(" ".join(before.split())) + (1 if before.strip() and before[-1].isspace() else 0)
        return _window(stretch, terms, width, bool(lo), hi < len(body), heads, focus)
    return _window(body, terms, width, False, False, heads)


def _window(body: str, terms: tuple[str, ...], width: int, cut_before: bool, cut_after: bool,
            heads: re.Pattern[str] | None = None, focus: int | None = None) -> str:
    """`focus`: where in the text the window's match is, when the caller found it already."""
    text = " ".join(body.split())  # runs of whitespace to one space, as \s+ would
    if focus is not None:
        return _cut(text, focus, width, cut_before, cut_after)
    # Plain lowercasing finds the terms in most bodies, at the body's own positions. NFKC folding
    # (a tenth of a search's time when done on every hit) only when it does not (a card found by
    # its title or a stem), and over the first three windows at most: a card found by its title
    # alone need not be folded whole to learn that its body lacks the words (a full-width match
    # deeper in shows the opening).
    plain = text.lower()
    firsts = _firsts(plain, terms) if len(plain) == len(text) else {}
    positions = _positions(plain, terms, heads, firsts) if len(plain) == len(text) else []
    if not positions:
        if len(text) > 3 * width:
            text, cut_after = text[: chars.boundary(text, 3 * width)], True
        folded = cjk.normalize(text)  # NFKC and lower(), full-width forms folded first: cheaper
        positions = _positions(folded, terms, heads)
        if len(folded) != len(text):  # a few characters change length when folded (ﬁ, İ, ㌔)
            positions = [_unfolded(text, p) for p in positions]
    # the richest window where plain lowercasing found the words; else the first match
    at = _richest(plain, firsts, width) if firsts else min(positions) if positions else None
    return _cut(text, at, width, cut_before, cut_after)


def _cut(text: str, at: int | None, width: int, cut_before: bool, cut_after: bool) -> str:
    """The window of `text` that shows `at` a third of the way in (the opening when None)."""
    start = max(0, at - width // 3) if at is not None else 0
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
    DESIGN §12), else a window of the body around its matches."""
    return shortened(summary, SUMMARY_CHARS) if summary else snippet(body, terms)


def shown_title(title: str) -> str:
    return shortened(title, TITLE_CHARS)


def shortened(text: str, most: int) -> str:
    """`text` cut to `most` characters as a person counts them (memsync.chars: composed, never
    inside one), the cut marked with …; the card itself keeps it whole."""
    return chars.cut(text, most)
