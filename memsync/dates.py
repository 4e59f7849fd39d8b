"""Date handling for card metadata and `--as-of`. Pure: no I/O (today and now_iso read the clock)."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

from .errors import BadArgument

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ASCII_DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")  # \d also takes ٢ or ２, which no parser reads


def normalize(value: object) -> str | None:
    """Turn a YAML date/datetime or a string into ISO 8601 text; None if it is not a date.

    YAML gives `date`/`datetime` objects for unquoted values and strings for quoted ones;
    both must compare the same way, so everything becomes ISO text.
    """
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        text = value.strip()
        if _DAY.match(text):
            try:
                return dt.date.fromisoformat(text).isoformat()
            except ValueError:
                return None
        try:
            return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
        except ValueError:
            pass
        try:
            return dt.date.fromisoformat(text[:10]).isoformat() if len(text) >= 10 else None
        except ValueError:
            return None
    return None


def day_of(iso: str | None) -> str | None:
    """The calendar day of a stored ISO timestamp, in the timezone it was written in."""
    return iso[:10] if iso else None


def parse_as_of(text: str) -> str:
    """Validate `--as-of YYYY-MM-DD`. A malformed date is an error, never 'no filter'. Digits
    typed in an input method's full-width mode (`２０２６－０３－０１`) are read as ASCII: they
    were refused as "not a real date", which they are."""
    day = unicodedata.normalize("NFKC", text or "")
    if not _ASCII_DAY.match(day):
        raise BadArgument(f"--as-of expects a date as YYYY-MM-DD, got {text!r}")
    try:
        dt.date.fromisoformat(day)
    except ValueError as exc:
        raise BadArgument(f"--as-of {text!r} is not a real date ({exc})") from None
    return day


def today() -> str:
    return dt.date.today().isoformat()


def invalid_by(invalid_at: str | None, day: str) -> bool:
    """Whether a card marked `invalid_at` is no longer valid on `day` (came_by).

    A mark that is not a date counts as already passed: someone marked the card, and the
    indexer reports the date as a problem. The SQL twin is `store.searchsql.VALID_ON`."""
    if not invalid_at:
        return False
    return not starts_with_day(invalid_at) or came_by(invalid_at, day)


def came_by(iso: str, day: str) -> bool:
    """Whether a card's date had come by the end of `day` here: its own day is `day` or earlier,
    or it is a time with a zone whose moment is before this zone's end of `day`. A supersede
    stamped 02:00 on the 7th at +14:00 is 12:00 on the 6th in UTC: there the 6th has it, though
    by its written day it would come only the next day. The SQL twin is
    `store.searchsql.came_by`."""
    if iso[:10] <= day:
        return True
    moment = zoned_seconds(iso)
    return moment is not None and moment < day_ends(day)


def first_day(iso: str) -> str:
    """The first day here on which `iso` has come (came_by): its own day, or the day before
    where its moment falls earlier in this zone."""
    moment = zoned_seconds(iso)
    if moment is None:
        return iso[:10]
    try:
        here = dt.datetime.fromtimestamp(moment).date().isoformat()
    except (OverflowError, ValueError, OSError):  # year 1 or 9999 seen from another zone
        return iso[:10]
    return min(here, iso[:10])


_ZONED = re.compile(r"^\d{4}-\d{2}-\d{2}T.*[+-]\d{2}:\d{2}$")


def zoned_seconds(iso: str) -> float | None:
    """Seconds since the epoch of an ISO time that names its zone (as the index keeps card
    dates: `+08:00`, UTC as `+00:00`); None for a day, a time without zone, or no time."""
    if not _ZONED.match(iso):
        return None
    try:
        return dt.datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


def seconds(iso: str) -> float:
    """Seconds since the epoch of an ISO date or time, to order and compare card dates as moments
    whatever zone each was written in (a day, or a time without zone, is local); 0 for text that
    is none. Never raises: 0001-01-01 or 9999-12-31T23:59:59 out of range here count as UTC."""
    try:
        when = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = dt.datetime.fromisoformat(iso[:10])
        except ValueError:
            return 0.0
    try:
        return (when if when.tzinfo else when.astimezone()).timestamp()
    except (OverflowError, ValueError):  # year 1 or 9999, which this zone takes out of range
        return (when - dt.datetime(1970, 1, 1)).total_seconds()


def here(iso: str) -> str:
    """A time the index keeps with its zone (now_iso: a search, a read), as it was on this
    machine's clock, without the zone: YYYY-MM-DDTHH:MM:SS. Times written in other zones (a
    laptop that travelled, a process with another TZ) then read in one order. Anything else
    comes back as written, cut to that length."""
    moment = zoned_seconds(iso)
    if moment is None:
        return iso[:19]
    try:
        return dt.datetime.fromtimestamp(moment).isoformat(timespec="seconds")
    except (OverflowError, ValueError, OSError):  # year 1 or 9999 seen from another zone
        return iso[:19]


_EPOCH_DAY = dt.date(1970, 1, 1)


def day_ends(day: str) -> int:
    """Seconds since the epoch of the midnight, in this machine's zone, that ends `day`."""
    after = dt.date.fromisoformat(day) - _EPOCH_DAY + dt.timedelta(days=1)
    try:
        midnight = dt.datetime(1970, 1, 1) + after
        ends = midnight.astimezone().timestamp()
        if dt.datetime.fromtimestamp(ends) < midnight:  # a clock change skips midnight here
            ends = midnight.replace(fold=1).astimezone().timestamp()  # (Havana, Santiago)
        return int(ends)
    except (OverflowError, ValueError, OSError):  # past year 9999 or before year 1 here: as UTC
        return after.days * 86400


def starts_with_day(text: str) -> bool:
    """Whether `text` opens with a day that exists: `2026-02-30` or a 13th month is no day, so an
    invalid_at written so counts as not a date rather than by its text's order (the SQL twin is
    `store.searchsql.opens_with_day`)."""
    if not _DAY.match(text[:10]):
        return False
    try:
        dt.date.fromisoformat(text[:10])
    except ValueError:
        return False
    return True


_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)([+-])(\d\d):?(\d\d)")


def stamp_seconds(stamp: str) -> float:
    """Seconds since the epoch of a stamp the index keeps (time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    or with a colon in its offset). Read by hand: datetime.strptime costs a `memsync search`
    process 4 ms the first time (it imports _strptime and builds its locale patterns).
    ValueError when the stamp is not one."""
    m = _STAMP.fullmatch(stamp)
    if m is None:
        raise ValueError(f"not a stamp: {stamp!r}")
    year, month, day, hour, minute, second, sign, off_h, off_m = m.groups()
    offset = dt.timedelta(hours=int(off_h), minutes=int(off_m))
    zone = dt.timezone(offset if sign == "+" else -offset)
    return dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                       tzinfo=zone).timestamp()


def now_iso() -> str:
    return dt.datetime.now().astimezone().replace(microsecond=0).isoformat()


def day_before(iso: str) -> str:
    """The last day on which a card that became invalid at `iso` was still the current fact."""
    day = day_of(iso) or ""
    try:
        return (dt.date.fromisoformat(day) - dt.timedelta(days=1)).isoformat()
    except (ValueError, OverflowError):  # not a day, or 0001-01-01: no day before it
        return day
