"""What a brief shows, in which order, within its token budget: rows in, sections out (no disk, no index).

Three sections, each a list of items `id title — line`:
- `project`: the cards that belong to the project, by priority, feedback, reads, then newest;
- `changed`: cards new, updated or superseded since this agent's last brief here, newest first
  (a card without an `updated` date, as most of other agents' files are: by its file's time);
- `used`: the other cards with a priority, reads or net helpful verdicts, by priority, feedback, then reads.
Cards flagged by the secrets scanner are never shown, only counted (`held_back`). The budget is
spent on `changed` first (short and easy to miss), then `project`, then `used`; an item fits
whole or is left out, never cut. Ties always fall back to the card id: the same index and the
same last-brief time give the same brief.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from memsync import chars, dates, secrets
from memsync.brief.tokens import estimate

SECTION_ORDER = ("project", "changed", "used")  # as rendered
FILL_ORDER = ("changed", "project", "used")  # as the budget is spent
CANDIDATES = {"project": 40, "changed": 15, "used": 20}  # looked at (and secret-scanned) at most
LINE_TOKENS = 32  # an item's line is shortened to about this many tokens (with …)
TITLE_TOKENS = 24

# Priority as people write it: a word, P0-P3, or a number where larger means more important.
_WORDS = {"critical": 4, "urgent": 4, "highest": 4, "high": 3, "important": 3, "medium": 2,
          "normal": 2, "moderate": 2}
_P_LEVEL = re.compile(r"^p([0-9])$")


def priority_rank(value: str | None) -> int:
    """0 for none, low or a value it does not know; 2 medium, 3 high, 4 critical (P0 = 4, P1 = 3,
    P2 = 2; 5 = 4, 4 = 3, 3 = 2 on a 1-5 scale)."""
    if not value:
        return 0
    text = value.strip().casefold()
    if text in _WORDS:
        return _WORDS[text]
    level = _P_LEVEL.match(text)
    if level:  # P3 is low, which counts as none
        return 4 - int(level.group(1)) if int(level.group(1)) < 3 else 0
    try:
        number = float(text)
    except ValueError:
        return 0
    return max(0, min(4, int(number) - 1)) if number >= 3 else 0


@dataclass(frozen=True)
class Item:
    id: int | None  # None: the item is a file of several cards (file_item), not a card
    title: str
    line: str  # the card's summary, or the first line of its text
    note: str = ""  # why it is here, where that is not plain (new, updated, superseded by ...)
    source: str = ""
    path: str = ""
    kind: str | None = None
    cards: tuple[int, ...] = ()  # of a file's item: the ids of the cards it names

    def text(self) -> str:
        name = self.title if self.id is None else f"{self.id} {self.title}"
        head = f"- {name}" + (f" ({self.note})" if self.note else "")
        return f"{head} — {self.line}" if self.line else head

    def to_dict(self) -> dict:
        out = {"id": self.id, "title": self.title, "line": self.line, "note": self.note or None,
               "source": self.source, "path": self.path, "kind": self.kind}
        return {**out, "file": True, "cards": list(self.cards)} if self.id is None else out


@dataclass
class Section:
    key: str
    total: int  # cards this section found (shown or not), secrets held back excluded
    capped: bool = False  # more qualified than the query returned: total is a lower bound
    items: list[Item] = field(default_factory=list)

    def shown(self) -> int:
        """What the items tell, in the unit of `total`: the project section counts cards, so a
        file's item there counts the cards it names; elsewhere a file's item is one change."""
        if self.key != "project":
            return len(self.items)
        return sum(1 if item.id is not None else len(item.cards) for item in self.items)


@dataclass
class Selection:
    sections: dict[str, Section]
    held_back: int


# A line that only imports other files into a CLAUDE.md (`@AGENTS.md`, `@~/.claude/extra.md`):
# Claude Code puts their text there, but the line says nothing itself. A path has a dot or a
# slash, so a line that mentions someone (`@ana`) is still prose.
_IMPORTS_ONLY = re.compile(r"(?:@[^\s@]*[./][^\s@]*\s*)+")


def first_line(body: str, title: str) -> str:
    """The first line of prose: past blank lines, headings, code fences, HTML comments, imports
    and a line that only repeats the title; list and quote markers dropped."""
    fenced = False
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line or line.startswith(("#", "<!--", "---", "|")):
            continue
        line = re.sub(r"^(?:[-*+]\s+(?:\[[ xX]\]\s+)?|>\s*|\d+[.)]\s+)", "", line).strip()
        if line and line.casefold() != title.strip().casefold() and not _IMPORTS_ONLY.fullmatch(line):
            return " ".join(line.split())
    return ""


def shorten(text: str, tokens: int) -> str:
    """`text` cut at a word (or, for CJK, a character) so that it costs about `tokens`, with …"""
    if estimate(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits, with room for the ellipsis
        mid = (low + high + 1) // 2
        if estimate(text[:mid]) + 1 <= tokens:
            low = mid
        else:
            high = mid - 1
    cut = text[:chars.word_end(text, low, int(low * 0.6))]
    return cut.rstrip(" ,;:.-—，、；：") + "…"


def _stamp(iso: str | None) -> float:
    """Seconds since the epoch of an ISO date or time; 0 for none."""
    return dates.seconds(iso) if iso else 0.0


def ranked(rows: Sequence[Mapping], helpful: Mapping[int, tuple[int, int]], newest: bool) -> list[Mapping]:
    """By priority, then feedback (helpful minus unhelpful), then reads, then (with `newest`) the
    latest created/updated first, then id. Sorted from the last key to the first (each sort keeps
    the order of ties); the times compare as moments, whatever zone each was written in."""
    out = sorted(rows, key=lambda r: r["id"])
    if newest:
        out.sort(key=lambda r: max(_stamp(r["created"]), _stamp(r["updated"])), reverse=True)

    def key(row: Mapping) -> tuple[int, int, int]:
        good, bad = helpful.get(row["id"], (0, 0))
        return (-priority_rank(row["priority"]), bad - good, -row["reads"])

    out.sort(key=key)
    return out


def _dated(row: Mapping, key: str) -> float:
    """A card's date (created, updated, invalid_at) as seconds, no later than when its file's
    content last changed, when the row says (memsync.store.brief.changed_cards): a date still
    ahead of that, from a clock set wrong or a year mistyped, would be told in every brief until
    it came, ahead of the real changes."""
    stamp = _stamp(row[key])
    # keys(): `in` a sqlite3.Row looks among its values
    content = row["content_changed_ns"] if "content_changed_ns" in row.keys() else None  # noqa: SIM118
    return min(stamp, content / 1e9) if content and stamp else stamp


def _file_changed(row: Mapping) -> float | None:
    """When the file of a card without an `updated` date was modified (memsync.store.brief)."""
    # keys(): `in` a sqlite3.Row looks among its values
    ns = row["file_changed_ns"] if "file_changed_ns" in row.keys() else None  # noqa: SIM118
    return ns / 1e9 if ns else None


def last_change(row: Mapping) -> float:
    """The latest of a card's created, updated and superseded times and its file's time."""
    return max(_dated(row, "created"), _dated(row, "updated"),
               _dated(row, "invalid_at") if row["superseded_by"] else 0.0, _file_changed(row) or 0.0)


def is_file(row: Mapping) -> bool:
    """Whether a row tells a file of several cards (memsync.store.brief.changed_files_of_many),
    not a card."""
    return "file_cards" in row.keys()  # noqa: SIM118 (a sqlite3.Row's `in` looks among its values)


def _key(row: Mapping) -> object:
    """What a row is shown once by: its card's id, or its file."""
    return ("file", row["source"], row["path"]) if is_file(row) else row["id"]


