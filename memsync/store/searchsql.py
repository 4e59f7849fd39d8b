"""The SQL a search runs, built as text plus parameters. Pure: no sqlite3, no clock.

Each builder returns a `Statement`; `Index.run` executes one. The searchers (memsync.search,
memsync.semantic.hybrid) decide what to ask; this module is the one place the asking is
written, so a caller can also show what it would run without running it.
"""

import json
from collections.abc import Iterable
from typing import NamedTuple

from memsync import dates
from memsync.store.fields import fold_tag

_DATED = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'"
_ZONED = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T*[+-][0-9][0-9]:[0-9][0-9]'"


def came_by(column: str) -> str:
    """Whether a date column had come by the end of a day (two parameters: on_day): its own day
    is that day or earlier, or it is a time with a zone whose moment is before the day's end
    where the search runs. strftime('%s') reads the zone; NULL (a moment past year 9999 in UTC)
    has not come. The Python twin is dates.came_by."""
    return (f"(substr({column}, 1, 10) <= ? OR ({column} GLOB {_ZONED} "
            f"AND coalesce(CAST(strftime('%s', {column}) AS INTEGER) < ?, 0)))")


def seconds(column: str) -> str:
    """A date column as whole seconds since the epoch, to compare and order as moments whatever
    zone each was written in: a time with a zone by that zone, a day or a time without one as
    this machine's local time ('utc' reads the text as local; where that passes year 9999, as
    UTC), 0 for text that is no date. The Python twin is dates.seconds."""
    moment = f"CAST(strftime('%s', {column}) AS INTEGER)"
    return (f"(CASE WHEN NOT {opens_with_day(column)} THEN 0 WHEN {column} GLOB {_ZONED} "
            f"THEN coalesce({moment}, 0) "
            f"ELSE coalesce(CAST(strftime('%s', {column}, 'utc') AS INTEGER), {moment}, 0) END)")


def on_day(day: str) -> tuple[str, int]:
    """The parameters of came_by (and VALID_ON) for `day`."""
    return day, dates.day_ends(day)


def opens_with_day(column: str) -> str:
    """Whether a column's text opens with a day that exists (the Python twin is
    dates.starts_with_day). SQLite's date() takes 2026-02-30 as written; a '+0 days' makes it
    count the days, so a day that cannot be comes out as another (2026-03-02) or as NULL (a 13th
    month). Year 0000, which SQLite knows and Python does not, is no day either."""
    day = f"substr({column}, 1, 10)"
    return (f"({column} GLOB {_DATED} AND substr({column}, 1, 4) <> '0000' "
            f"AND date({day}, '+0 days') IS {day})")


# A card is valid on a day (parameters: on_day) unless its invalid_at has come; an invalid_at
# that is not a date counts as come (the Python twin is dates.invalid_by).
VALID_ON = (f"(c.invalid_at IS NULL OR ({opens_with_day('c.invalid_at')} "
            f"AND NOT {came_by('c.invalid_at')}))")
# What ranking reads of every candidate (validity, in-links, the path as a tie-break) and a hit
# shows besides its snippet. Not the body: only the hits shown need it (`bodies`), and a body is
# most of a card's bytes (at 100,000 cards, 0.5 -> 0.16 ms for a tier's 55 candidates, warm).
HIT_COLUMNS = "c.seq, c.id, c.source, c.path, c.title, c.kind, c.invalid_at, c.inlinks, c.summary"


class Statement(NamedTuple):
    sql: str
    params: tuple[object, ...] = ()


class Where(NamedTuple):
    """Filter clauses over `cards c`, each starting with " AND ", to follow a WHERE."""

    sql: str = ""
    params: tuple[object, ...] = ()


