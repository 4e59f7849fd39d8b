"""Schema steps 8 on (memsync.store.migrations runs them): summaries, the retrieval log and
feedback, a card's project, the brief's lookups, the folder stamps of a reconcile, and the times
the files' contents changed."""

from __future__ import annotations

import sqlite3
import sys

from memsync.store.schema_cards import run_script


def m008_summary(conn) -> None:
    """The `summary:` of a card's frontmatter, shown by search instead of a body window. No file
    is read again: memsync wrote no summary before this schema, and a `summary:` a person wrote
    by hand is taken up when its file next changes or by `memsync index --rebuild`."""
    if "summary" not in {row[1] for row in conn.execute("PRAGMA table_info(cards)")}:
        conn.execute("ALTER TABLE cards ADD COLUMN summary TEXT")


# The retrieval log and feedback (memsync.store.lifelog): kept by a rebuild, like card_stats.
LIFELOG_SCHEMA = """
    -- One row per search: when, the query (a flagged secret redacted), the filters and tiers as
    -- JSON, the hits as [[id, score], ...] in order, the MCP client that asked, and the ids of
    -- those hits that were then opened (show, memory_get). Capped: the oldest rows go first.
    CREATE TABLE IF NOT EXISTS retrieval_log (
        seq     INTEGER PRIMARY KEY AUTOINCREMENT,
        at      TEXT NOT NULL,
        query   TEXT NOT NULL,
        filters TEXT NOT NULL DEFAULT '{}',
        matched TEXT,
        hits    TEXT NOT NULL DEFAULT '[]',
        client  TEXT,
        opened  TEXT NOT NULL DEFAULT '[]'
    );
    -- Each helpful / unhelpful verdict, with the query it answered when known.
    CREATE TABLE IF NOT EXISTS feedback (
        seq     INTEGER PRIMARY KEY AUTOINCREMENT,
        id      INTEGER NOT NULL,
        at      TEXT NOT NULL,
        helpful INTEGER NOT NULL,
        query   TEXT
    );
    CREATE INDEX IF NOT EXISTS feedback_id ON feedback(id)"""
# card_stats gains the use counts (read_count is `opened`).
USE_COLUMNS = (
    ("returned_count", "INTEGER NOT NULL DEFAULT 0"),
    ("last_returned_at", "TEXT"),
    ("helpful_count", "INTEGER NOT NULL DEFAULT 0"),
    ("unhelpful_count", "INTEGER NOT NULL DEFAULT 0"),
)


def m009_retrieval_log(conn) -> None:
    """The retrieval log, feedback, and per-card use beside the read counts (DESIGN §12)."""
    run_script(conn, LIFELOG_SCHEMA)
    have = {row[1] for row in conn.execute("PRAGMA table_info(card_stats)")}
    for column, decl in USE_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE card_stats ADD COLUMN {column} {decl}")


def m010_card_project(conn) -> None:
    """The frontmatter `project` of a card (what `memsync brief` matches a working directory by).
    Frontmatter is not stored, so every file already indexed is marked for one re-read (its hash
    is cleared): the next `memsync index` or watcher start fills the column."""
    if "project" not in {row[1] for row in conn.execute("PRAGMA table_info(cards)")}:
        conn.execute("ALTER TABLE cards ADD COLUMN project TEXT")
    conn.execute(BRIEF_INDEX)
    stale = conn.execute("UPDATE files SET hash = ''").rowcount
    if stale:
        print(f"memsync: index upgraded to schema 10 (card project); {stale} file(s) will be read "
              "once more by the next `memsync index` or watcher start", file=sys.stderr)


