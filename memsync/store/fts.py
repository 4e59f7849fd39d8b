"""The full-text tables, and the one place their rows are written and deleted.

Three FTS5 tables over the pre-tokenized fields of memsync.store.fields (rowid = cards.seq in each):
- cards_fts holds every field, so one MATCH decides whether a card has every query word
  somewhere (the tiers); its bm25() scores the card as a whole.
- names_fts (title, h1) and fields_fts (headings, tags, links) hold the short fields only.
  Their bm25() counts document frequencies and lengths over those fields alone, so a word
  common in bodies still weighs in a title, and a long body (or many headings) does not
  dilute a title match: the two faults of one whole-row bm25 (memsync.search.lexical).

The text is stored once. cards_fts is contentless: a copy of every body's token stream made
the index 4.5x the vault's bytes. Nothing reads its text back (snippets are cut from
cards.body), but FTS5 must be handed a row's text again to delete it, so that text must be
reproducible: the short fields' tokens are kept in card_terms (names_fts and fields_fts read
theirs from there, as external content), and the body's are cjk.to_index_text(cards.body),
made again. A change to what to_index_text returns therefore needs a migration that rebuilds
these tables (as m002 did), or deletes would remove the wrong tokens.
"""

from __future__ import annotations

from memsync import cjk
from memsync.sizes import MIB
from memsync.store import journal

# porter: English words are stemmed on both sides (requests = request); CJK bigrams and
# identifiers pass through. Chosen on the retrieval bench (bench/RESULTS.md). ascii: the text is
# memsync.cjk's token stream, already folded, so splitting at its spaces is all that is left to
# do; under porter, unicode61 did the same in a fifth more time (10,000 cards' streams into one
# table, median of 9 alternating rounds: 0.81 s against 0.98 s). Its tables stay in indexes made
# before, until a rebuild: they hold the same tokens, tests/test_fts_tokenizer.py.
TOKENIZE = "porter ascii"
SHORT = ("title", "h1", "headings", "tags", "links")
FTS_COLUMNS = {
    "cards_fts": (*SHORT, "body"),
    "names_fts": ("title", "h1"),
    "fields_fts": ("headings", "tags", "links"),
}
# title: title, aliases, file name; h1: top-level headings; headings: all others; tags:
# frontmatter and inline tags; links: anchor text of the wikilinks pointing at the card
# (memsync.store.backlinks); body: the Markdown body.
CONTENT = {"cards_fts": "content = ''",
           "names_fts": "content = 'card_terms', content_rowid = 'seq'",
           "fields_fts": "content = 'card_terms', content_rowid = 'seq'"}
TERMS_TABLE = ("CREATE TABLE card_terms (seq INTEGER PRIMARY KEY, "
               + ", ".join(f"{c} TEXT NOT NULL" for c in SHORT) + ")")


def tables(tokenize: str = TOKENIZE) -> list[str]:
    return [TERMS_TABLE] + [
        f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(columns)}, {CONTENT[table]}, "
        f"tokenize = '{tokenize}')" for table, columns in FTS_COLUMNS.items()]


