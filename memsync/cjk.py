"""The tokenizer shared by documents and queries. Pure: text in, tokens out.

NFKC first (full-width letters become ASCII), then lowercase. Runs of CJK characters (Han, Kana,
Hangul, and Thai, Lao, Myanmar and Khmer, written without spaces between words) become
overlapping character bigrams; everything else becomes words of letters and digits, each with
the combining marks that follow its letters (memsync.marks: the vowel signs of हिन्दी).
A boundary between Latin/digits and CJK always splits, so `用prometheus单独管理` yields the word
`prometheus`. The output is handed to FTS5 as space-separated tokens, which its `ascii`
tokenizer splits at the spaces and nothing else (memsync.store.fts).

In documents a CJK run also ends with its last character alone (`私钥` -> `私钥 钥`): every
occurrence of a character then starts a token, so the one-character query `钥` is the prefix
query `"钥" *` and finds `私钥` too. Queries keep plain bigrams (`phrases`).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata

from memsync import marks as _marks

# The scripts searched by bigrams of characters: those written without spaces between words
# (Chinese, Japanese; Thai, Lao, Myanmar, Khmer) and Hangul. "CJK" in memsync means all of them.
# The regex class and is_cjk() are both made from this one table, in ascending order.
_CJK_RANGES = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul jamo
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # Han extension A
    (0x4E00, 0x9FFF),  # Han unified
    (0xA9E0, 0xA9FF),  # Myanmar extended-B
    (0xAA60, 0xAA7F),  # Myanmar extended-A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # Han compatibility
    (0x20000, 0x3134F),  # Han extensions B..H
)
_CJK_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES)
_RANGE_STARTS = tuple(low for low, _ in _CJK_RANGES)
# A CJK run, or a run of letters/digits that are not CJK (underscore separates). ASCII text is
# split by the small pattern. Compiling the Unicode classes takes milliseconds (Python's re
# builds their bitmaps code point by code point: 3-5 ms for the pattern below), which a
# `memsync search` of a CJK query would pay for a few characters: short texts are split
# character by character, with the same result (a test checks every code point), unless the
# process has built the classes already (_BUILT): an indexer, for the first note it reads.
_ASCII_PIECE = re.compile(r"[^\W_]+", re.ASCII)
SHORT_TEXT = 256


# The patterns with Unicode classes this process has built: _pieces asks on every call, and a
# set is cheaper to ask than functools' cache_info().
_BUILT: set[str] = set()


@functools.cache
def _word() -> str:
    """A word as a pattern: letters and digits that are not CJK, each mark kept with the word it
    follows (memsync.marks: हिन्दी is one word, not five consonants). A mark after anything else
    (a space, a CJK character) separates, as before."""
    marks = [code for low, high in _marks.RANGES for code in range(low, high + 1)
             if not _in_cjk(chr(code))]  # a Thai vowel sign belongs to its run
    # consecutive code points share code - position: each such group is one range of the class
    runs = [[code for _, code in group]
            for _, group in itertools.groupby(enumerate(marks), lambda item: item[1] - item[0])]
    mark_class = "".join(f"{chr(run[0])}-{chr(run[-1])}" for run in runs)
    return rf"(?:[^\W_{_CJK_CLASS}]+[{mark_class}]*)+"


@functools.cache
def _piece_pattern() -> re.Pattern:
    _BUILT.add("pieces")
    return re.compile(rf"[{_CJK_CLASS}]+|{_word()}")


def _in_cjk(char: str) -> bool:
    code = ord(char)
    at = bisect.bisect_right(_RANGE_STARTS, code) - 1
    return at >= 0 and code <= _CJK_RANGES[at][1]


def _char_kind(char: str) -> int:
    """2 for a CJK character, 1 for another letter or digit (a word character but the
    underscore: re's test for one is str.isalnum()), 0 for anything else."""
    return 2 if _in_cjk(char) else 1 if char.isalnum() else 0


@functools.cache
def _mark_starts() -> tuple[int, ...]:
    return tuple(low for low, _ in _marks.RANGES)


def _is_mark(char: str) -> bool:
    code = ord(char)
    at = bisect.bisect_right(_mark_starts(), code) - 1
    return at >= 0 and code <= _marks.RANGES[at][1]


def _pieces(text: str) -> list[str]:
    if text.isascii():
        return _ASCII_PIECE.findall(text)
    if _BUILT or len(text) > SHORT_TEXT:
        return _piece_pattern().findall(text)
    return _pieces_by_char(text)


def _pieces_by_char(text: str) -> list[str]:
    """As _piece_pattern cuts, a character at a time (no pattern to build for a short text)."""
    pieces: list[str] = []
    kind = 0
    for char in text:
        now = _char_kind(char)
        if now == 0 and kind == 1 and _is_mark(char):
            now = 1  # a mark stays in the word it follows
        if now and now == kind:
            pieces[-1] += char
        elif now:
            pieces.append(char)
        kind = now
    return pieces


def _starts_cjk(piece: str) -> bool:
    return not piece.isascii() and _in_cjk(piece[0])


# Full-width ASCII forms and the ideographic space: the only characters of most Chinese text
# that NFKC changes (，；：（）). Folded first, on their own, they leave the rest already in NFKC,
# which unicodedata then only checks instead of decomposing and composing the whole text (half
# the cost of folding a Chinese note). Each is a starter that folds to ASCII, so nothing can
# compose across where it stood: the result is NFKC of the whole text, as a test checks.
_FULL_WIDTH = re.compile("[\uff01-\uff5e\u3000]+")


def _fold_full_width(match: re.Match) -> str:
    return unicodedata.normalize("NFKC", match.group())


def fold_width(text: str) -> str:
    """The full-width forms folded (the reference for memsync/_tokenstream.c's fold_width)."""
    return _FULL_WIDTH.sub(_fold_full_width, text)


try:  # normalize's passes in C, built with the package where a C compiler was at hand
    from memsync._tokenstream import fold_width as _fold_width
    from memsync._tokenstream import lower as _lower
except ImportError:
    _fold_width, _lower = fold_width, str.lower


def normalize(text: str) -> str:
    """NFKC, then lower case. Most of a text's time was the search for full-width forms and
    str.lower, each a pass in C now (a third of an audit's CPU at 100,000 cards went here)."""
    if text.isascii():
        return text.lower()
    return _lower(unicodedata.normalize("NFKC", _fold_width(text)))


def pieces(text: str) -> list[str]:
    """The folded text's words and CJK runs, in order."""
    return _pieces(normalize(text))


def bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def run_tokens(run: str) -> list[str]:
    """A CJK run as a document stores it: its bigrams, then its last character alone."""
    return bigrams(run) + [run[-1]] if len(run) > 1 else [run]


def is_cjk(token: str) -> bool:
    return _starts_cjk(token)


def tokens(text: str) -> list[str]:
    """Every token a document's `text` is stored as, in order."""
    out: list[str] = []
    for piece in _pieces(normalize(text)):
        if _starts_cjk(piece):
            out.extend(run_tokens(piece))
        else:
            out.append(piece)
    return out


@functools.cache
def _index_token() -> re.Pattern:
    """One token of a document's stream, matched in order by findall: the lookahead captures a
    CJK character with the next one (a bigram), a CJK character with none after it (the end of
    a run, or a lone one), or a word; then one CJK character, or the whole word, is consumed."""
    _BUILT.add("index token")
    word = _word()
    return re.compile(rf"(?=([{_CJK_CLASS}]{{2}}|[{_CJK_CLASS}]|{word}))"
                      rf"(?:[{_CJK_CLASS}]|{word})")


def stream_of(folded: str) -> str:
    """What tokens() gives for an already folded text, space-joined: cut by one regular
    expression rather than a Python step per CJK run (a fifth less time on the Chinese notes of
    memsync's test vault). The reference for memsync/_tokenstream.c, and what runs where that
    could not be built."""
    return " ".join(_index_token().findall(folded))


try:  # stream_of in C: built with the package where a C compiler was at hand (setup.py)
    from memsync._tokenstream import stream as _stream
except ImportError:
    _stream = stream_of


def to_index_text(text: str) -> str:
    """The space-joined token stream stored in the FTS5 table (the hot path of indexing),
    folded for FTS5 (fts_fold). The C stream took 0.31 s against 1.26 s for the bodies and
    titles of memsync's 10,000-note test vault, folding included."""
    text = normalize(text)
    if text.isascii():
        return " ".join(_ASCII_PIECE.findall(text))
    return fts_fold(_stream(text))


def fts_fold(tokens: str) -> str:
    """Tokens as FTS5 stores and matches them: final sigma as sigma. The one fold FTS5's
    unicode61 tokenizer made beyond lower() (checked for every code point by a test); done here,
    the plain `ascii` tokenizer indexes the same tokens as unicode61 did, in about 17 % less time.
    An index whose tables still use unicode61 folds ς itself, so it gets the same tokens too."""
    return tokens.replace("ς", "σ") if "ς" in tokens else tokens


def index_fields(title: str, aliases, tags, body: str) -> tuple[str, str, str]:
    """A card's three FTS columns: title with aliases, tags, body."""
    return (to_index_text(" ".join([title, *aliases])), to_index_text(" ".join(tags)),
            to_index_text(body))


_HIRAGANA = re.compile("[\u3040-\u309f]+")


def content_runs(run: str) -> list[str]:
    """The parts of a Japanese CJK run between its hiragana, two characters or longer:
    `金沢で朝に海鮮丼を食べる` -> [金沢, 海鮮丼]. Hiragana carry the particles and inflections
    (で, に, を, べる); kanji and katakana carry the words. A run without hiragana (Chinese, Korean,
    a bare Japanese noun) has no such parts: []."""
    if not _HIRAGANA.search(run):
        return []
    return [part for part in _HIRAGANA.split(run) if len(part) > 1]


def phrases(query: str) -> list[list[str]]:
    """Split a query into phrases: each CJK run, and each punctuation-joined group of words.

    `ecs-prod 阿里云` gives [["ecs", "prod"], ["阿里", "里云"]]: a phrase must match as adjacent
    tokens, which for overlapping bigrams means an exact substring.
    """
    out: list[list[str]] = []
    for chunk in normalize(query).split():
        words: list[str] = []
        for piece in _pieces(chunk):
            if _starts_cjk(piece):
                if words:
                    out.append(words)
                    words = []
                out.append(bigrams(piece))
            else:
                words.append(piece)
        if words:
            out.append(words)
    return out