def m011_summary_searched(conn) -> None:
    """A card's `summary:` is searched, with its top-level headings (memsync.store.fields): the
    files of the cards that have one are read once more by the next `memsync index` or watcher
    start. An index with no summary reads nothing again."""
    stale = conn.execute(
        "UPDATE files SET hash = '' WHERE (source, path) IN (SELECT source, CASE WHEN instr(path, '#') "
        "THEN substr(path, 1, instr(path, '#') - 1) ELSE path END FROM cards "
        "WHERE summary IS NOT NULL AND summary != '')").rowcount
    if stale:
        print(f"memsync: index upgraded to schema 11 (summaries searched); {stale} file(s) will be "
              "read once more by the next `memsync index` or watcher start", file=sys.stderr)


def m012_brief_lookups(conn) -> None:
    """Indexes for the brief's "changed since" and "used most" lists (memsync.store.brief), which
    were scans of every card: by creation, update and supersede time, and the cards with a
    priority. A few milliseconds less per brief at 10,000 cards, tens at 100,000."""
    run_script(conn, BRIEF_LOOKUPS)


BRIEF_LOOKUPS = """
    CREATE INDEX IF NOT EXISTS cards_created ON cards(created);
    CREATE INDEX IF NOT EXISTS cards_updated ON cards(updated);
    CREATE INDEX IF NOT EXISTS cards_superseded ON cards(invalid_at) WHERE superseded_by IS NOT NULL;
    CREATE INDEX IF NOT EXISTS cards_priority ON cards(priority) WHERE priority IS NOT NULL"""


# Every column the brief filters and lists cards by (memsync.store.brief), so it scans this index
# instead of the cards table: a card's row holds its body, and project and tag_set sit after it,
# so a scan of the table read every body (250 ms at 10,000 cards; the index: a few ms).
BRIEF_INDEX = """CREATE INDEX IF NOT EXISTS cards_brief ON cards(
    project, tag_set, source, path, invalid_at, superseded_by, supersedes, priority, created,
    updated, kind, id, title)"""


def m013_folder_stamps(conn) -> None:
    """Each folder as a reconcile last listed it (memsync.folders): a folder unchanged since is
    not listed again. Empty at first: the next reconcile lists every folder and stamps it."""
    conn.execute(FOLDER_STAMPS)


FOLDER_STAMPS = """CREATE TABLE IF NOT EXISTS folder_stamps (
    source   TEXT NOT NULL,
    path     TEXT NOT NULL,     -- the folder with a trailing "/", "" for the source's root
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    ino      INTEGER NOT NULL,
    files    INTEGER NOT NULL,  -- wanted files directly in it when listed
    folders  INTEGER NOT NULL,  -- subfolders entered
    rules    INTEGER NOT NULL,  -- memsync.folders.rules_key of that listing
    PRIMARY KEY (source, path)
) WITHOUT ROWID"""


def m014_hash_in_file_names(conn) -> None:
    """A `#` in a file or folder name (`C# tips.md`) was taken for an entry's anchor, so such a
    note was titled by the name's part before it ("C") and had no name for links to find it by
    (memsync.pathnames.file_part). Only those files are read once more."""
    stale = conn.execute("UPDATE files SET hash = '' WHERE instr(path, '#') > 0").rowcount
    if stale:
        print(f"memsync: index upgraded to schema 14 ('#' in file names); {stale} file(s) will be "
              "read once more by the next `memsync index` or watcher start", file=sys.stderr)


def m015_source_card_titles(conn) -> None:
    """Claude Code memories take their title and summary from their frontmatter, Cursor rules
    with bare globs their description, and an entity on two lines of a memory.jsonl both lines'
    observations (memsync.adapters): the files of every source but the vault are read once more
    (agents' memories: a few hundred files at most)."""
    stale = conn.execute("UPDATE files SET hash = '' WHERE source != 'vault'").rowcount
    if stale:
        print(f"memsync: index upgraded to schema 15 (source card titles); {stale} source file(s) "
              "will be read once more by the next `memsync index` or watcher start", file=sys.stderr)


