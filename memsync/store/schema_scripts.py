"""Schema 21: words with combining marks, and the scripts written without spaces.

Before it, memsync.cjk took a combining mark for a separator, which cut a Devanagari, Bengali or
Tamil word into its consonants (हिन्दी -> ह न द: a search matched any word of the same
consonants), and it left Thai, Lao, Myanmar and Khmer runs whole (a word inside a sentence was
never found) or cut at their vowel signs. Now a mark stays in the word it follows (memsync.marks)
and those four scripts are searched by bigrams, as Chinese is.

The full-text rows of a card are deleted by handing FTS5 their tokens again (memsync.store.fts),
so rows written by the old cut cannot be deleted by the new one. An index holding any card whose
text the two cut differently therefore has its full-text tables emptied and every file marked
to be read again; one without such a card (most: no mark, no Thai after folding) is left alone.
"""

from __future__ import annotations

import functools
import re
import sys
import time

from memsync import cjk
from memsync.marks import RANGES as MARKS
from memsync.store import fts

# The scripts memsync.cjk began to cut as runs in schema 21 (its _CJK_RANGES has them all)
NEW_RUNS = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x19E0, 0x19FF),
            (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F))


def _class(ranges) -> str:
    return "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges)


@functools.cache
def _recut() -> tuple[re.Pattern, re.Pattern]:
    """Any mark or character of a new run (most texts hold neither: one class, a table lookup a
    character); and of those, what the cut of schema 21 reads otherwise than the one before: a
    character of a new run, or a mark right after a letter or digit that is not CJK (a mark
    anywhere else separated and still does: the variation selector of an emoji, of a kanji).
    The first pass keeps the code points past U+FFFF out of its class, which re tests range by
    range (30 s for the cards of 100,000 notes): a text holding any goes to the second."""
    basic = [(low, min(high, 0xFFFF)) for low, high in (*MARKS, *NEW_RUNS) if low <= 0xFFFF]
    word = rf"[^\W_{cjk._CJK_CLASS}]"
    return (re.compile(f"[{_class(basic)}\U00010000-\U0010ffff]"),
            re.compile(f"{word}[{_class(MARKS)}]|[{_class(NEW_RUNS)}]"))


def recut(text: str | None) -> bool:
    """Whether the two cuts may differ on this text once folded (İ folds to i and a combining
    dot, क़ to क and a nukta)."""
    if not text or text.isascii():
        return False
    folded = cjk.normalize(text)
    maybe, differs = _recut()
    return maybe.search(folded) is not None and differs.search(folded) is not None


def m021_marks_and_unspaced_scripts(conn) -> None:
    """The full text made again where a card's text is cut otherwise now (the module's doc).
    The look at every card's text costs 2.4 s once at 100,000 cards, most of it folding."""
    rows = conn.execute("SELECT title, aliases, tags, summary, path, body FROM cards")
    try:
        found = any(recut(text) for row in rows for text in row)
    finally:
        rows.close()  # a statement still reading the cards would keep the tables from going
    if not found:
        return
    fts.recreate(conn)
    stale = conn.execute("UPDATE files SET hash = ''").rowcount
    # search, stats and doctor say the index is being loaded until a whole reconcile ends
    conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (fts.UNFINISHED, time.strftime("%Y-%m-%dT%H:%M:%S%z")))
    print(f"memsync: index upgraded to schema 21 (words with combining marks; Thai, Lao, Myanmar and "
          f"Khmer searched by bigrams); its full text is made again: the {stale} file(s) will be "
          "read once more by the next `memsync index` or watcher start, and searches find nothing "
          "until then", file=sys.stderr)
