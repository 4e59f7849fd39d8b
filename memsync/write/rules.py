"""The write-side rules that need no disk: what a title, tag list, body and file name may be.
Pure: values in, a verdict (or BadArgument) out.

Capture, update and supersede all pass through these, so one piece of content cannot get in
through one door and be refused at another.
"""

from __future__ import annotations

import re
import unicodedata

from memsync import chars
from memsync.errors import BadArgument
from memsync.model import KIND_FOLDERS

MIN_BODY_CHARS = 20
MAX_TITLE_CHARS = 200
# The file-name stem: short enough that `-NNN.md` still fits in the usual 255-byte name limit
# with room to spare, since CJK characters take three bytes each in UTF-8.
MAX_STEM_CHARS = 80
MAX_STEM_BYTES = 180
# `/ \ : * ? " < > |` break on some file system; `#` `^` `[` `]` break Obsidian links
# (and `#` is our `file#anchor` separator).
_UNSAFE = re.compile(r'[/\\:*?"<>|#^\[\]]')
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                     *(f"lpt{i}" for i in range(10))}
_TAG_COMMAS = re.compile("[,，、]")  # the comma, the full-width comma, the enumeration comma


def _drop_controls(text: str) -> str:
    """Control and format characters (and line/paragraph separators) become spaces."""
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") and c != "\u200d"
                   else c for c in text)


def clean_title(title: str | None) -> str:
    """One line, single spaces, no control characters. Empty is an error."""
    text = " ".join(_drop_controls(title or "").split())
    if not text:
        raise BadArgument("a card needs a title: pass --title with a few words naming the fact")
    if chars.length(text) > MAX_TITLE_CHARS:  # counted as shown: `é` is one, typed either way
        raise BadArgument(
            f"the title is {chars.length(text)} characters; keep it under {MAX_TITLE_CHARS} "
            "and put the detail in the body"
        )
    return text


def tag_items(text: str) -> list[str]:
    """The tags in one string: `a, b`, or a flow list as an agent may send it, `[a, b]` or
    `["a", "b"]` (YAML's and JSON's way to write a list), which must not become a tag `[a`.
    A Chinese input method types `，` or `、` between the items of a list: they part tags too,
    as no tag Obsidian reads holds either."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [item.strip().strip("'\"") for item in _TAG_COMMAS.split(text)]


def clean_tags(tags) -> list[str]:
    """A list, a comma string or a flow list (`[a, b]`); `#` prefixes and duplicates dropped,
    order kept."""
    if tags is None:
        return []
    items = tag_items(tags) if isinstance(tags, str) else list(tags)
    out: list[str] = []
    for item in items:
        tag = " ".join(_drop_controls(str(item)).split()).lstrip("#").strip()
        if tag and tag not in out:
            out.append(tag)
    return out


def clean_body(body: str | None) -> str:
    """Leading and trailing blank space is not kept (the parser strips it too), and line ends
    become `\\n`, so the body we compare is the body a later read gives back."""
    return (body or "").replace("\r\n", "\n").replace("\r", "\n").strip()


MAX_SUMMARY_CHARS = 300


def clean_summary(summary: str | None) -> str | None:
    """One line, single spaces; '' clears it (None). Longer than a result line can carry is an
    error: a summary is what a reader decides by, not a second body."""
    text = " ".join(_drop_controls(summary or "").split())
    if chars.length(text) > MAX_SUMMARY_CHARS:
        raise BadArgument(
            f"the summary is {chars.length(text)} characters; keep it to one line under "
            f"{MAX_SUMMARY_CHARS} saying what the card holds"
        )
    return text or None


def long_body_warning(body: str, summary: str | None, threshold: int) -> str | None:
    """Why a long body without a summary is a problem, and what to do (seed 002: the long
    catch-all cards were found for everything and helped with nothing)."""
    if summary or len(body) <= threshold:
        return None
    return (
        f"the body is {len(body)} characters (over {threshold}) and has no summary: search "
        "results show a window of the body instead, so the card is hard to find and costly to "
        "read; add a one-line summary (--summary, or `summary:` in the frontmatter) or split "
        "it into several cards"
    )


def body_problem(body: str) -> str | None:
    """Why a body is refused, or None. Same threshold for capture, update and supersede."""
    if len(body) < MIN_BODY_CHARS:
        return (
            f"the body has {len(body)} characters; a card needs at least {MIN_BODY_CHARS}. "
            "Write the fact so it can be understood later without context (what, where, why)"
        )
    return None


KINDS_SAID = ", ".join(KIND_FOLDERS)


def check_kind(kind: str) -> str:
    if kind not in KIND_FOLDERS:
        raise BadArgument(f"unknown kind {kind!r}; use one of: {KINDS_SAID}")
    return kind


def slug(title: str) -> str:
    """A file-name stem from a title, as Obsidian names a note: the title itself, spaces, CJK
    and case kept, so `[[the title]]` resolves to the file. Only what is unsafe goes: path
    separators and the characters above, control characters, a leading dot (a hidden file), a
    dash starting a word (an option), trailing dots and spaces (Windows drops them), reserved
    Windows names (`con`, `lpt1`, ...)."""
    text = unicodedata.normalize("NFC", _drop_controls(title))
    text = _UNSAFE.sub(" ", text)
    # A word never starts with `-`: `x --rf.md` would read as an option to a shell command
    # (and to the MCP edge's flag wording); `ecs-prod` keeps its hyphen.
    text = " ".join(word.lstrip("-") for word in text.split())
    text = " ".join(text.split()).lstrip(". ").rstrip(". ")
    while len(text) > MAX_STEM_CHARS or len(text.encode("utf-8")) > MAX_STEM_BYTES:
        text = text[:-1]
    text = text.rstrip(". ")
    if not text:
        return "untitled"
    head, dot, tail = text.partition(".")
    if head.rstrip().lower() in _WINDOWS_RESERVED:  # `con.md` and `con.txt.md` alike
        text = head.rstrip() + "-note" + dot + tail
    return text


def numbered(stem: str, n: int) -> str:
    """The n-th candidate file name for a stem: `x.md`, `x-2.md`, `x-3.md`, ..."""
    return f"{stem}.md" if n == 1 else f"{stem}-{n}.md"


def same_title(a: str | None, b: str | None) -> bool:
    """Same title for the conflict rule: equal once spacing is squeezed (what clean_title does)."""
    return a is not None and b is not None and " ".join(a.split()) == " ".join(b.split())
