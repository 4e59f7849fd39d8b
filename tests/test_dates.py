"""The index's own timestamps, read without datetime.strptime."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync import dates

ZONES = st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))


@given(st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2199, 12, 31)), ZONES)
def test_a_stamp_reads_as_strptime_reads_it(when, zone):
    stamp = when.replace(microsecond=0, tzinfo=zone).strftime("%Y-%m-%dT%H:%M:%S%z")
    assert dates.stamp_seconds(stamp) == dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S%z").timestamp()
    with_colon = stamp[:-2] + ":" + stamp[-2:]
    assert dates.stamp_seconds(with_colon) == dates.stamp_seconds(stamp)


@pytest.mark.parametrize("bad", ["", "2026-12-02", "2026-12-02T16:20:54", "2026-12-02 16:20:54+0000",
                                 "2026-13-02T16:20:54+0000", "2026-12-02T16:20:54+0000 extra"])
def test_anything_else_is_a_value_error(bad):
    with pytest.raises(ValueError):
        dates.stamp_seconds(bad)