def recreate(conn, tokenize: str = TOKENIZE) -> None:
    """Empty the FTS tables at once: FTS5 deletes row by row, dropping one is instant."""
    for table in (*FTS_COLUMNS, "card_terms"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    for sql in tables(tokenize):
        conn.execute(sql)


def _statement(table: str, command: bool) -> str:
    columns = ", ".join(FTS_COLUMNS[table])
    marks = ", ".join("?" * len(FTS_COLUMNS[table]))
    if command:
        return f"INSERT INTO {table} ({table}, rowid, {columns}) VALUES (?, ?, {marks})"
    return f"INSERT INTO {table} (rowid, {columns}) VALUES (?, {marks})"


# Made once: a rebuild writes three rows a card, and building each statement's text again
# was a tenth of the writer's own Python time (cProfile, 10,000 cards).
_INSERTS = {table: _statement(table, False) for table in FTS_COLUMNS}
_COMMANDS = {table: _statement(table, True) for table in FTS_COLUMNS}
_TERMS_INSERT = f"INSERT INTO card_terms (seq, {', '.join(SHORT)}) VALUES (?, ?, ?, ?, ?, ?)"


def _write(conn, command: str | None, seq: int, terms: dict, body_tokens: str) -> None:
    """Insert (command None) or delete ('delete') the FTS rows of one card."""
    values = {**terms, "body": body_tokens}
    for table, columns in FTS_COLUMNS.items():
        row = [values[c] for c in columns]
        if command:
            conn.execute(_COMMANDS[table], (command, seq, *row))
        else:
            conn.execute(_INSERTS[table], (seq, *row))


class Waiting:
    """The full-text rows of the cards written in one transaction, held back until its end, when
    the links pointing at each card are known (memsync.store.backlinks). Written then, a card's
    rows hold their links field from the start. Written at once, each linked card's rows were
    written bare, then deleted and written again, its body tokenized a second time: a rebuild
    of 10,000 notes with three links each took 15.5 s, against 5.6 s without the links (now
    6.0 s), and a first index of the Obsidian Help vaults (865 notes, about 11 links each)
    1.7-1.9 s (now 0.9-1.1 s). Links from a later transaction to a card written in an earlier
    one still write its rows again.

    A card's short fields wait in card_terms, as always; its body's token stream waits in a
    TEMP table: private to the connection, never in the index file, and rolled back with the
    transaction."""

    def __init__(self) -> None:
        self.seqs: set[int] = set()

    def __contains__(self, seq: object) -> bool:
        return seq in self.seqs

    def hold(self, conn, seq: int, body_tokens: str) -> None:
        if not self.seqs:  # made here, not when the connection opens: a search never needs it
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS fts_waiting "
                         "(seq INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        conn.execute("INSERT INTO temp.fts_waiting (seq, body) VALUES (?, ?)", (seq, body_tokens))
        self.seqs.add(seq)

    def drop(self, conn, seq: int) -> None:
        """A waiting card deleted before its rows were written: they never will be."""
        conn.execute("DELETE FROM temp.fts_waiting WHERE seq = ?", (seq,))
        self.seqs.discard(seq)

    def write(self, conn) -> None:
        """Write the rows of every waiting card, with its short fields as card_terms holds them
        now, in seq order (as they would have been written one by one)."""
        if not self.seqs:
            return
        for table, columns in FTS_COLUMNS.items():
            values = ", ".join(("w." if c == "body" else "t.") + c for c in columns)
            conn.execute(f"INSERT INTO {table} (rowid, {', '.join(columns)}) SELECT w.seq, {values} "
                         "FROM temp.fts_waiting w CROSS JOIN card_terms t ON t.seq = w.seq "
                         "ORDER BY w.seq")
        conn.execute("DELETE FROM temp.fts_waiting")
        self.seqs.clear()

    def forget(self) -> None:
        """After a rollback, which took the waiting rows with it."""
        self.seqs.clear()


def insert(conn, seq: int, terms: dict, body_tokens: str, waiting: Waiting | None = None) -> None:
    """`terms`: the short fields' token streams by column name; `body_tokens`: the body's (str,
    or UTF-8 bytes, which FTS5 reads as the same text). With `waiting`, the full-text rows wait
    there for the end of the transaction."""
    conn.execute(_TERMS_INSERT, (seq, *(terms[c] for c in SHORT)))
    if waiting is None:
        _write(conn, None, seq, terms, body_tokens)
    else:
        waiting.hold(conn, seq, body_tokens)


def _terms(conn, seq: int) -> dict | None:
    row = conn.execute(f"SELECT {', '.join(SHORT)} FROM card_terms WHERE seq = ?", (seq,)).fetchone()
    return dict(zip(SHORT, row, strict=True)) if row else None


def delete(conn, seq: int, body: str, waiting: Waiting | None = None) -> None:
    """Drop the FTS rows of the card at `seq`, whose stored body is `body` (or its waiting ones)."""
    terms = _terms(conn, seq)
    if terms is None:
        return
    if waiting is not None and seq in waiting:
        waiting.drop(conn, seq)
    else:
        _write(conn, "delete", seq, terms, cjk.to_index_text(body))
    conn.execute("DELETE FROM card_terms WHERE seq = ?", (seq,))


def set_links(conn, seq: int, tokens: str, body: str, waiting: Waiting | None = None) -> bool:
    """Replace the links field of the card at `seq` (FTS5 cannot update a contentless row: its
    rows are deleted and written again, unless they are still waiting). Returns whether rows
    were written again."""
    terms = _terms(conn, seq)
    if terms is None:
        return False
    conn.execute("UPDATE card_terms SET links = ? WHERE seq = ?", (tokens, seq))
    if waiting is not None and seq in waiting:
        return False
    body_tokens = cjk.to_index_text(body)
    _write(conn, "delete", seq, terms, body_tokens)
    _write(conn, None, seq, {**terms, "links": tokens}, body_tokens)
    return True


# FTS5's own defaults: a level's segments are merged once it has this many (AUTOMERGE, as it goes;
# CRISISMERGE, at once, even with automerge off); new terms are gathered in a hash of this many
# bytes, then written out as one segment.
AUTOMERGE = 4
CRISISMERGE = 16
HASH_BYTES = MIB
# The crisis limit of a bulk load. Every segment a load writes is merged at its end anyway, and
# with FTS5's 16 a load merged each 16 of them on the way as well: at 100,000 cards of memsync's
# test vault, 80 of the 88 segments the load wrote, nearly the whole index written twice (the
# rebuild took 40.7 s against 42.4 s, medians of 3 alternating runs). FTS5 caps an index at 2,000
# segments: 500 at one level leaves room for the few a larger load merges into the level above.
BULK_CRISISMERGE = 500
# The hash of a bulk load (a rebuild). Each segment FTS5 writes out is merged again at the end,
# so fewer, larger ones save work: at 100,000 cards of memsync's own test vault, the full-text
# load took 16.1 s with 4 MiB against 23.1 s with 1 MiB. A load that fits in one hash is written
# as one segment and nothing is left to merge (10,000 cards, 22 MB of files: 0.93 s against
# 1.79 s). A CJK-heavy note needs about its own size in hash, so a load is held whole up to
# WHOLE_LOAD_HASH_BYTES; larger ones would cost their size in memory (a 32 MiB hash raised a
# 100,000-card rebuild's peak RSS from 197 to 295 MiB). One too large for that is gathered in
# parts of PARTED_HASH_BYTES: half as many segments as with 4 MiB make the merge at its end,
# which one core does while the other idles, 0.3-0.7 s shorter at 100,000 cards (1.46-1.53
# against 1.66-1.78 s for the bodies' table alone), for 14 MiB more at the peak (219 against
# 205 MiB; 16 MiB saved little more for 45). A lean index (a watcher's) keeps BULK_HASH_BYTES.
BULK_HASH_BYTES = 4 * MIB
PARTED_HASH_BYTES = 8 * MIB
WHOLE_LOAD_HASH_BYTES = 32 * MIB


def bulk_hash_bytes(load_bytes: int, whole_up_to: int = WHOLE_LOAD_HASH_BYTES) -> int:
    """The hash for loading files of `load_bytes` bytes in all: the whole load (with a quarter
    to spare) where that is at most `whole_up_to`, else PARTED_HASH_BYTES, or `whole_up_to`
    where that is less (a lean index's cap), but never less than BULK_HASH_BYTES."""
    whole = load_bytes + load_bytes // 4
    if whole <= whole_up_to:
        return max(whole, BULK_HASH_BYTES)
    return max(BULK_HASH_BYTES, min(PARTED_HASH_BYTES, whole_up_to))


def _configure(conn, setting: str, value: int) -> None:
    for table in FTS_COLUMNS:
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('{setting}', {value})")


# meta key, set while a bulk load of many transactions has FTS5's merges deferred
# (memsync.store.index.Index.carrying_links)
DEFERRED = "merges_deferred"
# meta: when a first index of many transactions began, until a whole reconcile or rebuild ends
# (Index.mark_synced). Killed before then, it leaves an index that holds only some of the files
# and says nothing of it: stats, search and doctor say so while this mark stands. An upgrade
# that empties the full text sets it too (memsync.store.schema_scripts).
UNFINISHED = "first_index_unfinished"


def defer_merges(conn, load_bytes: int = 0, whole_up_to: int = WHOLE_LOAD_HASH_BYTES) -> None:
    """For a bulk load of files of `load_bytes` bytes (a rebuild, a first index: one transaction;
    a larger load: many): FTS5 stops merging segments as it goes, which rewrote each row several
    times over (nor merges a level until it holds BULK_CRISISMERGE segments), and gathers terms
    in a larger hash (bulk_hash_bytes, which holds a load whole up to `whole_up_to` bytes);
    merge_all() then merges once. The settings are stored in the tables: inside one transaction
    they commit or roll back with the load (a killed rebuild leaves the old tables and their
    settings); across many, the load marks them (DEFERRED)."""
    _configure(conn, "automerge", 0)
    _configure(conn, "crisismerge", BULK_CRISISMERGE)
    _configure(conn, "hashsize", bulk_hash_bytes(load_bytes, whole_up_to))


def defer_merges_marked(conn) -> None:
    """defer_merges() for a bulk load of many transactions, marked in meta (DEFERRED) until
    end_deferral(), so that one which ends early is found and finished later."""
    defer_merges(conn)
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (DEFERRED,))


