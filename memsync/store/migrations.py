"""Schema, as numbered migrations applied in order and recorded in PRAGMA user_version."""

from __future__ import annotations

import json
import sys

from memsync import cjk
from memsync.store import fts


def _run(conn, script: str) -> None:
    # Not executescript(): it would COMMIT the surrounding BEGIN IMMEDIATE first.
    for statement in script.split(";\n"):
        if statement.strip():
            conn.execute(statement)


# Full-text index over pre-tokenized text (memsync.cjk): CJK as bigrams, other text as lowercase
# words, all joined by spaces so unicode61 only has to split on them. rowid = cards.seq; rows are
# deleted by rowid (a filter on a column would scan the whole table).
FTS_TABLE = """
CREATE VIRTUAL TABLE cards_fts USING fts5(
    title,   -- title and aliases: weighted highest
    tags,    -- tags: weighted above the body
    body,    -- the Markdown body
    -- porter: English words are stemmed on both sides (requests = request); CJK bigrams and
    -- identifiers pass through. Chosen on the retrieval bench (bench/RESULTS.md).
    tokenize = 'porter unicode61 remove_diacritics 0'
)"""


def _recreate_fts_v1(conn) -> None:
    conn.execute("DROP TABLE IF EXISTS cards_fts")
    conn.execute(FTS_TABLE)


def m001_initial(conn) -> None:
    conn.execute(FTS_TABLE)
    _run(
        conn,
        """
        -- Stable ids. An id is derived from (source, path) the first time a path is seen and
        -- then follows the card through renames. A retired id keeps its row with path NULL, so
        -- it is never handed to another card. Kept by --rebuild, like card_stats.
        CREATE TABLE card_ids (
            id     INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            path   TEXT
        );
        CREATE UNIQUE INDEX card_ids_path ON card_ids(source, path) WHERE path IS NOT NULL;

        -- Read statistics: the one table with no second source (rebuild keeps it).
        CREATE TABLE card_stats (
            id           INTEGER PRIMARY KEY,
            read_count   INTEGER NOT NULL DEFAULT 0,
            last_read_at TEXT
        );

        -- One row per file we index: the stat signature that lets a reconcile skip hashing.
        CREATE TABLE files (
            source     TEXT NOT NULL,
            path       TEXT NOT NULL,
            size       INTEGER NOT NULL,
            mtime_ns   INTEGER NOT NULL,
            ctime_ns   INTEGER NOT NULL,
            ino        INTEGER NOT NULL,
            hash       TEXT NOT NULL,
            indexed_ns INTEGER NOT NULL,   -- when the content was read (racy-clean check)
            PRIMARY KEY (source, path)
        ) WITHOUT ROWID;

        -- One row per card (a file may hold several: path is then file#anchor).
        -- seq is the FTS rowid: always increasing on insert, because FTS5 flushes its
        -- in-memory segment whenever a rowid is not larger than the last one written
        -- (random card ids as rowids made bulk indexing ~1.6x slower).
        CREATE TABLE cards (
            seq           INTEGER PRIMARY KEY,
            id            INTEGER NOT NULL UNIQUE,
            source        TEXT NOT NULL,
            path          TEXT NOT NULL,
            file          TEXT NOT NULL,
            title         TEXT NOT NULL,
            kind          TEXT,
            tags          TEXT NOT NULL DEFAULT '[]',   -- JSON list
            aliases       TEXT NOT NULL DEFAULT '[]',   -- JSON list
            created       TEXT,
            updated       TEXT,
            invalid_at    TEXT,
            superseded_by TEXT,
            supersedes    TEXT,
            priority      TEXT,
            ttl           TEXT,
            body          TEXT NOT NULL,
            problem       TEXT,
            UNIQUE (source, path)
        );
        CREATE INDEX cards_file ON cards(source, file);
        CREATE INDEX cards_kind ON cards(kind);

        -- Files we saw but could not index fully (broken YAML, too large, bad name).
        CREATE TABLE problems (
            source  TEXT NOT NULL,
            path    TEXT NOT NULL,
            message TEXT NOT NULL,
            PRIMARY KEY (source, path)
        ) WITHOUT ROWID;

        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT
        ) WITHOUT ROWID;
        """,
    )


def m002_cjk_run_ends(conn) -> None:
    """Re-tokenize for the one-character CJK query: runs now also store their last character.
    The cards table holds every field the FTS text is made from, so no file is read."""
    _recreate_fts_v1(conn)
    rows = conn.execute("SELECT seq, title, aliases, tags, body FROM cards ORDER BY seq")
    conn.executemany(
        "INSERT INTO cards_fts (rowid, title, tags, body) VALUES (?, ?, ?, ?)",
        ((seq, *cjk.index_fields(title, json.loads(aliases), json.loads(tags), body))
         for seq, title, aliases, tags, body in rows),
    )


