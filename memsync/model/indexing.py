"""The records of indexing: a card as parsed from its file, what a stat says about the file, and
what a sync did. Small, no behaviour beyond a report's sums. Pure."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Card:
    """One card as parsed from its file: everything the index stores about it."""

    path: str  # relative to the source root, '/'-separated; `file#anchor` for multi-card files
    title: str
    body: str  # its UTF-8 bytes in a look that crossed from a reader process (memsync.reading)
    kind: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    created: str | None = None  # ISO 8601 as written (normalised), or None
    updated: str | None = None
    invalid_at: str | None = None
    superseded_by: str | None = None
    supersedes: str | None = None
    priority: str | None = None
    ttl: str | None = None
    # One line saying what the card holds: what search results show instead of a body window,
    # so a reader (often a model paying per token) decides from it whether to open the card.
    summary: str | None = None
    project: str | None = None  # frontmatter `project`: the work this card belongs to (memsync brief)
    problem: str | None = None  # why the metadata could not be read, if it could not
    # Derived from the body (memsync.outline), never written back: (level, text) of each
    # heading, `#tags` written in the text, and (target, anchor text) of each link to a note.
    headings: tuple[tuple[int, str], ...] = ()
    body_tags: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Signature:
    """What a stat tells us about a file: enough to skip hashing when nothing changed."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int


@dataclass
class SyncReport:
    scanned: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    hashed: int = 0
    moved: int = 0
    problems: list[dict] = field(default_factory=list)
    retry: list[str] = field(default_factory=list)  # paths still being written: look again
    # (source, path as shown) of the files and folders we may not read: their cards are out
    # (consolidate says so beside its plan, which cannot touch them)
    denied: list[tuple[str, str]] = field(default_factory=list)
    # files gone between the caller's look and their read, whose cards were spared for now
    # (Indexer.sync_paths' `spare`)
    vanished: list[str] = field(default_factory=list)
    seconds: float = 0.0
    readers: int = 1  # processes that read and parsed the files (1: this one alone)

    def merge(self, other: SyncReport) -> None:
        for name in ("scanned", "added", "updated", "removed", "unchanged", "hashed", "moved"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.problems.extend(other.problems)
        self.retry.extend(other.retry)
        self.denied.extend(other.denied)
        self.vanished.extend(other.vanished)
        self.readers = max(self.readers, other.readers)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed + self.moved

    def to_dict(self) -> dict:
        return {
            "scanned": self.scanned,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "hashed": self.hashed,
            "moved": self.moved,
            "problems": self.problems,
            "seconds": round(self.seconds, 3),
            "readers": self.readers,
        }


KEPT_PROBLEMS = 20  # the problems running totals name: the latest, as many as a batch's log shows


@dataclass
class RunningTotals(SyncReport):
    """What many reports add up to over a long life (a watcher's, meant to run for weeks): their
    counts summed, and of their lists only the latest KEPT_PROBLEMS problems and how many there
    were. The paths to retry, denied and vanished are what each report's own caller acts on, so
    none is kept: as lists they grew with every batch (a file written for a week without pause
    is retried twice a second)."""

    problems_total: int = 0

    def merge(self, other: SyncReport) -> None:
        retried = set(other.retry)  # still being written: not a problem yet
        problems = [p for p in other.problems if p["path"] not in retried]
        self.problems_total += len(problems)
        super().merge(dataclasses.replace(other, problems=problems[-KEPT_PROBLEMS:], retry=[],
                                          denied=[], vanished=[]))
        del self.problems[:-KEPT_PROBLEMS]

    def to_dict(self) -> dict:
        return {**super().to_dict(), "problems_total": self.problems_total}
