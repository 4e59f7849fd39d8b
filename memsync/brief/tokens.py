"""How many tokens a text costs a model, estimated without a tokenizer (text in, a count out).

The rule (docs/brief.md says it too): each CJK character (Han, Kana, Hangul) and each full-width
or CJK punctuation mark counts as one token; every other character counts as a quarter of one,
rounded up over the text (about four characters of English or code make a token). Tokenizers of
current models give 0.6-1.3 tokens per Chinese character and 3.5-4.5 characters per English
token, so a budget counted this way holds on either side of the mix.
"""

from __future__ import annotations

import functools
import re

from memsync.cjk import _CJK_CLASS

LATIN_CHARS_PER_TOKEN = 4
# CJK punctuation and symbols, full-width forms: one token each, like the characters around them.
_WIDE_EXTRA = "\u3000-\u303f\uff00-\uffef"


@functools.cache
def _wide() -> re.Pattern:
    return re.compile(f"[{_CJK_CLASS}{_WIDE_EXTRA}]")


def estimate(text: str) -> int:
    """Tokens `text` is counted as: wide characters one each, the rest four to a token."""
    if text.isascii():
        return -(-len(text) // LATIN_CHARS_PER_TOKEN)
    wide = len(_wide().findall(text))
    return wide + -(-(len(text) - wide) // LATIN_CHARS_PER_TOKEN)
