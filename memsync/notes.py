"""Parse one Markdown file into a Card. Pure: bytes and a relative path in, a Card out.

Every guard here exists because real vaults contain the case: a BOM from Windows editors,
YAML that Obsidian happily shows but a parser rejects, dates written with and without quotes,
tags as a list or as a comma string, and bytes that are not UTF-8.
"""

from __future__ import annotations

import codecs
import datetime as dt
import json
import re
from collections.abc import Iterator

import frontmatter
import yaml

from memsync.pathnames import stem

from . import dates, outline, yamldata
from .model import FOLDER_KINDS
from .model.indexing import Card

# The frontmatter block: `---` on the first line, closed by `---` (or `...`) on its own line.
_FENCE = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*\r?$\n?", re.S | re.M)
_YAML = yamldata.Handler()
_LONE_CR = re.compile(r"\r(?!\n)")


def decode(data: bytes) -> tuple[str, str | None]:
    """Text of a file; bytes that are not UTF-8 are replaced, and that is reported."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    wide = _wide_encoding(data)
    if wide:
        # Read as UTF-8, every other byte of such a file is a NUL: a card of noise.
        codec, bom = wide
        name = codec[:6].upper()
        return _line_ends(data[bom:].decode(codec, errors="replace")), (
            f"file is {name} text, which Obsidian and memsync's write commands do not read; "
            "save it as UTF-8")
    try:
        return _line_ends(data.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        return _line_ends(data.decode("utf-8", errors="replace")), (
            f"not valid UTF-8 at byte {exc.start} (indexed as \ufffd); save it as UTF-8")


def _line_ends(text: str) -> str:
    """A carriage return alone ends a line (old Mac OS files; YAML and Obsidian's editor read it
    so): made a newline, or a note written so is one line, its frontmatter part of the body."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


# Byte order marks of the wide encodings Windows editors write ("Unicode" in Notepad), UTF-32's
# first: its little-endian mark begins with UTF-16's.
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
              (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def _wide_encoding(data: bytes) -> tuple[str, int] | None:
    """(codec, length of its byte order mark) of a UTF-16 or UTF-32 file, None for any other.
    Without a mark, UTF-16 shows as NUL bytes on one side of most byte pairs (the high byte of
    Latin text); a UTF-8 note with a stray NUL has too few of them to be taken for one."""
    for bom, codec in _WIDE_BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    head = data[:4096]
    pairs = len(head) // 2
    if pairs < 2:
        return None
    low, high = head[0:2 * pairs:2].count(0), head[1:2 * pairs:2].count(0)
    if high * 3 >= pairs and low * 8 <= high:
        return "utf-16-le", 0
    if low * 3 >= pairs and high * 8 <= low:
        return "utf-16-be", 0
    return None


def fenced(text: str) -> str | None:
    """The text between a leading `---` fence and its end, as written; None without one."""
    fence = _FENCE.match(text)
    return fence.group(1) if fence else None


def _yaml_error_line(block: str) -> int | None:
    """The line of the file where the YAML between the fences breaks, block's first line being
    the file's second. Read again from the block itself: the text python-frontmatter hands YAML
    starts with a newline of the fence, which put every line one too far. An error found only at
    the end of the block (an unclosed `[` or quote) points where that construct began."""
    try:
        yamldata.load(block, dates_as_written=True)  # as the handler loads it, bounded the same way
    except yaml.YAMLError as exc:
        mark, begun = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
        if mark is not None and begun is not None and mark.index >= len(block.rstrip()):
            mark = begun
        return None if mark is None else mark.line + 2
    except ValueError:  # a value Python cannot hold (0000-00-00 alone): no line to name
        return None
    return None


def split_frontmatter(text: str) -> tuple[dict, str, str | None]:
    """(metadata, body, problem). Broken YAML keeps the body and reports the problem."""
    fence = _FENCE.match(text)
    if not fence:
        return {}, text, None
    try:
        # the YAML handler python-frontmatter would pick for a `---` fence, loading faster
        meta, body = frontmatter.parse(text, handler=_YAML)
    except yamldata.TooManyValues as exc:  # an alias bomb: left unread
        return {}, _FENCE.sub("", text, count=1), str(exc)
    except yaml.YAMLError:
        line = _yaml_error_line(fence.group(1))
        where = f" (line {line})" if line is not None else ""
        return {}, _FENCE.sub("", text, count=1), f"frontmatter is not valid YAML{where}{_wide_colon(fence.group(1))}"
    except (ValueError, TypeError) as exc:
        return {}, _FENCE.sub("", text, count=1), f"frontmatter could not be read: {exc}"
    if not meta and fence.group(1).strip():
        # python-frontmatter quietly drops YAML that is not a mapping (a list, a bare string).
        try:
            fenced = yaml.safe_load(fence.group(1))
        except yaml.YAMLError:  # python-frontmatter saw no block here (no newline after it)
            return {}, _FENCE.sub("", text, count=1), "frontmatter is not valid YAML"
        except ValueError:  # a date that cannot be, alone (0000-00-00): a value, not a mapping
            return {}, body, "frontmatter is not a key/value mapping"
        if fenced is not None and not isinstance(fenced, dict):
            return {}, body, "frontmatter is not a key/value mapping" + _wide_colon(fence.group(1))
    return meta, body, None


_WIDE_COLON_KEY = re.compile(r"^[ \t]*[^\s:：#'\"-][^:：\n]*：", re.MULTILINE)


def _wide_colon(block: str) -> str:
    """The hint for a key written with the full-width colon a Chinese input method types
    (`title：x`): YAML reads that line as a bare string, so the block is no mapping, or broken."""
    found = _WIDE_COLON_KEY.search(block)
    if not found:
        return ""
    line = block.count("\n", 0, found.start()) + 2  # the file's line: the fence is line 1
    return f"; line {line} writes its key with a full-width colon (：): use an ASCII colon and a space, `key: value`"


def _as_list(value: object, separators: str = r"[,\s]+") -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items = re.split(separators, value)
    elif isinstance(value, (list, tuple, set)):
        items = [str(v) for v in _scalars(value)]
    elif isinstance(value, dict):
        items = []  # no tag is a key/value pair: reported (_mapping_problem)
    else:
        items = [str(value)]
    return tuple(dict.fromkeys(i.strip().lstrip("#") for i in items if i and i.strip().lstrip("#")))


def _scalars(items) -> Iterator[object]:
    """The values of a list, a list inside it read as its items (`- [b, c]` holds b and c) and a
    mapping as none: str() of either made one tag of Python's text, `['b', 'c']`."""
    for item in items:
        if isinstance(item, (list, tuple, set)):
            yield from _scalars(item)
        elif item is not None and not isinstance(item, dict):
            yield item


def _holds_mapping(value: object) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, (list, tuple, set)) and any(map(_holds_mapping, value))


