"""A query with something the secrets scanner flags, made safe to keep. Pure: text in, text out."""

from __future__ import annotations

# The shortest text any rule of memsync.secrets can flag without an `=`/`:` assignment or a
# PEM header is 14 characters without a space (`xoxb-` and nine more): a query with none is
# kept as it is without loading the scanner (it compiles its patterns; most queries are words).
_SHORTEST = 14


def _may_hold_secret(text: str) -> bool:
    return ("=" in text or ":" in text or "：" in text or "-----BEGIN" in text
            or any(len(word) >= _SHORTEST for word in text.split()))


def redacted(text: str) -> str:
    """`text` with each flagged span replaced by `[redacted CLASS]` (memsync.secrets)."""
    if not _may_hold_secret(text):
        return text
    from memsync import secrets

    out, at = [], 0
    for finding in secrets.scan_text(text, "query"):
        out += [text[at:finding.start], f"[redacted {finding.kind}]"]
        at = finding.end
    return "".join(out) + text[at:]
