"""Which project a working directory is, and which cards belong to it.

A project is the nearest folder at or above the directory that holds `.git` (else the directory
itself). Its cards are those whose frontmatter `project` names it (its folder name, a wikilink to
a note of that name, or its path, `~` for the home),
whose tags or folders carry its name, and the files that live inside it or inside the memory
folder Claude Code keeps for it (`~/.claude/projects/<its path, every other character as
'-'>/memory`), when those are indexed as sources.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memsync.model import Source
from memsync.pathnames import storable
from memsync.store.brief import Scope

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_WIKILINK = re.compile(r"\[\[([^\]|#]*)(?:[|#][^\]]*)?\]\]")


@dataclass(frozen=True)
class Project:
    root: str | None  # absolute folder; None for a project known by name only (an MCP argument)
    name: str  # its folder name as written


def find(directory: str | Path) -> Project:
    start = Path(os.path.abspath(os.path.expanduser(str(directory))))
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return Project(str(folder), folder.name)
    return Project(str(start), start.name)


def named(name: str) -> Project:
    return Project(None, name.strip())


def claude_folder_name(root: str) -> str:
    """The folder Claude Code keeps a project's sessions and memory in, under ~/.claude/projects."""
    return _NOT_ALNUM.sub("-", root)


def _generic(project: Project, user_home: Path) -> bool:
    """A name that says nothing of a project: the user's home or the file system's root."""
    return project.root is not None and Path(project.root) in (user_home, Path(user_home.anchor))


def scope(project: Project, sources: list[Source], user_home: Path) -> Scope:
    """What ties a card to the project. The home or the root names no project: every source
    lies inside it, and every card would be the project's. There only the memory Claude Code
    kept for sessions started in that very folder is the project's."""
    generic = _generic(project, user_home)
    name = None if generic or not project.name else project.name.casefold()
    values = []
    if name:
        values.append(name)
    places: list[Path] = []
    if project.root:
        if not generic:
            values.append(project.root.casefold())
            places.append(Path(project.root))
        places += claude_memory_folders(project.root, user_home)
    ranges: list[tuple[str, str]] = []
    for source in sources:
        root = Path(source.root)
        for place in places:
            if place == root or root in place.parents:
                ranges.append((source.name, "" if place == root else place.relative_to(root).as_posix() + "/"))
            elif place in root.parents:  # a source that lives inside the project: all of it
                ranges.append((source.name, ""))
    # A name that is not UTF-8 (bytes a file name may hold) is in no card: the index keeps text
    values = [v for v in values if storable(v)]
    ranges = [(source, below) for source, below in ranges if storable(below)]
    return Scope(name if name and storable(name) else None, tuple(dict.fromkeys(values)),
                 tuple(dict.fromkeys(ranges)), functools.partial(project_key, user_home=str(user_home)))


def project_key(value: str | None, user_home: str) -> str | None:
    """A frontmatter `project` as it is compared with the project's name and path: a wikilink
    as the name of the note it links (Obsidian writes `"[[blog]]"`, `"[[Projects/blog|Blog]]"`),
    `~` as the user's home, without a trailing slash, folded."""
    if value is None:
        return None
    text = value.strip()
    link = _WIKILINK.fullmatch(text)
    if link:
        text = link.group(1).strip().rsplit("/", 1)[-1].removesuffix(".md")
    elif text == "~" or text.startswith("~/"):
        text = user_home.rstrip("/") + text[1:]
    return (text.rstrip("/") or text).casefold()


def claude_memory_folders(root: str, user_home: Path) -> list[Path]:
    """The memory folder(s) Claude Code keeps for this project: the name it derives from the
    path, and any folder there whose name derives the same way (older versions kept more
    characters as they were)."""
    projects = user_home / ".claude" / "projects"
    mangled = claude_folder_name(root)
    names = {mangled}
    with contextlib.suppress(OSError):  # no ~/.claude/projects: the derived name alone
        names |= {entry for entry in os.listdir(projects) if _NOT_ALNUM.sub("-", entry) == mangled}
    return [projects / entry / "memory" for entry in sorted(names)]
