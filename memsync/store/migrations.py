"""Schema, as numbered migrations applied in order and recorded in PRAGMA user_version. The steps
themselves are in memsync.store.schema_cards (1 to 7), memsync.store.schema_lifecycle (8 to 20) and
memsync.store.schema_scripts (21)."""

from __future__ import annotations

import sys

from memsync.store import fts
from memsync.store.schema_cards import (
    m001_initial,
    m002_cjk_run_ends,
    m003_vectors,
    m004_note_fields,
    m005_text_once,
    m006_markdown_links,
    m007_smaller_links,
)
from memsync.store.schema_lifecycle import (
    m008_summary,
    m009_retrieval_log,
    m010_card_project,
    m011_summary_searched,
    m012_brief_lookups,
    m013_folder_stamps,
    m014_hash_in_file_names,
    m015_source_card_titles,
    m016_files_by_time,
    m017_files_changed,
    m018_file_changes_follow_files,
    m019_notes_misread,
    m020_dates_that_are_none,
)
from memsync.store.schema_scripts import m021_marks_and_unspaced_scripts

MIGRATIONS = [m001_initial, m002_cjk_run_ends, m003_vectors, m004_note_fields, m005_text_once,
              m006_markdown_links, m007_smaller_links, m008_summary,
              m009_retrieval_log, m010_card_project, m011_summary_searched, m012_brief_lookups,
              m013_folder_stamps, m014_hash_in_file_names,
              m015_source_card_titles, m016_files_by_time, m017_files_changed,
              m018_file_changes_follow_files, m019_notes_misread,
              m020_dates_that_are_none, m021_marks_and_unspaced_scripts]
# Pages of an index file (memsync.store.index sets it on a new file, an upgrade moves an older file
# to it). Half SQLite's default: a card body a few KiB long leaves less of a page unused, and
# each small table or index costs less. Measured on the Obsidian Help vaults, zh-TW 3.12x ->
# 2.95x the notes' bytes (1 KiB: 2.90x, but searches ~15% slower; 2 KiB as fast as 4 KiB).
PAGE_SIZE = 2048
# Steps that free much of the file: the index is compacted once they have run (memsync.store.fts).
COMPACTING = {m005_text_once, m007_smaller_links}


class NewerSchema(Exception):
    """The index was written by a newer memsync: its schema may mean things we do not know."""

    def __init__(self, found: int):
        super().__init__(f"schema {found}, this memsync knows {len(MIGRATIONS)}")
        self.found, self.known = found, len(MIGRATIONS)


class Unversioned(Exception):
    """A file with tables but no schema version (user_version 0): migrating it would write our
    tables into it (another program's database) or fail on tables already there (a memsync index
    whose version some tool reset), so it is refused either way."""

    def __init__(self, tables: list[str]):
        super().__init__(f"schema version 0, yet the file holds tables: {', '.join(tables)}")
        self.tables = tables
        self.ours = bool(OUR_TABLES.intersection(tables))


# Tables only a memsync index has: a file holding them was one, whatever its version says.
OUR_TABLES = frozenset({"card_ids", "card_stats", "cards"})


def unversioned(conn) -> Unversioned | None:
    """What is wrong with a file that has tables and no schema version; None when it has a
    version, or no tables (a new or empty file: migrating makes it an index).

    Both are read in one read transaction: as two statements of their own, a process that made
    the schema of a new index between them (its tables and version committed at once) showed
    tables without their version, and one of four processes opening a new index at once was
    told it had lost its schema version."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != 0:
            return None
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    finally:
        if own:
            conn.execute("COMMIT")
    return Unversioned(tables) if tables else None


def migrate(conn) -> int:
    """Bring the schema up to date; returns the resulting version. Refuses (NewerSchema) an index
    whose schema is ahead of ours rather than read or write it with the wrong assumptions, and
    (Unversioned) a file with tables but no version."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise NewerSchema(version)
    if version == 0 and (foreign := unversioned(conn)):
        raise foreign
    compact = ran = False
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the write lock.
            if conn.execute("PRAGMA user_version").fetchone()[0] >= number:
                conn.execute("ROLLBACK")
                continue
            step(conn)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        compact, ran = compact or step in COMPACTING, True
    # without it the file keeps its old size, the freed pages inside it
    free = fts.sparse(conn) if compact else None
    # An index made before schema 7 has 4 KiB pages: an upgrade moves it to PAGE_SIZE ones.
    resize = ran and version > 0 and conn.execute("PRAGMA page_size").fetchone()[0] != PAGE_SIZE
    if free or resize:
        why = f"{free[0]} of {free[1]} pages are free" if free else f"into {PAGE_SIZE} B pages"
        print(f"memsync: compacting the index ({why})...", file=sys.stderr)
        if not fts.compact(conn, PAGE_SIZE if resize else None) and resize:
            print(f"memsync: another process has the index open, so it keeps its larger pages; "
                  f"`memsync index --rebuild` with nothing else running moves it to {PAGE_SIZE} B "
                  "ones (a smaller file)", file=sys.stderr)
    return len(MIGRATIONS)
