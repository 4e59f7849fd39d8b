"""Sentences of a card body's prose: what a merge adds word for word, what a summary is cut from.
Pure: text in, text out. Chinese and Japanese sentence ends (。！？) end a sentence as `.!?`
followed by a space do, and so does a line end."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice

from memsync import chars, cjk

SUMMARY_CHARS = 150
SUMMARY_SENTENCES = 2
# A CJK mark ends a sentence where it stands; `!`, `?` and `.` only before a space or the line's
# end (`page?id=42`, `<!--`, `[!note]` and `v2.3` go on).
_SENTENCE = re.compile(r".+?(?:[。！？]+[」』”）)]*|[!?]+[」』”）)]*(?=\s|$)|\.(?=\s|$)|$)", re.S)
_MARKUP = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|>\s*|\d+[.)]\s+)")
# Lines that are no sentence: a heading names a part, a table row is cells. Both stay in the
# merged-away card (kept, marked superseded); a summary starts after a heading.
_NOT_PROSE = re.compile(r"^\s*(?:#{1,6}(?:\s|$)|\|)")


def _prose(body: str) -> Iterator[str]:
    """The body's lines of prose: outside fenced code, no heading or table row, without list,
    task and quote marks."""
    fenced = False
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced and line.strip() and not _NOT_PROSE.match(line):
            yield _MARKUP.sub("", line).strip()


def _sentences(body: str) -> Iterator[str]:
    """The sentences of a body as they come: a summary needs the first two only, not a long
    body's hundred (at 100,000 cards, most of its time)."""
    for line in _prose(body):
        for sentence in _SENTENCE.findall(line):
            if sentence.strip():
                yield sentence.strip()


def split(body: str) -> list[str]:
    """The sentences of a body, each as written (inner spaces kept), in order."""
    return list(_sentences(body))


def folded(text: str) -> str:
    return " ".join(text.split())


def _key(sentence: str) -> str:
    """A sentence as compared: spaces folded, case and the closing mark aside."""
    return folded(sentence).rstrip(".。!！?？;；").casefold()


def missing(keeper_body: str, other_body: str) -> list[str]:
    """The other card's sentences the keeper does not hold, word for word, in order. A sentence is
    held only as a sentence of the keeper's: "Use port 80" is not held by "Use port 8080", nor
    "Never deploy on Friday" by "Never deploy on Friday afternoons without approval"."""
    have = {_key(sentence) for sentence in split(keeper_body)}
    out: list[str] = []
    for sentence in split(other_body):
        if _key(sentence) not in have:
            have.add(_key(sentence))
            out.append(sentence)
    return out


# CJK text runs its sentences together; any other pair of sentences is parted by a space.
_CJK_ENDS = "。！？」』）"
_CJK_OPENS = "「『（"


def _joined(first: str, then: str) -> str:
    if not first:
        return then
    cjk_end = first[-1] in _CJK_ENDS or cjk.is_cjk(first[-1])
    cjk_start = then[:1] in _CJK_OPENS or cjk.is_cjk(then[:1])
    return first + ("" if cjk_end and cjk_start else " ") + then


def merged_body(keeper_body: str, additions: list[str]) -> str:
    """The keeper's body with the added sentences at the end, one list item each: facts from
    another card's lists, paragraphs and quotes read apart, not as one run-on paragraph."""
    if not additions:
        return keeper_body
    return keeper_body.rstrip() + "\n\n" + "\n".join(f"- {sentence}" for sentence in additions)


def summary(body: str, limit: int = SUMMARY_CHARS) -> str | None:
    """The first sentences, as many as fit in `limit` characters; a first sentence longer than
    that is cut at a word (or, in CJK text, anywhere) and ends with `…`. On one line with single
    spaces, as the parser reads a `summary:` back: a tab or a no-break space kept in it would
    read back as a space, and the edit would be refused as not what was meant."""
    parts = [folded(sentence) for sentence in islice(_sentences(body), SUMMARY_SENTENCES)]
    if not parts:
        return None
    out = ""
    for sentence in parts:
        longer = _joined(out, sentence)
        if len(longer) > limit:
            break
        out = longer
    if out:
        return out
    first = parts[0]
    return first[:chars.word_end(first, limit - 1, limit // 2)].rstrip(" ,;:，、") + "…"
