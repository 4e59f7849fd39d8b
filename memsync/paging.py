"""Windows over long card text for `show` and `memory_get`. Truncation is always explicit.
Pure: text in, a window out."""

from __future__ import annotations

from .errors import BadArgument

DEFAULT_MAX_CHARS = 20_000
# Past this many characters left, --full is not offered: a 5 MB log sent whole into a model's
# context (MCP's full=true) costs more than any answer in it is worth; windows read on.
FULL_HINT_CHARS = 100_000


def window(text: str, offset: int = 0, max_chars: int | None = None, full: bool = False) -> dict:
    if offset is None:
        offset = 0
    if max_chars is None:
        max_chars = DEFAULT_MAX_CHARS
    if offset < 0 or max_chars < 0:
        raise BadArgument("offset and max_chars must be 0 or more (max_chars 0 means the whole card)")
    length = len(text)
    end = length if full or max_chars == 0 else min(length, offset + max_chars)
    piece = text[offset:end] if offset < length else ""
    has_more = end < length
    page = {
        "text": piece,
        "offset": offset,
        "length": length,
        "returned": max(0, end - offset) if offset < length else 0,
        "has_more": has_more,
        "next_offset": end if has_more else None,
    }
    if has_more:  # beside the text, never in it: `text` is the card's own characters only; in
        # `memsync show`'s words, which the MCP server rewords (offset=N, full=true)
        rest = length - end
        whole = ", or --full for the whole text" if rest <= FULL_HINT_CHARS else ", a window at a time"
        page["hint"] = f"[… {rest} more characters not shown; continue with --offset {end}{whole}]"
    elif offset and offset >= length:  # an empty window, not an empty card
        page["hint"] = f"[offset {offset} is past the end: the card has {length} characters]"
    return page