def m016_files_by_time(conn) -> None:
    """An index of the files by modification time, for the brief's cards without an `updated`
    date (memsync.store.brief.changed_files): most notes of an Obsidian vault carry no dates, and
    the brief found theirs by every such card in turn (160-200 ms at 100,000 cards; now a range
    of this index, under a millisecond)."""
    conn.execute(FILES_BY_TIME)


FILES_BY_TIME = "CREATE INDEX IF NOT EXISTS files_mtime ON files(mtime_ns)"


def m017_files_changed(conn) -> None:
    """When each file's content last changed, as memsync saw it: the brief's time for the cards
    without an `updated` date (memsync.store.brief). The mtime is not that time: a `touch`, a
    `git checkout` there and back or a sync that rewrites a file as it was moves it with no
    change, and a clock ahead puts it after every brief to come. A row is written when new
    content is read (its mtime, never later than that read) and left as it is when only the
    file's times moved (Index.touch_signature); for an older writer, by triggers (schema 18). A
    table of its own, not a column of `files`: a watcher or server of the version before, still
    running, writes `files` rows by position and would fail on a column it does not know. Its
    index takes the place of files_mtime."""
    conn.execute(FILE_CHANGES)
    if conn.execute("SELECT 1 FROM file_changes LIMIT 1").fetchone() is None:
        conn.execute("INSERT INTO file_changes SELECT source, path, min(mtime_ns, indexed_ns) FROM files")
    conn.execute("DROP INDEX IF EXISTS files_mtime")
    conn.execute(FILES_BY_CHANGE)


FILE_CHANGES = ("CREATE TABLE IF NOT EXISTS file_changes (source TEXT NOT NULL, path TEXT NOT NULL, "
                "changed_ns INTEGER NOT NULL, PRIMARY KEY (source, path)) WITHOUT ROWID")
FILES_BY_CHANGE = "CREATE INDEX IF NOT EXISTS file_changes_by_time ON file_changes(changed_ns)"


def m018_file_changes_follow_files(conn) -> None:
    """A watcher of a version before schema 17 (alone, or inside an MCP server), started before
    the upgrade and still running, writes `files` and knows nothing of file_changes: its edits,
    moves and deletes left the times behind for good (rows of files gone, none for new ones),
    since a reconcile finds those files unchanged. Triggers on `files` keep the times in step
    with such a writer until no older watcher can be left (retire_file_change_triggers), and what
    one wrote since schema 17 is put right here. A new index (no files) has no older writer."""
    if conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
        return
    for trigger in FILE_CHANGE_TRIGGERS:
        conn.execute(trigger)
    gone = conn.execute("DELETE FROM file_changes WHERE (source, path) NOT IN "
                        "(SELECT source, path FROM files)").rowcount
    new = conn.execute("INSERT INTO file_changes SELECT source, path, min(mtime_ns, indexed_ns) FROM files "
                       "WHERE (source, path) NOT IN (SELECT source, path FROM file_changes)").rowcount
    if gone or new:
        print(f"memsync: index upgraded to schema 18; the change times of {gone + new} file(s) that "
              "an older memsync wrote after the upgrade were put right", file=sys.stderr)