def end_deferral(conn) -> None:
    """The end of defer_merges_marked(): merge_all(), and the mark cleared."""
    merge_all(conn)
    conn.execute("DELETE FROM meta WHERE key = ?", (DEFERRED,))


def merge(conn) -> bool:
    """Each full-text index merged into one segment; returns whether cards_fts, the one that holds
    the bodies, was one already. FTS5 counts a merge that did work as two changes or more, and
    writes out its pending rows at a savepoint: first, so that they are not counted."""
    conn.execute("SAVEPOINT flush")
    conn.execute("RELEASE flush")
    was_one = False
    for table in FTS_COLUMNS:
        before = conn.total_changes
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
        if table == "cards_fts":
            was_one = conn.total_changes - before < 2
    return was_one


# meta key: a bulk load left its full-text rows in one segment at FTS5's lowest level. Each later
# save adds two small segments there (its delete and its insert of one rowid are flushed apart),
# and at CRISISMERGE of them FTS5 merges the whole level inline, the load's segment with it: on
# the 8th save after a 10,000-card first index, one save took 0.37 s against 2 ms for the
# others. An `optimize` that merges writes its segment a level up, out of their way; one that
# finds a single segment leaves it where it is. So the watcher merges it up when idle, in
# slices (settle_step), once saves have put segments beside it. The value says whether that
# merge has begun ('merging') or waits for them ('waiting').
UNSETTLED = "segments_unsettled"
USERMERGE = 4  # FTS5's default: the fewest segments of a level its 'merge' command takes
SETTLE_PAGES = 256  # a slice of settle_step: about 20 ms at 10,000 cards


