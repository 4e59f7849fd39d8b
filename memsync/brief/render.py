"""The brief as Markdown, and as the JSON of `memsync brief --json`: values in, text out (no disk, no index).

The fixed lines (the title, how to read a card, the held-back count, how to search for more and
the closing line on saving what was learnt) are always there; select.py fits the items into what
the budget leaves after them.
"""

from __future__ import annotations

from memsync.brief.project import Project
from memsync.brief.select import SECTION_ORDER, Section, Selection, heading_text
from memsync.brief.tokens import estimate
from memsync.pathnames import printable

SEARCH_LINE = ("More: memory_search with a few keywords or identifiers (shell: `memsync search "
               "WORDS`); memory_get ID (shell: `memsync show ID`) reads a card whole.")
CAPTURE_LINE = ("Before this session ends, save what you learnt that will matter again (a decision "
                "and why, a convention, a fix, where something lives) with memory_capture: a "
                "title, a kind, a one-line summary and the body; fix a wrong card with "
                "memory_update instead.")


def shown(text: str | None) -> str | None:
    """A folder's name as any output can carry it (a Linux file name need not be UTF-8)."""
    return printable(text) if text else text


def header(project: Project) -> list[str]:
    where = f" ({shown(project.root)})" if project.root else ""
    return [f"# Memory brief: {shown(project.name or project.root)}{where}",
            "Cards from memsync, the user's local memory; each line is `id title — first line`."]


def footer(held_back: int) -> list[str]:
    lines = []
    if held_back:
        lines.append(f"Held back: {held_back} card{'s' if held_back != 1 else ''} that may hold "
                     "credentials (not shown).")
    return [*lines, SEARCH_LINE, CAPTURE_LINE]


def fixed_cost(project: Project, most_held_back: int) -> int:
    """Tokens of the fixed lines at their longest (the held-back count not known yet)."""
    lines = [*header(project), "", *footer(most_held_back)]
    return sum(estimate(line) + 1 for line in lines)


def markdown(project: Project, selection: Selection, since_text: str | None) -> str:
    lines = header(project)
    for key in SECTION_ORDER:
        section = selection.sections[key]
        if not section.items:
            continue
        lines += ["", heading_text(key, section.shown(), section.total, since_text, section.capped)]
        lines += [item.text() for item in section.items]
    lines += ["", *footer(selection.held_back)]
    return "\n".join(lines) + "\n"


def as_dict(project: Project, selection: Selection, since_iso: str | None, budget: int, text: str) -> dict:
    return {
        "project": {"name": shown(project.name), "root": shown(project.root)},
        "since": since_iso,
        "budget": budget,
        "tokens": estimate(text),
        "held_back": selection.held_back,
        "sections": [_section_dict(selection.sections[key]) for key in SECTION_ORDER],
        "text": text,
    }


def _section_dict(section: Section) -> dict:
    # "shown" is the count the heading's "(N of M)" gives: a file's item in the project section
    # tells the cards it names
    return {"key": section.key, "total": section.total, "shown": section.shown(), "capped": section.capped,
            "items": [item.to_dict() for item in section.items]}