def _mapping_problem(meta: dict) -> str | None:
    keys = [key for key in ("tags", "aliases", "alias") if _holds_mapping(meta.get(key))]
    if not keys:
        return None
    named = " and ".join(keys)
    return (f"{named} {'holds' if len(keys) == 1 else 'hold'} a key: value pair, which no tag or "
            f"alias can be, so it is left out; write {named} as a list of words")


# Fields read as one value, and what a card does without it when the value is a list or a
# mapping (`title: {a: b}`, or a template's `title: {{date}}` unquoted): left out, as _as_text
# does, and said. A summary may also be a list of lines (_summary).
_ONE_VALUE = {
    "title": "the card is titled by its file name", "kind": "the card's kind comes from its folder",
    "summary": "the card has no summary", "project": "the card names no project",
    "priority": "the card has no priority", "ttl": "the card has no ttl",
    "superseded_by": "no newer card is linked", "supersedes": "no older card is linked",
}
_AS_TEXT = "one line of text, in quotes if it holds a colon, braces or brackets"


def _one_value_problems(meta: dict) -> list[str]:
    """A field of _ONE_VALUE written as a list or a mapping is read as none, which the card
    would otherwise do without a word."""
    out = []
    for key, without in _ONE_VALUE.items():
        value = meta.get(key)
        if not isinstance(value, (list, dict)) or not _set(value) or (key == "summary" and isinstance(value, list)):
            continue
        advice = "one word or number, such as high or P1" if key == "priority" else _AS_TEXT
        out.append(f"{key} {_written(value)!r} is not one value, so {without}; write {advice}")
    return out


def _as_text(value: object) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def _summary(value: object) -> str | None:
    """The summary on one line: a YAML block (`summary: |`) keeps its newlines, which a result
    line cannot show, and a summary written as a list of lines (an Obsidian List property) is
    those lines, one after the other: the card has a summary, which consolidate keeps."""
    if isinstance(value, list):
        value = " ".join(str(item) for item in _scalars(value))
    text = _as_text(value)
    return " ".join(text.split()) if text else None


