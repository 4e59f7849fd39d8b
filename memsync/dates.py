"""Date handling for card metadata and `--as-of`. Pure: no I/O (today and now_iso read the clock)."""

from __future__ import annotations

import datetime as dt
import re

from .errors import BadArgument

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


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
    """Validate `--as-of YYYY-MM-DD`. A malformed date is an error, never 'no filter'."""
    if not _DAY.match(text or ""):
        raise BadArgument(f"--as-of expects a date as YYYY-MM-DD, got {text!r}")
    try:
        dt.date.fromisoformat(text)
    except ValueError as exc:
        raise BadArgument(f"--as-of {text!r} is not a real date ({exc})") from None
    return text


def today() -> str:
    return dt.date.today().isoformat()


def invalid_by(invalid_at: str | None, day: str) -> bool:
    """Whether a card marked `invalid_at` is no longer valid on `day`, compared by day.

    A mark that is not a date counts as already passed: someone marked the card, and the
    indexer reports the date as a problem. The SQL twin is `store.searchsql.VALID_ON`."""
    if not invalid_at:
        return False
    return not starts_with_day(invalid_at) or invalid_at[:10] <= day


def starts_with_day(text: str) -> bool:
    return bool(_DAY.match(text[:10]))


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
    except ValueError:
        return day