def m003_vectors(conn) -> None:
    """Tables of the opt-in semantic search (memsync.semantic). Derived data like the FTS text,
    but not cleared by a rebuild: keyed by content, a vector is as good after a rebuild as before,
    and embedding is the slowest thing memsync does. IF NOT EXISTS: an index set back to an
    older user_version (by hand, or a test) still has them."""
    _run(
        conn,
        """
        -- Embeddings by content: the sha256 of the text the card was embedded from, so a rename,
        -- a rebuild or an unchanged file reuses them. vecs = `parts` float16 vectors, one per
        -- passage of a long card, concatenated.
        CREATE TABLE IF NOT EXISTS vectors (
            model     TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            parts     INTEGER NOT NULL,
            vecs      BLOB NOT NULL,
            PRIMARY KEY (model, text_hash)
        );

        -- Which content each card was embedded from, and the file hash it was read at: a vector
        -- is current while files.hash still equals file_hash (no text is read to check that).
        CREATE TABLE IF NOT EXISTS card_vectors (
            id        INTEGER PRIMARY KEY,   -- card id (cards.id)
            file_hash TEXT NOT NULL,
            text_hash TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS card_vectors_text ON card_vectors(text_hash);
        """,
    )


def m004_note_fields(conn) -> None:
    """Obsidian's model of a note: title from frontmatter or file name, headings, inline tags,
    wikilinks, exact keys. Every field is re-derived from the cards table; no file is read here.
    A vault note whose stored title may have come from its first `# heading` (the old rule) is
    marked for one re-read (its file hash is cleared), as is every card of another source
    (its adapter decides its fields): the next `memsync index` or watcher start reads them."""
    from memsync import notes
    from memsync.store import backlinks, fields, fieldstore

    # An index whose user_version was set back (by hand, by a restore) may hold these already.
    have = {row[1] for row in conn.execute("PRAGMA table_info(cards)")}
    for column, decl in NEW_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE cards ADD COLUMN {column} {decl}")
    _run(conn, SCHEMA_3)
    _links_by_seq(conn)
    conn.execute("DELETE FROM links")
    conn.execute("DELETE FROM exact_keys")
    conn.execute("UPDATE cards SET link_text = '', inlinks = 0")
    fts.recreate(conn)
    stale: set[tuple[str, str]] = set()
    rows = conn.execute(f"SELECT seq, {CARD_FIELDS} FROM cards ORDER BY seq").fetchall()
    for row in rows:
        card = notes.from_stored(dict(zip(("seq", *CARD_FIELDS.split(", ")), row, strict=True)))
        if row[1] != "vault" or notes.title_may_be_heading(card):
            stale.add((row[1], row[3]))
        fieldstore.insert(conn, row[0], row[1], fields.card_fields(card))
    for source, file in sorted(stale):
        conn.execute("UPDATE files SET hash = '' WHERE source = ? AND path = ?", (source, file))
    backlinks.refresh(conn, backlinks.all_names(conn))
    if stale:
        print(f"memsync: index upgraded to schema 4 (note fields, links); {len(stale)} file(s) "
              "will be read once more by the next `memsync index` or watcher start",
              file=sys.stderr)


CARD_FIELDS = "source, path, file, title, kind, tags, aliases, body"
NEW_COLUMNS = (
    ("tag_set", "TEXT NOT NULL DEFAULT '[]'"),  # every tag, folded, parents of nested ones: --tag
    ("name", "TEXT"),  # folded file stem: what wikilinks resolve by (NULL for entry cards)
    ("link_text", "TEXT NOT NULL DEFAULT ''"),  # anchor text of the links pointing here
    ("inlinks", "INTEGER NOT NULL DEFAULT 0"),  # notes linking here
)
# Outgoing links, one row per link of a note: what the links field of other cards is made of
# (memsync.store.backlinks). seq is the linking card (a note is one card); name is the folded last
# segment of the target (memsync.store.fields.link_name), the lookup key; target is the folded target
# without .md, NULL when it is just name (most links): no row repeats the note's path.
LINKS_TABLE = """
    CREATE TABLE IF NOT EXISTS links (
        seq    INTEGER NOT NULL,
        pos    INTEGER NOT NULL,
        name   TEXT NOT NULL,
        target TEXT,
        text   TEXT NOT NULL,
        PRIMARY KEY (seq, pos)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS links_name ON links(name)"""
# Each title, alias, file name and heading of a card, folded (memsync.store.fields.key): a query equal
# to one is found by its key, whatever its words' frequencies. Keyed by (key, seq), the lookup
# needs no index of its own; exact_keys_seq finds a card's keys when it is deleted.
EXACT_KEYS_TABLE = """
    CREATE TABLE IF NOT EXISTS exact_keys (
        key      TEXT NOT NULL,
        seq      INTEGER NOT NULL,
        strength INTEGER NOT NULL,
        PRIMARY KEY (key, seq)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS exact_keys_seq ON exact_keys(seq)"""
