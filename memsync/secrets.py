"""Spot text that looks like a credential. Pure: text in, findings out.

This is a reminder, not a security boundary. It leans towards missing a secret rather than
crying wolf: warnings that fire on every mention of `~/.ssh/id_ed25519` or "password: see the
previous note" teach people to ignore them. A finding names the class and where it sits, never
the matched text, so a warning does not copy the secret into results and logs a second time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (class, pattern, group holding the secret, hints). Boundaries use explicit look-arounds rather
# than \b because \b treats CJK characters as word characters ("密钥AKIA..." must still match).
# Every match of a pattern contains one of its hints (as written, or in the casefolded text for
# the case-blind ones): a plain substring test rules most patterns out of a note at once, where
# the regex itself, starting with a look-behind, is tried at every character.
_EDGE = r"(?<![A-Za-z0-9_\-])"
_END = r"(?![A-Za-z0-9_\-])"
_URL_END = r"[^\s\"'<>()\[\]`]"  # the characters a URL in prose runs on with
PATTERNS: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    # Every PEM kind: RSA, EC, DSA, OPENSSH, ENCRYPTED, plain PKCS#8, PGP's "PRIVATE KEY BLOCK".
    # The span runs to the END line when the block is there, so it covers the key itself.
    ("private_key",
     r"-----BEGIN (?P<kind>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
     r"(?:[\s\S]{0,20000}?-----END (?P=kind)-----)?", 0, ("-----BEGIN ",)),
    ("aws_access_key_id", _EDGE + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}" + _END, 0,
     ("AKIA", "ASIA", "ABIA", "ACCA")),
    ("github_token", _EDGE + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})" + _END, 0,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("slack_token", _EDGE + r"xox[abposr]-[A-Za-z0-9][A-Za-z0-9\-]{8,}" + _END, 0, ("xox",)),
    ("google_api_key", _EDGE + r"AIza[0-9A-Za-z_\-]{35}" + _END, 0, ("AIza",)),
    # sk-..., sk-proj-..., sk-ant-...: long enough that prose like "sk-learn" never qualifies.
    ("openai_key", _EDGE + r"sk-(?:[a-z]+-)?[A-Za-z0-9_\-]{20,}" + _END, 0, ("sk-",)),
    ("jwt", _EDGE + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _END, 0, ("eyJ",)),
    # A webhook URL is its own credential: whoever holds it can post as the bot.
    ("slack_webhook",
     r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_\-]+/[A-Za-z0-9_/\-]{16,}", 0,
     ("https://hooks.slack.com/",)),
    ("discord_webhook",
     r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d{5,}/[A-Za-z0-9_\-]{20,}", 0,
     ("discord",)),
    ("teams_webhook",
     r"https://(?:[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)"
     r"/" + _URL_END + r"{20,}", 0, ("webhook",)),
    # scheme://user:password@host: the group is the password only.
    ("database_url_password",
     r"(?i)(?<![A-Za-z0-9])(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?)"
     r"(?:\+[a-z0-9]+)?://[^\s:/@\"'<>]*:(?P<password>[^\s/@\"'<>]+)@[A-Za-z0-9\[]", 1, ("://",)),
)

# The secret half of an AWS key pair: 40 characters of base64, recognised by a name before it
# (aws_secret_access_key = ..., "SecretAccessKey": ...) or by an access key id close by.
_AWS_SECRET = r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
_AWS_SECRET_NAME = r"(?i)secret[ _\-]?(?:access[ _\-]?)?key|aws[ _\-]?secret"
_AWS_SECRET_HINT = "secret"  # in the casefolded text: both spellings of the name hold it
_AWS_NEAR = 200  # characters between a key id and its secret in a note of the pair

# `password = value`, `密码：value`, `password is value`. The value is the secret; checked
# further in _plausible(). The `is` form only follows a word that names a password.
_PASSWORD_WORDS = r"password|passwd|passphrase|pwd|密码|口令|パスワード|비밀번호|암호"
_ASSIGNMENT = (
    r"(?i)(?:(?<![A-Za-z0-9])(?:" + _PASSWORD_WORDS + r"|secret|api[_\-]?key|access[_\-]?key"
    r"|secret[_\-]?key|auth[_\-]?token|access[_\-]?token|token)(?![A-Za-z0-9])"
    r"[\"']?[ \t]*[:=：][ \t]*"
    r"|(?:(?<![A-Za-z0-9])(?:password|passwd|passphrase)(?![A-Za-z0-9])[ \t]+(?:is|was)[ \t]+"
    r"|(?:密码|口令)[ \t]*(?:是|为|為)[ \t]*|パスワード[ \t]*(?:は|が)[ \t]*|(?:비밀번호|암호)[ \t]*(?:는|은|가)[ \t]+))"
    r"[\"'`]?(?P<value>[!#-&(-+\--:<-~]+)"  # printable ASCII but quotes, `,` and `;`
)
# each word above holds one of these, casefolded (casefold, not lower: the case-blind regex
# also takes ſ for s and the Kelvin sign for k, and casefold maps both)
_ASSIGNMENT_HINTS = ("pass", "pwd", "密码", "口令", "パスワード", "비밀번호", "암호", "secret", "key", "token")
_CASE_BLIND = frozenset({"database_url_password"})
_MIN_ASSIGNED = 6


def _hinted(text: str) -> tuple[list[tuple[str, str, int]], bool, bool]:
    """The patterns that can match `text`, and whether the AWS secret name and the assignment
    rule can: the rest are skipped without running."""
    folded = text.casefold()
    patterns = [(kind, pattern, group) for kind, pattern, group, hints in PATTERNS
                if any(h in (folded if kind in _CASE_BLIND else text) for h in hints)]
    return patterns, _AWS_SECRET_HINT in folded, any(h in folded for h in _ASSIGNMENT_HINTS)


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
    if set(value) <= set("*xX.•"):
        return False  # masked: "****"
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return has_letter and has_digit


def _placeholder(password: str) -> bool:
    """`postgres://user:${PGPASSWORD}@host`, `:<password>@`, `:****@`: a slot, not a secret."""
    return password[0] in "$<{%[" or set(password) <= set("*xX.•")


def _value_end(value: str) -> int:
    """Where an assigned value ends: sentence punctuation after it is not part of it."""
    return len(value.rstrip(".,;:!?)]}>`'\""))


def _aws_secrets(text: str, key_ids: list[Finding], field: str, may_be_named: bool) -> list[Finding]:
    if not (key_ids or may_be_named):
        return []
    found = []
    name = re.compile(_AWS_SECRET_NAME)
    for match in re.finditer(_AWS_SECRET, text):
        value = match.group(0)
        mixed = (any(c.isupper() for c in value) and any(c.islower() for c in value)
                 and any(c.isdigit() or c in "/+" for c in value))
        if not mixed:
            continue  # a hex digest or a long word, not base64 key material
        named = may_be_named and name.search(text, max(0, match.start() - 40), match.start())
        paired = any(abs(k.start - match.start()) <= _AWS_NEAR for k in key_ids)
        if named or paired:
            found.append(Finding("aws_secret_access_key", field, match.start(), match.end()))
    return found


def scan_text(text: str, field: str) -> list[Finding]:
    return _scan(text, field, *_hinted(text))


def _scan(text: str, field: str, patterns: list[tuple[str, str, int]], may_be_named: bool,
          may_assign: bool) -> list[Finding]:
    """The findings of these patterns (re's own cache keeps each compiled once per process)."""
    found: list[Finding] = []
    for kind, pattern, group in patterns:
        for match in re.finditer(pattern, text):
            if kind == "openai_key" and not any(c.isdigit() for c in match.group(group)):
                continue  # "sk-some-long-hyphenated-phrase" is prose; real keys mix in digits
            if kind == "database_url_password" and _placeholder(match.group(group)):
                continue
            found.append(Finding(kind, field, match.start(group), match.end(group)))
    found += _aws_secrets(text, [f for f in found if f.kind == "aws_access_key_id"], field, may_be_named)
    for match in re.finditer(_ASSIGNMENT, text) if may_assign else ():
        value = match.group("value")
        value = value[:_value_end(value)]
        if _plausible(value):
            start = match.start("value")
            found.append(Finding("password_assignment", field, start, start + len(value)))
    # One span may match two rules (a JWT assigned to `token=`): keep the first per span.
    unique: dict[tuple[int, int], Finding] = {}
    for finding in found:
        overlaps = any(f.start < finding.end and finding.start < f.end for f in unique.values())
        if not overlaps:
            unique[(finding.start, finding.end)] = finding
    return sorted(unique.values(), key=lambda f: f.start)


def scan(title: str, body: str) -> list[Finding]:
    return scan_text(title, "title") + scan_text(body, "body")