def _named(row: Mapping) -> set[int]:
    """The ids of the cards a file's row would name (none for a card's row)."""
    return {card_id for card_id, _ in row["named"]} if is_file(row) else set()


def change_note(row: Mapping, since: float, other: Callable[[str, str], tuple[int, str] | None]) -> str | None:
    """Why this card counts as changed since `since` (a timestamp in whole seconds), or None if it
    does not. Cards carry whole seconds too, so a change in the very second of the last brief
    counts: a card said twice beats a change missed."""
    if row["superseded_by"]:
        if max(_dated(row, "invalid_at"), _dated(row, "updated")) < since:
            return None
        newer = other(row["source"], row["superseded_by"])
        if not newer:
            return f"superseded by {row['superseded_by']}"
        # the newer card's title is shown here without its card: it must pass the scanner too
        return f"superseded by {newer[0]}" + ("" if secrets.scan_text(newer[1], "title") else f" {newer[1]}")
    if row["invalid_at"]:
        return None  # invalid for another reason: nothing an agent should start from
    if _dated(row, "created") >= since:
        if row["supersedes"]:
            older = other(row["source"], row["supersedes"])
            return f"new, supersedes {older[0]}" if older else "new, supersedes an older card"
        return "new"
    if _dated(row, "updated") >= since:
        return "updated"
    if (_file_changed(row) or 0.0) >= since:
        return "changed"  # new or edited: the file's time does not say which
    return None