def merge_all(conn) -> None:
    """merge(), and FTS5's defaults again (after defer_merges): merging as it goes, and a small
    hash, since the settings outlive the load and a watcher's later writes are small. A load
    that was one segment already is marked UNSETTLED."""
    if merge(conn):
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, 'waiting')", (UNSETTLED,))
    else:
        conn.execute("DELETE FROM meta WHERE key = ?", (UNSETTLED,))
    _configure(conn, "automerge", AUTOMERGE)
    _configure(conn, "crisismerge", CRISISMERGE)
    _configure(conn, "hashsize", HASH_BYTES)


def settle_step(conn, pages: int = SETTLE_PAGES) -> bool:
    """One slice (about `pages` pages written) of FTS5's incremental merge in each full-text
    index, of a level that holds two segments or more; returns whether there was one to do."""
    merged = False
    for table in FTS_COLUMNS:
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('usermerge', 2)")
        before = conn.total_changes
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', {pages})")
        merged |= conn.total_changes - before >= 2
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('usermerge', {USERMERGE})")
    return merged


def sparse(conn) -> tuple[int, int] | None:
    """(free pages, pages) when a tenth of the file or more is free pages, else None."""
    pages, free = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count"))
    return (free, pages) if free * 10 >= pages and pages >= 64 else None


def compact(conn, page_size: int | None = None) -> bool:
    """Shrink the file after bulk work. FTS5 merges its segments by writing new ones and freeing
    the old pages, and a rebuild or first index of a linked vault also rewrites each linked
    card's rows once its in-links are known: a quarter to a half of the file can end up free.
    Merge each full-text index into one segment, then VACUUM, and empty the WAL it went
    through. Outside any transaction; writers wait meanwhile (the busy timeout).

    With `page_size`, the VACUUM also rewrites the file in pages of that size, which only
    works outside WAL mode, so only when no other connection has the file open; returns
    whether it did."""
    merge(conn)
    if page_size and journal.leave_wal(conn):
        conn.execute(f"PRAGMA page_size = {page_size}")
        conn.execute("VACUUM")  # through a rollback journal: there is no WAL to empty
        journal.back_to_wal(conn)
        return True
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return False

