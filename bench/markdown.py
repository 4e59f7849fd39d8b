"""Markdown for the benches' generated pages (RESULTS.md, the tables in the docs and README):
numbers, tables and the line that says where and when a run was made."""

from __future__ import annotations


def number(value, digits: int = 4) -> str:
    """A figure to `digits` places; a dash for one not measured."""
    return "–" if value is None else f"{value:.{digits}f}"


def percent(value) -> str:
    return "–" if value is None else f"{value:.1%}"


def table(headers: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def stamp(data: dict) -> str:
    """Where and when a result file's run was made (bench.machine.info)."""
    m = data["machine"]
    dirty = " (uncommitted changes)" if data.get("dirty") else ""
    return (f"_Run {data['date']} at commit `{data['commit']}`{dirty}; {m['cpu']}, {m['cores']} cores, "
            f"{m['memory_gib']} GiB; Python {data['python']}, SQLite {data['sqlite']}._")
