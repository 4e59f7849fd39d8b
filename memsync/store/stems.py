"""The stems FTS5's porter tokenizer makes of words, asked of FTS5 itself.

Porter stems `deploy` to `deploi` but `deployment` to `deploy`, so neither word's prefix reaches
the other (memsync.search.query bridges them). Asking FTS5, not a stemmer written again here,
keeps the bridge in step with what the index holds. An in-memory table of its own: nothing is
written to the index.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable

from memsync.store.fts import TOKENIZE

_LOCAL = threading.local()  # one small in-memory table per thread (MCP calls come from several)


def _table() -> sqlite3.Connection:
    conn = getattr(_LOCAL, "conn", None)
    if conn is None:
        conn = _LOCAL.conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, tokenize = '{TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE stems USING fts5vocab(words, 'instance')")
    return conn


def stems(words: Iterable[str]) -> dict[str, str]:
    """word -> its stem, for each of `words` (folded words of one token each)."""
    words = list(dict.fromkeys(words))
    if not words:
        return {}
    conn = _table()
    with conn:  # one row a word: a word the tokenizer split (or dropped) cannot shift the others
        conn.executemany("INSERT INTO words (rowid, word) VALUES (?, ?)", enumerate(words, 1))
        found = dict(conn.execute("SELECT doc, term FROM stems WHERE offset = 0").fetchall())
        conn.execute("DELETE FROM words")
    return {word: found.get(i, word) for i, word in enumerate(words, 1)}