def kind_from_folder(rel_path: str) -> str | None:
    top = rel_path.split("/", 1)[0]
    return FOLDER_KINDS.get(top) if "/" in rel_path else None


def _written(value: object) -> str:
    """A frontmatter value that is not a date, as it reads in the file, for a problem to quote:
    `[2024-03-01, 2024-04-01]`, `true`, never Python's `[datetime.date(2024, 3, 1), ...]`."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):  # a datetime too
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(map(_written, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_written(k)}: {_written(v)}" for k, v in value.items()) + "}"
    return str(value)


def _set(value: object) -> bool:
    """Whether a date key holds anything. Null, `false`, a blank text, `[]`, `{}` and a list of
    such are nothing (an emptied property): an empty invalid_at retires no card."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list):
        return any(map(_set, value))
    if isinstance(value, dict):
        return bool(value)
    return value is not None and value is not False


def _invalid_at(value: object) -> str | None:
    """The invalid_at mark as text: ISO when it is a date, else what was written (a list or a
    map becomes its YAML-ish text). Any mark that is set counts (`false` is not set)."""
    if not _set(value):
        return None
    return dates.normalize(value) or _written(value) or str(value)


def parse(data: bytes, rel_path: str, outline_too: bool = True) -> Card:
    """The card a file holds. Without `outline_too`, its headings, #tags and links (what only
    the index keeps of the body) are left empty: a card read to be edited and checked."""
    text, problem = decode(data)
    meta, body, meta_problem = split_frontmatter(text)
    invalid_at = _invalid_at(meta.get("invalid_at"))
    created = meta.get("created", meta.get("date"))
    date_problems = [
        f"invalid_at {invalid_at!r} is not a date, so the card counts as no longer valid; "
        "write it as YYYY-MM-DD" if invalid_at and not dates.starts_with_day(invalid_at) else None,
        f"created {_written(created)!r} is not a date, so the card counts as always "
        "existing; write it as YYYY-MM-DD" if _set(created) and not dates.normalize(created) else None,
    ]
    problem = "; ".join(p for p in (problem, meta_problem, *date_problems, _mapping_problem(meta),
                                    *_one_value_problems(meta)) if p) or None
    # Obsidian names a note by its file; a `# heading` is a heading, never the title.
    title = _as_text(meta.get("title")) or stem(rel_path)
    prose = outline.prose_lines(body) if outline_too else []
    return Card(
        path=rel_path,
        title=title,
        body=body,
        kind=_as_text(meta.get("kind")) or kind_from_folder(rel_path),
        tags=_as_list(meta.get("tags")),
        aliases=_as_list(meta.get("aliases", meta.get("alias")), separators=r"\n"),
        created=dates.normalize(created),
        updated=dates.normalize(meta.get("updated")),
        invalid_at=invalid_at,
        superseded_by=_as_text(meta.get("superseded_by")),
        supersedes=_as_text(meta.get("supersedes")),
        priority=_as_text(meta.get("priority")),
        ttl=_as_text(meta.get("ttl")),
        summary=_summary(meta.get("summary")),
        project=_as_text(meta.get("project")),
        problem=problem,
        headings=outline.headings(prose),
        body_tags=outline.inline_tags(prose),
        links=outline.links(prose),
    )


def from_stored(row: dict) -> Card:
    """A card as the index stored it (its body-derived parts read again from the body): what a
    schema migration re-derives the fields from without reading the file."""
    prose = outline.prose_lines(row["body"])
    return Card(
        path=row["path"], title=row["title"], body=row["body"], kind=row["kind"],
        tags=tuple(json.loads(row["tags"])), aliases=tuple(json.loads(row["aliases"])),
        headings=outline.headings(prose), body_tags=outline.inline_tags(prose),
        links=outline.links(prose),
    )


# The title rule before schema 4: the first `# ` line anywhere in the body.
_OLD_TITLE_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)


def title_may_be_heading(card: Card) -> bool:
    """Whether a stored title may have come from the old heading rule rather than from the
    frontmatter: only the file can tell, so such a note is read again."""
    match = _OLD_TITLE_HEADING.search(card.body)
    return match is not None and match.group(1).strip() == card.title and card.title != stem(card.path)
