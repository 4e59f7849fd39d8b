"""Spot text that looks like a credential. Pure: text in, findings out.

This is a reminder, not a security boundary. It leans towards missing a secret rather than
crying wolf: warnings that fire on every mention of `~/.ssh/id_ed25519` or "password: see the
previous note" teach people to ignore them. A finding names the class and where it sits, never
the matched text, so a warning does not copy the secret into results and logs a second time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (class, pattern, group holding the secret). Boundaries use explicit look-arounds rather than
# \b because \b treats CJK characters as word characters ("密钥AKIA..." must still match).
_EDGE = r"(?<![A-Za-z0-9_\-])"
_END = r"(?![A-Za-z0-9_\-])"
PATTERNS: tuple[tuple[str, re.Pattern, int], ...] = (
    ("private_key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"), 0),
    ("aws_access_key_id", re.compile(_EDGE + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}" + _END), 0),
    ("github_token", re.compile(_EDGE + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})" + _END), 0),
    ("slack_token", re.compile(_EDGE + r"xox[abposr]-[A-Za-z0-9][A-Za-z0-9\-]{8,}" + _END), 0),
    ("google_api_key", re.compile(_EDGE + r"AIza[0-9A-Za-z_\-]{35}" + _END), 0),
    # sk-..., sk-proj-..., sk-ant-...: long enough that prose like "sk-learn" never qualifies.
    ("openai_key", re.compile(_EDGE + r"sk-(?:[a-z]+-)?[A-Za-z0-9_\-]{20,}" + _END), 0),
    ("jwt", re.compile(_EDGE + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _END), 0),
)

# `password = value`, `密码：value`. The value is the secret; checked further in _plausible().
_ASSIGNMENT = re.compile(
    r"(?:(?<![A-Za-z0-9_])(?:password|passwd|passphrase|pwd|secret|api[_\-]?key|access[_\-]?key"
    r"|secret[_\-]?key|auth[_\-]?token|access[_\-]?token|token)|密码|口令)"
    r"[\"']?[ \t]*[:=：][ \t]*[\"']?(?P<value>[^\s\"'，,;；。]+)",
    re.IGNORECASE,
)
_MIN_ASSIGNED = 6


@dataclass(frozen=True)
class Finding:
    kind: str
    field: str  # "title" | "body"
    start: int  # character offsets in that field
    end: int

    def to_dict(self) -> dict:
        return {"class": self.kind, "field": self.field, "start": self.start, "end": self.end}

    def warning(self) -> str:
        return (
            f"possible {self.kind.replace('_', ' ')} in the {self.field} "
            f"(characters {self.start}-{self.end})"
        )


def _plausible(value: str) -> bool:
    """A password value, not prose or a pointer to where the secret lives."""
    if len(value) < _MIN_ASSIGNED:
        return False
    if value[0] in "~/.$%<{[(" or "/" in value or "\\" in value:
        return False  # a path, an env var, a placeholder
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return has_letter and has_digit


def scan_text(text: str, field: str) -> list[Finding]:
    found: list[Finding] = []
    for kind, pattern, group in PATTERNS:
        for match in pattern.finditer(text):
            if kind == "openai_key" and not any(c.isdigit() for c in match.group(group)):
                continue  # "sk-some-long-hyphenated-phrase" is prose; real keys mix in digits
            found.append(Finding(kind, field, match.start(group), match.end(group)))
    for match in _ASSIGNMENT.finditer(text):
        if _plausible(match.group("value")):
            found.append(Finding("password_assignment", field, match.start("value"), match.end("value")))
    # One span may match two rules (a JWT assigned to `token=`): keep the first per span.
    unique: dict[tuple[int, int], Finding] = {}
    for finding in found:
        overlaps = any(f.start < finding.end and finding.start < f.end for f in unique.values())
        if not overlaps:
            unique[(finding.start, finding.end)] = finding
    return sorted(unique.values(), key=lambda f: f.start)


def scan(title: str, body: str) -> list[Finding]:
    return scan_text(title, "title") + scan_text(body, "body")
