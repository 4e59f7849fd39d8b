"""The parts of a Markdown body Obsidian gives meaning to: headings, inline #tags, links.

Pure: a body (frontmatter already removed) in, tuples out. Code is never structure: a `# x`
line inside a ``` or ~~~ fence, or a `#tag` / `[[link]]` inside `inline code`, is text only,
as Obsidian shows it.
"""

from __future__ import annotations

import re
import urllib.parse

# A fence opens with 3+ backticks or tildes (up to 3 spaces of indent) and closes with at least
# as many of the same character (CommonMark, which Obsidian follows).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_INLINE_CODE = re.compile(r"(`+)(?:.+?)\1")
# A tag starts after whitespace or at the line start; letters, digits, _ - / (Obsidian's set),
# not digits only (`#1` is an issue number, not a tag).
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]+)")
_NOT_A_TAG = re.compile(r"[\d/-]*")
# A wikilink `[[target#heading|label]]`, or a Markdown link `[label](Note.md)`: its destination
# in <angle brackets> or bare (one level of balanced parentheses, as CommonMark allows), then
# an optional "title". Embeds (`!`) of either kind count too.
_LINK = re.compile(
    r"!?\[\[(?P<wiki>[^\[\]\n]+?)\]\]"
    r"|!?\[(?P<label>[^\[\]\n]*)\]\((?:<(?P<angle>[^<>\n]+)>|(?P<bare>(?:[^()\s]|\([^()\s]*\))+))"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|//")  # https:, mailto:, obsidian:, //host


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
            if match and text:
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


def links(lines: list[str]) -> tuple[tuple[str, str], ...]:
    """(target, anchor text) of every link to a note, in order: `[[target#heading|label]]`,
    `![[embed]]`, and Markdown links to a note of the vault (`[label](Note.md)`,
    `[label](Folder/Note%20Name.md#Heading)`, `[label](<Note Name.md>)`).

    The anchor text is the label when there is one, else the target's name and heading as
    Obsidian displays them. A link to a heading of the same note (`[[#x]]`, `[x](#x)`) has no
    target; a URL (`https:`, `mailto:`, `obsidian:`) or a file that is not a note (`a.png`) is
    not a link to a note."""
    found = []
    for line in lines:
        if "[" not in line:
            continue
        for match in _LINK.finditer(_without_code(line)):
            if match["wiki"] is not None:
                target, _, label = match["wiki"].replace("\\|", "|").partition("|")
            else:
                target, label = _note_path(match["angle"] or match["bare"]), match["label"]
                if target is None:
                    continue
            target, _, heading = target.partition("#")
            target = target.strip()
            if not target:
                continue
            name = target.rsplit("/", 1)[-1]
            if match["wiki"] is None and name.lower().endswith(".md"):
                name = name[:-3]  # a Markdown link names the file, Obsidian shows the note
            text = label.strip() or " ".join(p for p in (name, heading.strip().lstrip("^")) if p)
            found.append((target, text))
    return tuple(found)


def _note_path(destination: str) -> str | None:
    """A Markdown link's destination as a note path (`Folder/Note Name.md#Heading`), or None
    for a URL or a file that is not a note. `./` and `../` steps are dropped: the rest is
    resolved by the end of its path, as a `[[folder/note]]` is."""
    if _SCHEME.match(destination):
        return None
    path, hash_, heading = urllib.parse.unquote(destination).partition("#")
    steps = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    if steps and "." in steps[-1] and not steps[-1].lower().endswith(".md"):
        return None  # an attachment: an image, a PDF, a canvas
    return "/".join(steps) + hash_ + heading


def expand_tag(tag: str) -> list[str]:
    """A nested tag and every tag above it: `a/b/c` -> a, a/b, a/b/c (Obsidian's tag pane)."""
    parts = [p for p in tag.split("/") if p]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