def m019_notes_misread(conn) -> None:
    """Three kinds of note were read wrong (memsync.notes): one saved as UTF-16 or UTF-32, read as
    UTF-8 (a card of NUL bytes and replacement characters); one whose lines end in a lone
    carriage return (old Mac OS), read as one line, its frontmatter part of the body; and one
    whose tags or aliases hold a list or a mapping, each made one tag of Python's text
    (`['b', 'c']`). And, in the same release, frontmatter lost whole to one date that cannot be
    (2024-02-30), or kept whole though its aliases stand for billions of values, and dates that
    are none quoted as Python writes them. The files of cards that were not valid UTF-8, whose body
    holds a NUL byte or a carriage return without its newline, whose tags or aliases begin with
    `[` or `{`, or with a problem of their frontmatter or a date, are read once more (a scan of
    the cards, once)."""
    stale = conn.execute(
        "UPDATE files SET hash = '' WHERE (source, path) IN (SELECT source, CASE WHEN instr(path, '#') "
        "THEN substr(path, 1, instr(path, '#') - 1) ELSE path END FROM cards "
        "WHERE problem LIKE 'not valid UTF-8%' OR instr(CAST(body AS BLOB), x'00') > 0 "
        "OR problem LIKE '%frontmatter%' OR problem LIKE '%is not a date%' "
        "OR length(tags) + length(aliases) > 100000 "
        "OR (instr(body, char(13)) > 0 AND instr(replace(body, char(13, 10), ''), char(13)) > 0) "
        """OR tags LIKE '%"[%' OR tags LIKE '%"{%' OR aliases LIKE '%"[%' OR aliases LIKE '%"{%')""").rowcount
    if stale:
        print(f"memsync: index upgraded to schema 19 (notes read as written); {stale} file(s) "
              "will be read once more by the next `memsync index` or watcher start", file=sys.stderr)



def m020_dates_that_are_none(conn) -> None:
    """An invalid_at that is a day that cannot be (2026-02-30) was taken as a date and ordered
    by its text, with no problem said, and an empty one (`[]`, `{}`, blank text) retired its
    card. The files of cards whose invalid_at does not open with a day that exists, or with a
    problem of a date, are read once more."""
    day = "substr(invalid_at, 1, 10)"
    stale = conn.execute(
        "UPDATE files SET hash = '' WHERE (source, path) IN (SELECT source, CASE WHEN instr(path, '#') "
        "THEN substr(path, 1, instr(path, '#') - 1) ELSE path END FROM cards "
        f"WHERE (invalid_at IS NOT NULL AND (date({day}, '+0 days') IS NOT {day} "
        "OR substr(invalid_at, 1, 4) = '0000')) OR problem LIKE '%is not a date%')").rowcount
    if stale:
        print(f"memsync: index upgraded to schema 20 (dates that are none); {stale} file(s) "
              "will be read once more by the next `memsync index` or watcher start", file=sys.stderr)

# What Index.replace_file, remove_file and move_file write into file_changes, done for a writer
# that does not: new content read (a `files` row written anew, INSERT OR REPLACE) is a change at
# its mtime, never later than that read; a file dropped or moved takes its time with it. A
# change of times alone (an UPDATE of other columns) leaves the time as it was.
FILE_CHANGE_TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS file_read AFTER INSERT ON files BEGIN INSERT OR REPLACE INTO "
    "file_changes VALUES (new.source, new.path, min(new.mtime_ns, new.indexed_ns)); END",
    "CREATE TRIGGER IF NOT EXISTS file_dropped AFTER DELETE ON files BEGIN "
    "DELETE FROM file_changes WHERE source = old.source AND path = old.path; END",
    "CREATE TRIGGER IF NOT EXISTS file_moved AFTER UPDATE OF path ON files BEGIN "
    "DELETE FROM file_changes WHERE source = old.source AND path = old.path; END",
)
FILE_CHANGE_TRIGGER_NAMES = ("file_read", "file_dropped", "file_moved")


def retire_file_change_triggers(conn) -> bool:
    """Drop the triggers of m018 once no watcher of an older schema can be writing (the caller
    holds the watcher lock): they cost every write of `files` a statement journal, and a bulk
    load its full-text rows held in memory (FTS5 writes them out at each such statement).
    Returns whether they went: an index busy past the wait keeps them for the next start (they
    only cost time)."""
    marks = ", ".join("?" * len(FILE_CHANGE_TRIGGER_NAMES))
    if conn.execute(f"SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})",
                    FILE_CHANGE_TRIGGER_NAMES).fetchone() is None:
        return False
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:  # busy: another process writes
        return False
    try:
        for name in FILE_CHANGE_TRIGGER_NAMES:
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True
