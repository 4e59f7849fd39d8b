"""Generated text inside a hand-written page: what stands between a page's two marker comments
(docs/benchmarks.md, README.md) is replaced, and everything around them is left as written."""

from __future__ import annotations

from pathlib import Path


def replace(page: Path, start: str, end: str, body: str) -> None:
    """Put `body` between the markers (nothing happens when the page lacks them)."""
    text = page.read_text(encoding="utf-8")
    if start not in text or end not in text:
        return
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    page.write_text(f"{head}{start}\n{body}\n{end}{tail}", encoding="utf-8")


def shown(page: Path, start: str, end: str) -> str:
    """What stands between the markers now ("" without them)."""
    text = page.read_text(encoding="utf-8")
    return text.split(start, 1)[1].split(end, 1)[0].strip() if start in text else ""
