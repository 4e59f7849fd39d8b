"""The parts of a Markdown body Obsidian gives meaning to: headings, inline #tags, wikilinks.

Pure: a body (frontmatter already removed) in, tuples out. Code is never structure: a `# x`
line inside a ``` or ~~~ fence, or a `#tag` / `[[link]]` inside `inline code`, is text only,
as Obsidian shows it.
"""

from __future__ import annotations

import re

# A fence opens with 3+ backticks or tildes (up to 3 spaces of indent) and closes with at least
# as many of the same character (CommonMark, which Obsidian follows).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_INLINE_CODE = re.compile(r"(`+)(?:.+?)\1")
# A tag starts after whitespace or at the line start; letters, digits, _ - / (Obsidian's set),
# not digits only (`#1` is an issue number, not a tag).
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]+)")
_NOT_A_TAG = re.compile(r"[\d/-]*")
_WIKILINK = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")


def prose_lines(body: str) -> list[str]:
    """The body's lines outside fenced code blocks."""
    out, fence = [], None
    for line in body.splitlines():
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip().lstrip(fence[0]):
                fence = None
            continue
        if opened and not (opened.group(1)[0] == "`" and "`" in line.strip()[len(opened.group(1)):]):
            fence = opened.group(1)
            continue
        out.append(line)
    return out


def _without_code(line: str) -> str:
    return _INLINE_CODE.sub(" ", line) if "`" in line else line


def headings(lines: list[str]) -> tuple[tuple[int, str], ...]:
    r"""(level, text) of every ATX heading, in order; empty headings are skipped. Code in a
    heading is part of its text (`### \`daily\`` is the heading daily)."""
    found = []
    for line in lines:
        if line.lstrip(" ").startswith("#"):
            match = _HEADING.match(line)
            text = match.group(2).replace("`", "").strip() if match else ""
            if text:
                found.append((len(match.group(1)), text))
    return tuple(found)


def inline_tags(lines: list[str]) -> tuple[str, ...]:
    """`#tags` written in the text (not heading markers, not inside code), in order, once each."""
    tags = []
    for line in lines:
        if "#" in line:
            line = _without_code(line)
            tags += [t.strip("/") for t in _TAG.findall(line) if not _NOT_A_TAG.fullmatch(t)]
    return tuple(dict.fromkeys(tags))


def wikilinks(lines: list[str]) -> tuple[tuple[str, str], ...]:
    """(target, anchor text) of every `[[target#heading|label]]` and `![[embed]]`.

    The anchor text is the label when there is one, else the target's name and heading as
    Obsidian displays them; a link to a heading of the same note (`[[#x]]`) has no target."""
    links = []
    for line in lines:
        if "[[" not in line:
            continue
        for inner in _WIKILINK.findall(_without_code(line)):
            target, _, label = inner.replace("\\|", "|").partition("|")
            target, _, heading = target.partition("#")
            target = target.strip()
            if not target:
                continue
            text = label.strip() or " ".join(
                p for p in (target.rsplit("/", 1)[-1], heading.strip().lstrip("^")) if p)
            links.append((target, text))
    return tuple(links)


def expand_tag(tag: str) -> list[str]:
    """A nested tag and every tag above it: `a/b/c` -> a, a/b, a/b/c (Obsidian's tag pane)."""
    parts = [p for p in tag.split("/") if p]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
