"""A query with something the secrets scanner flags, made safe to keep. Pure: text in, text out."""

from __future__ import annotations

# The shortest text any rule of memsync.secrets can flag without an `=`/`:` assignment or a
# PEM header is 14 characters without a space (`xoxb-` and nine more): a query with none is
# kept as it is without loading the scanner (it compiles its patterns; most queries are words).
_SHORTEST = 14
# The log holds log_cap entries; a query pasted whole (a page of text) would make each of them
# as large as that. What is kept of one is enough to tell which search it was.
QUERY_KEPT = 1000  # characters


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


def kept_query(text: str) -> str:
    """A query as the log and feedback keep it: redacted whole (a secret cut in two could slip
    past the scanner), then cut to QUERY_KEPT characters."""
    text = redacted(text)
    return text if len(text) <= QUERY_KEPT else text[:QUERY_KEPT] + "…"
