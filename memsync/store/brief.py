"""The reads behind `memsync brief`: which cards belong to a project, which are used most, which
changed since a time, and the text of the few that are shown. Read-only; every query is a scan
or an index lookup over the cards table, a few milliseconds at 10,000 cards.

Rows come back light (no body) until `texts`, which reads the bodies of the cards a brief may
show: the secrets scanner needs the whole text of each of those, and of no other card.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memsync.store.index import Index
from memsync.store.searchsql import VALID_ON, on_day, seconds

# What every light row holds: enough to order the cards and to say what changed.
_LIGHT = ("c.id, c.source, c.path, c.title, c.kind, c.priority, c.created, c.updated, "
          "c.invalid_at, c.superseded_by, c.supersedes, coalesce(s.read_count, 0) AS reads")
Connection = Any  # an open sqlite3 connection of memsync.store.index (only it imports sqlite3)
Row = Any  # a sqlite3.Row: by column name or position

# cards_brief (memsync.store.schema_lifecycle) holds every column these queries read, so SQLite scans
# it (SCAN c USING COVERING INDEX cards_brief) and never the cards' bodies.
_FROM = "FROM cards c LEFT JOIN card_stats s ON s.id = c.id"


@dataclass(frozen=True)
class Scope:
    """What ties a card to a project: its name (folded), the frontmatter `project` values that
    name it, and (source, path prefix) ranges of the files inside its folders ('' = the whole
    source). `project_key` turns a card's `project` into the form of those values (a wikilink
    into its name, `~` into the home: memsync.brief.project); without it, only case is folded."""

    name: str | None
    project_values: tuple[str, ...]
    ranges: tuple[tuple[str, str], ...]
    project_key: Callable[[str | None], str | None] | None = None


def connection(index: Index) -> Connection:
    """The index's connection, for the reads below (the store's own business)."""
    return index._conn


def feedback(conn: Connection, ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """id -> (helpful, unhelpful) verdicts (the lifecycle wing's card_stats counts); {} for an
    index without them."""
    if not _has_column(conn, "card_stats", "helpful_count"):
        return {}
    wanted = sorted(set(ids))
    out: dict[int, tuple[int, int]] = {}
    for chunk in _chunks(wanted, 500):
        for row in conn.execute(
            "SELECT id, helpful_count, unhelpful_count FROM card_stats WHERE id IN "
            f"({', '.join('?' * len(chunk))}) AND (helpful_count > 0 OR unhelpful_count > 0)", chunk,
        ):
            out[row[0]] = (row[1] or 0, row[2] or 0)
    return out


def project_cards(conn: Connection, scope: Scope, today: str) -> list[Row]:
    """Valid cards that belong to the project, by any of: frontmatter `project`, a tag equal to
    its name (or ending in `/name`), a folder of that name, a file inside one of its folders."""
    terms: list[str] = []
    args: list[object] = [*on_day(today)]
    # SQLite's lower() and LIKE fold ASCII letters only: a name with others (Über, Проект) is
    # compared through Python's casefold, one call a row, which ASCII names need not pay for.
    fold, like = "lower", "c.path LIKE ? ESCAPE '\\'"
    if not all(v.isascii() for v in (*scope.project_values, scope.name or "")):
        conn.create_function("memsync_fold", 1, _casefold, deterministic=True)
        fold, like = "memsync_fold", "memsync_fold(c.path) LIKE ? ESCAPE '\\'"
    if scope.project_values:
        project = fold
        if scope.project_key:  # a Python call a card with a `project`, which few cards have
            conn.create_function("memsync_project", 1, scope.project_key, deterministic=True)
            project = "memsync_project"
        terms.append(f"c.project IS NOT NULL AND {project}(c.project) IN ({', '.join('?' * len(scope.project_values))})")
        args += scope.project_values
    if scope.name:
        # Each test below first asks whether the name is in the column at all, which it is not
        # in most cards, and only then for the forms that count: the scan of 100,000 cards'
        # rows evaluates one test each instead of six.
        # tag_set is a JSON list of folded tags: the tag itself, or a nested one ending in it
        quoted = json.dumps(scope.name, ensure_ascii=False)
        terms.append("instr(c.tag_set, ?) > 0 AND (instr(c.tag_set, ?) > 0 OR instr(c.tag_set, ?) > 0)")
        args += [quoted[1:-1], quoted, "/" + quoted[1:]]
        # a folder of that name anywhere, or a note named after it (02-Projects/memsync.md);
        # LIKE ignores the case of ASCII letters
        name = _like_escape(scope.name)
        terms.append(f"{like} AND ({like} OR {like} OR {like} OR {like})")
        args += [f"%{name}%", f"{name}/%", f"%/{name}/%", f"{name}.md", f"%/{name}.md"]
    for source, prefix in scope.ranges:
        if prefix:
            terms.append("(c.source = ? AND c.path >= ? AND c.path < ?)")
            args += [source, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
        else:
            terms.append("c.source = ?")
            args.append(source)
    if not terms:
        return []
    where = " OR ".join(f"({t})" for t in terms)
    return conn.execute(f"SELECT {_LIGHT} {_FROM} WHERE {VALID_ON} AND ({where})", args).fetchall()


def _casefold(text: str | None) -> str | None:
    return text.casefold() if isinstance(text, str) else text


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def priorities(conn: Connection) -> list[str]:
    """Every `priority` value the cards hold, once each: a few, read from cards_priority."""
    return [row[0] for row in conn.execute("SELECT DISTINCT priority FROM cards WHERE priority IS NOT NULL")]


def used_cards(conn: Connection, today: str, limit: int, by_rank: Mapping[int, Sequence[str]]) -> list[Row]:
    """Valid cards with a priority, read at least once or marked helpful more often than not, the
    first `limit` by priority, then feedback, then reads, then id, as memsync.brief.select orders
    them: a critical card never read
    is not crowded out by a hundred read ones. `by_rank` holds the priority values that count, by
    their rank (memsync.brief.select.priority_rank), each rank's values a JSON list so that the
    query's parameters stay few however many ways a vault spells them. Found from card_stats and
    cards_priority, not by a scan of every card."""
    levels = sorted(by_rank, reverse=True)
    rank = "".join(f"WHEN c.priority IN (SELECT value FROM json_each(?)) THEN {int(level)} " for level in levels)
    order = f"CASE {rank}ELSE 0 END DESC, " if levels else ""
    used = "read_count > 0"
    if _has_column(conn, "card_stats", "helpful_count"):  # the lifecycle wing's feedback
        order += "coalesce(s.unhelpful_count, 0) - coalesce(s.helpful_count, 0), "
        # marked helpful more than not, though never opened: memory_get's feedback reads nothing
        used += " OR helpful_count > unhelpful_count"
    values = [json.dumps(list(by_rank[level]), ensure_ascii=False) for level in levels]
    return conn.execute(
        f"SELECT {_LIGHT} {_FROM} WHERE {VALID_ON} AND c.id IN (SELECT id FROM card_stats "
        f"WHERE {used} UNION ALL SELECT id FROM cards WHERE priority IN "
        f"(SELECT value FROM json_each(?))) ORDER BY {order}coalesce(s.read_count, 0) DESC, c.id LIMIT ?",
        (*on_day(today), json.dumps([v for level in levels for v in by_rank[level]], ensure_ascii=False),
         *values, limit),
    ).fetchall()


# The time a card without an `updated` date of its own last changed, as far as the index knows:
# when its file's content last changed (file_changes: its mtime when memsync read new
# content, never later than that read), when the file is that one card (of a file of many, the
# time says only that one of them changed). Most source cards (CLAUDE.md, a Claude Code
# memory) carry no dates.
_FILE_CHANGED = ("(SELECT f.changed_ns FROM file_changes f WHERE c.updated IS NULL AND f.source = c.source "
                 "AND f.path = c.file AND c.path = c.file) AS file_changed_ns")


# When the content of a card's file last changed (file_changes), whatever its dates say: a date
# later than that was not written by the clock that wrote the file (memsync.brief.select).
_CONTENT_CHANGED = ("(SELECT f.changed_ns FROM file_changes f WHERE f.source = c.source "
                    "AND f.path = c.file) AS content_changed_ns")


# The cards whose dates are on or after a day (?1), by the indexes of BRIEF_LOOKUPS
# (memsync.store.schema_lifecycle): one range a date. Written as an OR inside the query below,
# SQLite scanned every card's entry of cards_brief instead; as a UNION it reads the three ranges.
_FROM_DAY = ("SELECT rowid FROM cards WHERE created >= ?1 UNION SELECT rowid FROM cards WHERE "
             "updated >= ?1 UNION SELECT rowid FROM cards WHERE superseded_by IS NOT NULL "
             "AND invalid_at >= ?1")
# Those cards' dates as moments (seconds): created, updated, and the supersede mark when it is
# superseded (memsync.brief.select.last_change, without the file's time), each worked out once.
# LIMIT -1 keeps SQLite from merging this into the query around it (which has a LIMIT too):
# merged, each moment was worked out again for the test, for the max and for the order, and
# every candidate was joined to its reads and files before the LIMIT. At 100,000 cards with
# 5,661 dated since the day, 76 -> 29 ms (1,998: 29 -> 11 ms; medians of 9, same rows).
_MOMENTS = (f"SELECT c.rowid AS seq, c.id, {seconds('c.created')} AS created, "
            f"{seconds('c.updated')} AS updated, CASE WHEN c.superseded_by IS NOT NULL "
            f"THEN {seconds('c.invalid_at')} ELSE 0 END AS retired "
            f"FROM cards c WHERE c.rowid IN ({_FROM_DAY}) LIMIT -1")
# The `limit` latest of them from ?2 on; only these are joined to their reads and files.
_CHANGED = ("SELECT m.seq, max(m.created, m.updated, m.retired) AS latest, m.id "
            f"FROM ({_MOMENTS}) m WHERE m.created >= ?2 OR m.updated >= ?2 OR m.retired >= ?2 "
            "ORDER BY latest DESC, m.id LIMIT ?3")


def changed_cards(conn: Connection, since_day: str, since: int, limit: int) -> list[Row]:
    """Cards (valid or not) created, updated or superseded at `since` (seconds) or later, the
    latest first, as moments whatever zone each date was written in. A superseded card is here
    when its mark is that recent. SQLite reads the cards dated from `since_day` on (two days
    before, as no zone moves a time further from its written day) instead of every card; the
    moment decides."""
    return conn.execute(
        f"SELECT {_LIGHT}, {_FILE_CHANGED}, {_CONTENT_CHANGED} FROM ({_CHANGED}) n "
        "CROSS JOIN cards c ON c.rowid = n.seq LEFT JOIN card_stats s ON s.id = c.id "
        "ORDER BY n.latest DESC, c.id",
        (since_day, since, limit),
    ).fetchall()


# The newest content changes changed_files() looks through. A card with an `updated` date is
# told by changed_cards, so after a checkout or a sync that changed every file since the last
# brief, a look at each change for the few cards without one read every card (117 ms at 100,000
# cards whose notes all carry dates); past this many changes, older undated ones go untold, as
# the section shows only the latest few anyway.
FILES_LOOKED = 1000
# The cards of changed_files(): see there.
CHANGED_FILES = (
    f"SELECT {_LIGHT}, f.changed_ns AS file_changed_ns FROM "
    "(SELECT source, path, changed_ns FROM file_changes WHERE changed_ns >= ?1 "
    "ORDER BY changed_ns DESC LIMIT ?3) f "
    "CROSS JOIN cards c ON c.source = f.source AND c.file = f.path AND c.path = f.path "
    "LEFT JOIN card_stats s ON s.id = c.id WHERE c.updated IS NULL "
    "ORDER BY f.changed_ns DESC, c.id LIMIT ?2")


def changed_files(conn: Connection, since_ns: int, limit: int) -> list[Row]:
    """Cards without an `updated` date, alone in a file whose content changed at `since_ns` or
    later (the rows of changed_cards), the most recent first: the newest FILES_LOOKED changes by
    their index of times (file_changes_by_time), then each file's cards. CROSS JOIN keeps that
    order: left to choose, SQLite began from the cards without an `updated` date, every note of a
    vault that writes none (160-200 ms at 100,000 cards)."""
    return conn.execute(CHANGED_FILES, (since_ns, limit, FILES_LOOKED)).fetchall()


# The files of changed_files_of_many(): of the newest FILES_LOOKED content changes, those whose
# cards all sit under anchors (`memory.jsonl#alice`, `GEMINI.md#...`), so that no card of the file
# itself is told by changed_files. One file a row, with its count of cards: each lookup goes
# through cards_file, covering, never through a card's row (a graph of 200,000 entities).
CHANGED_MANY = (
    "SELECT f.source, f.path, f.changed_ns AS file_changed_ns, "
    "(SELECT count(*) FROM cards c WHERE c.source = f.source AND c.file = f.path) AS file_cards FROM "
    "(SELECT source, path, changed_ns FROM file_changes WHERE changed_ns >= ?1 "
    "ORDER BY changed_ns DESC LIMIT ?3) f "
    "WHERE EXISTS (SELECT 1 FROM cards c WHERE c.source = f.source AND c.file = f.path) "
    "AND NOT EXISTS (SELECT 1 FROM cards c WHERE c.source = f.source AND c.path = f.path) "
    "ORDER BY f.changed_ns DESC, f.source, f.path LIMIT ?2")
# Cards of such a file named with it: its first ones, in the order it holds them (the order they
# were written into the index, which cards_file keeps: no card of the file is read but these).
NAMED = 3


def changed_files_of_many(conn: Connection, since_ns: int, limit: int) -> list[dict]:
    """Files whose content changed at `since_ns` or later and whose cards are parts of them (a
    memory graph's entities, Gemini's bullets), the most recent first: the file's time does not
    say which of its cards changed, so a brief tells the file. Each row is shaped as a card's
    light row (no dates of its own, `id` its first card's, for ties), plus `file_cards` (how many
    cards the file holds) and `named` ((id, title) of its first NAMED cards)."""
    out = []
    for row in conn.execute(CHANGED_MANY, (since_ns, limit, FILES_LOOKED)).fetchall():
        named = [(r[0], r[1]) for r in conn.execute(
            "SELECT id, title FROM cards WHERE source = ? AND file = ? ORDER BY rowid LIMIT ?",
            (row["source"], row["path"], NAMED))]
        if not named:  # its cards went since the query above (another writer's commit)
            continue
        out.append({"id": named[0][0], "source": row["source"], "path": row["path"],
                    "title": f"{row['source']}:{row['path']}", "kind": None, "priority": None,
                    "created": None, "updated": None, "invalid_at": None, "superseded_by": None,
                    "supersedes": None, "reads": 0, "file_changed_ns": row["file_changed_ns"],
                    "file_cards": row["file_cards"], "named": named})
    return out


def texts(conn: Connection, ids: Iterable[int]) -> dict[int, tuple[str, str | None]]:
    """id -> (body, summary) for these cards; summary is None where the index has no summary
    column yet (the lifecycle wing adds it) or the card has none."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    summary = "c.summary" if _has_column(conn, "cards", "summary") else "NULL"
    out: dict[int, tuple[str, str | None]] = {}
    for chunk in _chunks(wanted, 500):
        for row in conn.execute(
            f"SELECT c.id, c.body, {summary} FROM cards c WHERE c.id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            out[row[0]] = (row[1], row[2])
    return out


def titles_by_path(conn: Connection, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, str]]:
    """(source, path) -> (id, title) for the cards at these paths (a supersede's other side)."""
    out = {}
    for source, path in set(pairs):
        row = conn.execute("SELECT id, title FROM cards WHERE source = ? AND path = ?", (source, path)).fetchone()
        if row:
            out[(source, path)] = (row[0], row[1])
    return out


def _has_column(conn: Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))


def _chunks(items: Sequence[int], size: int) -> Iterable[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