def filters(*, today: str, kind: str | None = None, source: str | None = None,
            tag: str | None = None, as_of: str | None = None,
            include_invalid: bool = False) -> Where:
    """The clauses of a search's filters. `as_of` is checked here (an empty date is an error,
    never "no filter"); `today` decides validity when there is no `as_of`."""
    sql: list[str] = []
    args: list[object] = []
    if kind:
        sql.append("c.kind = ?")
        args.append(kind)
    if source:
        sql.append("c.source = ?")
        args.append(source)
    if tag:  # frontmatter or inline, `#x` = `x`, a nested tag's parents included, any case
        sql.append("EXISTS (SELECT 1 FROM json_each(c.tag_set) WHERE json_each.value = ?)")
        args.append(fold_tag(tag))
    if as_of is not None:
        day = on_day(dates.parse_as_of(as_of))
        sql.append(f"(c.created IS NULL OR {came_by('c.created')})")
        sql.append(VALID_ON)
        args += [*day, *day]
    elif not include_invalid:
        sql.append(VALID_ON)
        args += on_day(today)
    return Where("".join(f" AND {s}" for s in sql), tuple(args))


def _ids(values: Iterable[int]) -> str:
    return json.dumps(list(values))


def bm25(table: str, weights: tuple[float, ...], expr: str, window: int,
         since: int = 0, before: int = 0) -> Statement:
    """(rowid, score) of the best `window` rows of an FTS table for a MATCH expression, best
    first (FTS5's bm25 is lower for better: the score is its negation). `since` / `before`:
    only rows from that rowid on / below it (memsync.search.bound)."""
    ranked = ", ".join(f"{w:g}" for w in weights)
    where, params = "", [expr]  # type: tuple[str, list[object]]
    if since:
        where, params = where + " AND rowid >= ?", [*params, since]
    if before:
        where, params = where + " AND rowid < ?", [*params, before]
    return Statement(
        f"SELECT rowid, -bm25({table}, {ranked}) FROM {table} WHERE {table} MATCH ?{where} "
        f"ORDER BY bm25({table}, {ranked}) LIMIT ?", (*params, window))


def newest(expr: str, limit: int) -> Statement:
    """(how many, the oldest rowid) of the `limit` newest cards matching a MATCH expression.
    FTS5 walks a match in rowid order, so this costs `limit` rows at most."""
    return Statement("SELECT count(*), min(rowid) FROM (SELECT rowid FROM cards_fts WHERE cards_fts "
                     "MATCH ? ORDER BY rowid DESC LIMIT ?)", (expr, limit))


def bm25_columns(table: str, columns: tuple[str, ...], expr: str, window: int) -> Statement:
    """(rowid, the bm25 of each column alone...) of the best `window` rows of an FTS table, by
    its bm25 with every column weighted 1, each score negated (larger is better). Ordered by
    bm25() itself, not FTS5's `rank`: the same order, but `rank` runs a second statement inside
    FTS5 (names_fts at 100,000 cards: 0.28 → 0.20 ms a query)."""
    each = ", ".join(f"-bm25({table}, {', '.join('1' if c == col else '0' for c in columns)})"
                     for col in columns)
    return Statement(f"SELECT rowid, {each} FROM {table} WHERE {table} MATCH ? ORDER BY bm25({table}) LIMIT ?",
                     (expr, window))


def names_hold(expr: str, seqs: Iterable[int]) -> Statement:
    """The seqs among `seqs` whose names (title, aliases, file name: names_fts.title) hold all
    of a MATCH expression. `+rowid`: the list filters one pass over the match; a bare rowid
    would be handed to FTS5 as one lookup per listed card (80 seqs: 1 ms, filtered: 0.03 ms,
    as a name's doclist is short)."""
    return Statement(
        "SELECT rowid FROM names_fts WHERE names_fts MATCH ? "
        "AND +rowid IN (SELECT value FROM json_each(?))", (f"title : ({expr})", _ids(seqs)))


def matches_upto(expr: str, limit: int) -> Statement:
    """How many cards match a MATCH expression, counted no further than `limit`: bounded cost,
    however common the words."""
    return Statement("SELECT count(*) FROM (SELECT 1 FROM cards_fts WHERE cards_fts MATCH ? LIMIT ?)",
                     (expr, limit))


