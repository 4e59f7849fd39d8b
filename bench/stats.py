"""Order statistics shared by the benches."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The value at quantile `q` of `values`: the nearest rank, no interpolation."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
