"""How many cores memsync spreads a waited-for job over (memsync.cores)."""

from __future__ import annotations

import pytest

from memsync import cores


@pytest.mark.parametrize(("value", "count"), [
    ("3", 3), (" 2 ", 2), ("4,2", 4),  # a nested list: its outer level, as OpenMP reads it
    ("", None), ("0", None), ("-1", None), ("abc", None), ("2.5", None),
])
def test_omp_num_threads_asks_for_a_count_only_when_it_is_one(monkeypatch, value, count):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert cores.from_environment() == count


def test_no_omp_num_threads_asks_for_nothing(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert cores.from_environment() is None
    assert cores.usable() >= 1