def count_matching(expr: str, where: Where, limit: int) -> Statement:
    """How many cards that pass the filters match a MATCH expression, counted no further than
    `limit`."""
    return Statement(
        "SELECT count(*) FROM (SELECT 1 FROM cards_fts JOIN cards c ON c.seq = cards_fts.rowid "
        f"WHERE cards_fts MATCH ?{where.sql} LIMIT ?)", (expr, *where.params, limit))


def averages() -> Statement:
    """FTS5's averages record of cards_fts (rowid 1 of its data table): the row count and the
    token count of each column, kept up to date by FTS5 itself."""
    return Statement("SELECT block FROM cards_fts_data WHERE id = 1")


def row_count(rows: list) -> int:
    """The number of cards from the averages record (its first varint, in SQLite's varint
    format: 7 bits a byte, big-endian, a 9th byte of 8 bits); 0 when there is none."""
    block = rows[0][0] if rows and rows[0][0] else b""
    value = 0
    for i, byte in enumerate(block[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return value


def matching(expr: str, seqs: Iterable[int], prefix: bool = False) -> Statement:
    """The seqs among `seqs` whose cards match a MATCH expression. FTS5 looks each listed card up
    on its own: cheap for whole words, but a prefix is expanded again for every card (60 cards,
    `"disk" *`, 100,000 cards: 149 ms). With `prefix`, the list filters one pass over the match
    instead (`+rowid`: 7 ms)."""
    rowid = "+rowid" if prefix else "rowid"
    return Statement(
        f"SELECT rowid FROM cards_fts WHERE cards_fts MATCH ? "
        f"AND {rowid} IN (SELECT value FROM json_each(?))", (expr, _ids(seqs)))


def hit_rows(seqs: Iterable[int], where: Where) -> Statement:
    """The rows (HIT_COLUMNS) of the cards at `seqs` that pass the filters."""
    return Statement(
        f"SELECT {HIT_COLUMNS} FROM cards c "
        f"WHERE c.seq IN (SELECT value FROM json_each(?)){where.sql}", (_ids(seqs), *where.params))


def bodies(seqs: Iterable[int]) -> Statement:
    """(seq, body) of the cards at `seqs`: what the snippets of the hits shown are cut from."""
    return Statement("SELECT seq, body FROM cards WHERE seq IN (SELECT value FROM json_each(?))", (_ids(seqs),))


def exact(folded: str) -> Statement:
    """(seq, strength) of the cards with a name field equal to `folded` (memsync.store.fields)."""
    return Statement("SELECT seq, max(strength) FROM exact_keys WHERE key = ? GROUP BY seq", (folded,))


def has_kind(kind: str) -> Statement:
    return Statement("SELECT 1 FROM cards WHERE kind = ? LIMIT 1", (kind,))


def kinds() -> Statement:
    return Statement("SELECT DISTINCT kind FROM cards WHERE kind IS NOT NULL ORDER BY kind")


def has_tag(tag: str) -> Statement:
    return Statement("SELECT 1 FROM cards c, json_each(c.tag_set) WHERE json_each.value = ? LIMIT 1",
                     (fold_tag(tag),))


# --- the hybrid searcher: cards found by meaning, looked up by id ----------------------------

ID_ROW_COLUMNS = "c.id, c.source, c.path, c.title, c.kind, c.body, c.invalid_at, c.summary"


def passing(ids: Iterable[int], where: Where) -> Statement:
    """The ids among `ids` whose cards pass the filters."""
    return Statement(f"SELECT c.id FROM cards c WHERE c.id IN (SELECT value FROM json_each(?)){where.sql}",
                     (_ids(ids), *where.params))


def id_rows(ids: Iterable[int], where: Where) -> Statement:
    """The rows (ID_ROW_COLUMNS) of the cards with these ids that pass the filters."""
    return Statement(f"SELECT {ID_ROW_COLUMNS} FROM cards c "
                     f"WHERE c.id IN (SELECT value FROM json_each(?)){where.sql}", (_ids(ids), *where.params))


def body(card_id: int) -> Statement:
    """(summary, body) of one card: what a hit shows."""
    return Statement("SELECT summary, body FROM cards WHERE id = ?", (card_id,))