def select(
    project_rows: Sequence[Mapping], changed_rows: Sequence[Mapping], used_rows: Sequence[Mapping],
    texts: Mapping[int, tuple[str, str | None]], helpful: Mapping[int, tuple[int, int]],
    since: float | None, other: Callable[[str, str], tuple[int, str] | None], budget: int,
    since_text: str | None = None, capped: frozenset[str] = frozenset(),
) -> Selection:
    """Order, screen and fit the cards; `budget` is what the items (and their headings) may
    cost, the brief's fixed lines already paid."""
    flagged: set[int] = set()

    def shown(row: Mapping) -> bool:
        if is_file(row):
            return True  # no card of it is shown: the titles it names are screened (file_item)
        body, summary = texts.get(row["id"], ("", None))
        if secrets.scan(row["title"], body) or (summary and secrets.scan_text(summary, "summary")):
            flagged.add(row["id"])
            return False
        return True

    candidates: dict[str, list[tuple[Mapping, str]]] = {}
    in_project = {r["id"] for r in project_rows}
    project = ranked(project_rows, helpful, newest=True)
    candidates["project"] = [(r, "") for r in project[:CANDIDATES["project"]]]
    changed: list[tuple[Mapping, str]] = []
    if since is not None:
        for row in changed_rows:
            note = change_note(row, since, other)
            if note:
                changed.append((row, note))
    candidates["changed"] = changed[:CANDIDATES["changed"]]
    used = ranked([r for r in used_rows if r["id"] not in in_project], helpful, newest=False)
    candidates["used"] = [(r, "") for r in used[:CANDIDATES["used"]]]
    in_used = {r["id"] for r in used}

    # A project card that changed is shown once, in the project section, with what changed; so is
    # a changed file whose cards (those it names) are all the project's, a project's GEMINI.md.
    def belongs(row: Mapping) -> bool:
        return _named(row) <= in_project if is_file(row) else row["id"] in in_project

    changed_elsewhere = sum(1 for row, _ in changed if not belongs(row))
    totals = {"project": len(project), "changed": changed_elsewhere, "used": len(used)}
    sections = {key: Section(key, totals[key], key in capped) for key in SECTION_ORDER}
    # each heading at its longest ("(N-1 of N)"): what it says is known only at the end
    headings = {key: estimate(heading_text(key, max(totals[key] - 1, 0), totals[key], since_text, True)) + 2
                for key in SECTION_ORDER}  # + the newline and the blank line before it
    left = budget
    placed: set[object] = set()
    for key in FILL_ORDER:
        for row, note in candidates[key]:
            target = "project" if key == "changed" and belongs(row) else key
            if _key(row) in placed:
                continue  # shown already, with what changed
            item = file_item(row, note) if is_file(row) else make_item(row, note, texts)
            cost = estimate(item.text()) + 1 + (0 if sections[target].items else headings[target])
            if cost > left:
                continue  # too long for what is left; a shorter one further down may fit
            if not shown(row):  # scanned only when it would be shown: the scan is the cost
                sections[target].total -= 1
                continue
            left -= cost
            placed.add(_key(row))
            sections[target].items.append(item)
            if is_file(row):
                named = _named(row)
                placed.update(named)  # told by the file's item: not an item of their own again
                flagged.update(named - set(item.cards))  # not named, for a title the scanner flags
                # the sections that count cards leave out those told (or held back) by this item
                for other_key, members in (("project", in_project), ("used", in_used)):
                    gone = named & members
                    sections[other_key].total -= len(gone - set(item.cards) if other_key == target else gone)
    return Selection(sections, len(flagged))


def make_item(row: Mapping, note: str, texts: Mapping[int, tuple[str, str | None]]) -> Item:
    body, summary = texts.get(row["id"], ("", None))
    title = shorten(" ".join(row["title"].split()), TITLE_TOKENS)
    line = shorten(" ".join(summary.split()) if summary else first_line(body, row["title"]), LINE_TOKENS)
    if row["superseded_by"]:
        line = ""  # what it said is no longer so: the note names its successor
    return Item(row["id"], title, line, note, row["source"], row["path"], row["kind"])


def file_item(row: Mapping, note: str) -> Item:
    """A file of several cards that changed: its time does not say which card did, so the item
    says how many it holds and names the first few (a title the secrets scanner flags is not
    named; select counts it held back), for memory_get."""
    named = [(card_id, title) for card_id, title in row["named"] if not secrets.scan_text(title, "title")]
    count = row["file_cards"]
    which = "its one card" if count == 1 else f"one or more of its {count} cards"
    line = "; ".join(f"{card_id} {shorten(' '.join(title.split()), TITLE_TOKENS)}" for card_id, title in named)
    line += "; …" if named and count > len(named) else ""
    # `cards` are the ids named, as the text: a flagged card is held back, not pointed to
    return Item(None, row["title"], line, f"{note}: {which}", row["source"], row["path"], None,
                tuple(card_id for card_id, _ in named))


def heading_text(key: str, shown: int, total: int, since_text: str | None, capped: bool = False) -> str:
    """A section's heading; `capped`: more cards than `total` qualified (the query stopped)."""
    more = f" ({shown} of {total}{'+' if capped else ''})" if shown < total or capped else ""
    if key == "project":
        return f"## This project{more}"
    if key == "changed":
        return f"## Changed since your last brief{f', {since_text}' if since_text else ''}{more}"
    return f"## Most used{more}"
