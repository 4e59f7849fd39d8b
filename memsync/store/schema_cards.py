"""Schema steps 1 to 7 (memsync.store.migrations runs them): the cards, their full-text tables,
vectors, links and exact keys, as each took its present layout."""

from __future__ import annotations

import json
import sys

from memsync import cjk
from memsync.store import fts


def run_script(conn, script: str) -> None:
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
    run_script(
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
    run_script(
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
    run_script(conn, SCHEMA_3)
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
    run_script(conn, LINKS_TABLE)
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
        run_script(conn, EXACT_KEYS_TABLE)
        conn.execute("INSERT INTO exact_keys (key, seq, strength) SELECT key, seq, max(strength) "
                     "FROM exact_keys_v6 GROUP BY key, seq ORDER BY key, seq")
        conn.execute("DROP TABLE exact_keys_v6")
