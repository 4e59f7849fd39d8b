"""Byte counts as people read them. Caps are set in MiB (8 MiB = 8 * 1024 * 1024 bytes), so sizes
are shown in MiB too: a size and the cap it is measured against then compare as they read.
Pure: numbers in, text out."""

from __future__ import annotations

MIB = 1024 * 1024


def mib(size: int) -> str:
    """`size` in MiB with one decimal, a whole number without it: 8.4 MiB, 8 MiB."""
    return f"{size / MIB:.1f}".removesuffix(".0") + " MiB"


def size_and_cap(size: int, cap: int) -> tuple[str, str]:
    """`size` and `cap` for one message; in bytes when one decimal of MiB would show a size
    just over the cap as equal to it."""
    shown, limit = mib(size), mib(cap)
    if shown == limit:
        return f"{size:,} bytes", f"{cap:,} bytes"
    return shown, limit