# Tables added by m004 (and created by it on a new index, in their latest layout).
SCHEMA_3 = f"""
    CREATE INDEX IF NOT EXISTS cards_name ON cards(source, name);
    {LINKS_TABLE};
    {EXACT_KEYS_TABLE};
    """


def m005_text_once(conn) -> None:
    """Store the full-text text once (memsync.store.fts): cards_fts becomes contentless, names_fts and
    fields_fts read theirs from card_terms. The short fields' tokens are taken over as stored;
    the body's are made from cards.body, as every later delete will make them. No file is read.
    An index whose schema 4 was written by this memsync already has that layout."""
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'card_terms'").fetchone():
        return
    short = conn.execute(f"SELECT rowid, {', '.join(fts.SHORT)} FROM cards_fts").fetchall()
    fts.recreate(conn)
    bodies = dict(conn.execute("SELECT seq, body FROM cards"))
    for seq, *terms in short:
        if seq in bodies:  # a full-text row without its card (doctor's finding) is left behind
            fts.insert(conn, seq, dict(zip(fts.SHORT, terms, strict=True)),
                       cjk.to_index_text(bodies[seq]))


def m006_markdown_links(conn) -> None:
    """Markdown links to notes (`[label](Note.md)`) count as links, as wikilinks do. Each vault
    note's outgoing links are read again from its stored body (no file is read); a note of
    another source is marked for one re-read (its adapter decides its body), as m004 did. Then
    the links field and in-link count of every card follow."""
    from memsync import outline
    from memsync.store import backlinks, fields, fieldstore

    _links_by_seq(conn)
    conn.execute("DELETE FROM links WHERE seq IN (SELECT seq FROM cards WHERE source = 'vault')")
    rows = conn.execute("SELECT seq, path, body FROM cards WHERE source = 'vault' AND "
                        "name IS NOT NULL ORDER BY path").fetchall()
    for seq, path, body in rows:
        fieldstore.insert_links(conn, seq, fields.outgoing(path, outline.links(outline.prose_lines(body))))
    conn.execute("UPDATE files SET hash = '' WHERE source != 'vault' AND path IN "
                 "(SELECT file FROM cards WHERE cards.source = files.source AND name IS NOT NULL)")
    backlinks.refresh(conn, backlinks.all_names(conn))


def _links_by_seq(conn) -> None:
    """The links table of schema 6 and before (keyed by source and file path, target always
    stored) in the layout of LINKS_TABLE. The rows of a file go to the one card that is that
    whole file; those of a file without one (none should be) go. Nothing when already there."""
    if "file" not in {row[1] for row in conn.execute("PRAGMA table_info(links)")}:
        return
    conn.execute("DROP INDEX IF EXISTS links_name")
    conn.execute("ALTER TABLE links RENAME TO links_v6")
    _run(conn, LINKS_TABLE)
    conn.execute("INSERT INTO links (seq, pos, name, target, text) "
                 "SELECT c.seq, l.pos, l.name, nullif(l.target, l.name), l.text FROM links_v6 l "
                 "JOIN cards c ON c.source = l.source AND c.path = l.file ORDER BY c.seq, l.pos")
    conn.execute("DROP TABLE links_v6")


def m007_smaller_links(conn) -> None:
    """Links keyed by the linking card's seq instead of its path, target only when it is more
    than the name; exact keys in a table keyed by (key, seq), which needs no index for the
    lookup. The same rows in fewer bytes (the index stays under 3x the notes on CJK vaults);
    nothing is re-derived and no file is read."""
    _links_by_seq(conn)
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'exact_keys_key'").fetchone():
        for index in ("exact_keys_key", "exact_keys_seq"):
            conn.execute(f"DROP INDEX {index}")
        conn.execute("ALTER TABLE exact_keys RENAME TO exact_keys_v6")
        _run(conn, EXACT_KEYS_TABLE)
        conn.execute("INSERT INTO exact_keys (key, seq, strength) SELECT key, seq, max(strength) "
                     "FROM exact_keys_v6 GROUP BY key, seq ORDER BY key, seq")
        conn.execute("DROP TABLE exact_keys_v6")


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
    _run(conn, LIFELOG_SCHEMA)
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
    _run(conn, BRIEF_LOOKUPS)


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


MIGRATIONS = [m001_initial, m002_cjk_run_ends, m003_vectors, m004_note_fields, m005_text_once,
              m006_markdown_links, m007_smaller_links, m008_summary,
              m009_retrieval_log, m010_card_project, m011_summary_searched, m012_brief_lookups,
              m013_folder_stamps]
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


def migrate(conn) -> int:
    """Bring the schema up to date; returns the resulting version. Refuses (NewerSchema) an index
    whose schema is ahead of ours rather than read or write it with the wrong assumptions."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise NewerSchema(version)
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
