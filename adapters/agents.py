"""Instruction files agents keep beside a project: `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` (also
at the top of a project's `.claude` folder, where Claude Code reads them too), Claude Code's
rules (`.claude/rules/**/*.md` in a project, `~/.claude/rules/**/*.md` for every project), and
its per-project memory folders (`projects/<name>/memory/*.md` under `~/.claude`).

Claude Code's plugins (`~/.claude/plugins`: other people's repositories, with their own
`CLAUDE.md`) are not the user's memory, and are left out. So are the git worktrees Claude Code
makes of a project (`<project>/.claude/worktrees/<name>/`): each is a second copy of the
project's `CLAUDE.md` and `AGENTS.md`, which a search would show twice.

Each file is one card, except the "Gemini Added Memories" section of a `GEMINI.md`, where every
bullet Gemini CLI saved is a card of its own (`GEMINI.md#<anchor>`).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import PurePosixPath

from memsync import notes
from memsync.model.indexing import Card

from .base import FileAdapter, anchor, first_line_title, hidden

# AGENTS.override.md: Codex reads it before AGENTS.md, in ~/.codex and in each project folder.
INSTRUCTION_FILES = {"AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md"}
# Folders of a `.claude` folder that hold copies Claude Code made, not the user's memory:
# plugins (other people's repositories) and worktrees (git worktrees of the project itself).
_CLAUDE_COPIES = ("plugins", "worktrees")
_GEMINI_SECTION = re.compile(r"^##\s+Gemini Added Memories\s*$", re.M)
_NEXT_HEADING = re.compile(r"^#{1,2}\s", re.M)
_BULLET = re.compile(r"^\s*[-*]\s+(.+)$", re.M)


def _in_claude_memory(parts: tuple[str, ...]) -> bool:
    # projects/<project>/memory/<file>.md, with or without a leading .claude/
    return len(parts) >= 4 and parts[-2] == "memory" and parts[-4] == "projects"


def _claude_memory(card: Card, data: bytes) -> Card:
    """Claude Code names each memory in its frontmatter (`name`, `description`, `type`): the
    name is the card's title and the description its summary (searched, and shown in a hit),
    unless the file has a `title` or a `summary` of its own."""
    meta, _body, _problem = notes.split_frontmatter(notes.decode(data)[0])
    name, description = (_one_line(meta.get(key)) for key in ("name", "description"))
    return replace(card, title=card.title if "title" in meta or not name else name,
                   summary=card.summary or description)


def _one_line(value: object) -> str | None:
    text = " ".join(str(value).split()) if isinstance(value, (str, int, float)) else ""
    return text or None


def _visible(rel: str) -> bool:
    """Not inside a dot-folder, ~/.claude itself excepted."""
    return not hidden(rel[len(".claude/"):] if rel.startswith(".claude/") else rel)


class AgentFilesAdapter(FileAdapter):
    name = "agents"
    suffixes = (".md",)
    # 2: Claude Code's plugins folder left out; 3: <project>/.claude/CLAUDE.md, AGENTS.override.md;
    # 4: Claude Code's worktrees (.claude/worktrees) left out; 5: links to files read through;
    # 6: Claude Code's rules (.claude/rules/**/*.md)
    rules_version = 6
    follows_links = True

    def __init__(self, root: str | None = None) -> None:
        # Where Claude Code's copies of other files are, relative to the source: inside the
        # `.claude` folder at the root, or at the top when the source is a `.claude` folder.
        at_top = root is not None and os.path.basename(os.path.normpath(root)) == ".claude"
        self._at_top = at_top
        self._root_name = os.path.basename(os.path.normpath(root)) if root else ""
        self._left_out = tuple(f"{above}{folder}" for folder in _CLAUDE_COPIES
                               for above in (".claude/", *(("",) if at_top else ())))

    def _in_copies(self, rel: str) -> bool:
        return any(rel == folder or rel.startswith(folder + "/") for folder in self._left_out)

    def enters(self, rel_dir: str) -> bool:
        # ~/.claude is itself a dot-folder: enter it when a source root sits above it.
        return rel_dir == ".claude" or self._project_claude(rel_dir) or self._in_rules(rel_dir) is not None or (
            _visible(rel_dir) and not self._in_copies(rel_dir)
            and super().enters(rel_dir.removeprefix(".claude/")))

    def _project_claude(self, rel_dir: str) -> bool:
        """A project's `.claude` folder below the source's root (`shop/.claude`, the source being
        ~/src): Claude Code reads the project's CLAUDE.md there as well as beside it. Only the
        instruction files at its top are read; its other folders are Claude Code's own."""
        parent, _, last = rel_dir.rpartition("/")
        return last == ".claude" and bool(parent) and self.enters(parent)

    def _in_rules(self, rel: str) -> str | None:
        """The part of `rel` below a rules folder Claude Code reads (`.claude/rules` of a project
        the source holds, or `rules` at the top of ~/.claude itself), "" for the folder; None
        when `rel` is not in one. Rules may sit in folders of their own (`rules/api/design.md`)."""
        if self._at_top and (rel == "rules" or rel.startswith("rules/")):
            rest = rel[len("rules/"):]
        else:
            above, marker, rest = ("/" + rel + "/").partition("/.claude/rules/")
            above = above.removeprefix("/")
            if not marker or self._in_copies(rel) or (above and not self.enters(above)):
                return None
            rest = rest.removesuffix("/")
        return None if hidden(rest) else rest

    def wants(self, rel_path: str) -> bool:
        parts = PurePosixPath(rel_path).parts
        if self._in_copies(rel_path):
            return False
        if rel_path.endswith(".md") and self._in_rules(rel_path):
            return True
        if not _visible(rel_path):
            folder, _, name = rel_path.rpartition("/")
            return name in INSTRUCTION_FILES and self._project_claude(folder)
        return parts[-1] in INSTRUCTION_FILES or (rel_path.endswith(".md") and _in_claude_memory(parts))

    def read(self, data: bytes, rel_path: str) -> list[Card]:
        card = notes.parse(data, rel_path)
        card = replace(card, kind=card.kind or "system")
        if _in_claude_memory(PurePosixPath(rel_path).parts):
            return [_claude_memory(card, data)]
        if PurePosixPath(rel_path).name in INSTRUCTION_FILES and card.title == PurePosixPath(rel_path).stem:
            card = replace(card, title=self._instructions_title(rel_path))
        if PurePosixPath(rel_path).name != "GEMINI.md":
            return [card]
        return self._split_gemini(card, rel_path)

    def _instructions_title(self, rel_path: str) -> str:
        """Every project has its CLAUDE.md: titled by the file and the folder it instructs
        (`CLAUDE.md (shop)`, for shop/.claude/CLAUDE.md too), so that a brief or a hit list
        names whose it is. At the source's top that folder is the source's own."""
        folder, _, name = rel_path.rpartition("/")
        folder = folder.removesuffix(".claude").rstrip("/") or self._root_name
        return f"{name} ({folder})" if folder else name

    def _split_gemini(self, card: Card, rel_path: str) -> list[Card]:
        section = _GEMINI_SECTION.search(card.body)
        if not section:
            return [card]
        rest = card.body[section.end():]
        end = _NEXT_HEADING.search(rest)
        memories = rest[: end.start()] if end else rest
        outside = card.body[: section.start()] + (rest[end.start():] if end else "")
        cards = [replace(card, body=outside)] if outside.strip() else []
        seen = set()
        for match in _BULLET.finditer(memories):
            text = match.group(1).strip()
            key = anchor(text)
            if key in seen:
                continue
            seen.add(key)
            cards.append(Card(path=f"{rel_path}#{key}", title=first_line_title(text), body=text,
                              kind="memory", problem=card.problem))
        return cards
