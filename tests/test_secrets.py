"""memsync.secrets: which text counts as a suspected credential. Pure, table-driven."""

from __future__ import annotations

import pytest

from memsync.secrets import scan, scan_text

# Built from pieces so this file does not itself look like it leaks keys.
AWS = "AKIA" + "IOSFODNN7" + "EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghij"
SLACK = "xoxb-" + "123456789012-1234567890123-abcdefABCDEF"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
OPENAI = "sk-" + "proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34"
JWT = "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"deploy key:\n{PEM}\n", "private_key"),
        ("-----BEGIN RSA PRIVATE KEY-----", "private_key"),
        (f"aws id {AWS} for ci", "aws_access_key_id"),
        (f"阿里云迁移前的密钥{AWS}已作废", "aws_access_key_id"),
        (f"token {GITHUB} in the runner", "github_token"),
        (f"fine-grained {GITHUB_PAT}", "github_token"),
        (f"bot {SLACK}", "slack_token"),
        (f"maps {GOOGLE}", "google_api_key"),
        (f"OPENAI_API_KEY is {OPENAI}", "openai_key"),
        (f"session cookie {JWT}", "jwt"),
        ("db password = hunter22x", "password_assignment"),
        ("PASSWORD: S3cretPass", "password_assignment"),
        ('"api_key": "abc123def456"', "password_assignment"),
        ("数据库密码：abc12345", "password_assignment"),
        ("口令=Zx9pass77", "password_assignment"),
    ],
)
def test_each_credential_class_is_found(text, kind):
    found = scan_text(text, "body")
    assert [f.kind for f in found] == [kind]


@pytest.mark.parametrize(
    "text",
    [
        "log in with ~/.ssh/id_ed25519",
        "密钥见 ~/.ssh/deploy_key",
        "token: see the previous note",
        "token: 见上一条记录",
        "password: 已改成用密钥登录",
        "password: none yet",  # no digits: prose, not a password
        "password = $DB_PASSWORD",
        "password: ${{ secrets.DB }}",
        "password=/run/secrets/db1",
        "password: abc1",  # too short to be worth a warning
        "max_tokens = 4096",
        "we use scikit-learn and sk-learn-style pipelines everywhere",
        "sk-this-is-a-long-hyphenated-phrase-not-a-key",
        "the AKIA prefix marks long-term AWS keys",
        "ghp_ tokens are GitHub personal access tokens",
        "eyJ is how base64 JSON starts",
        "-----BEGIN PUBLIC KEY-----",
    ],
)
def test_references_and_prose_are_not_flagged(text):
    assert scan_text(text, "body") == []


def test_positions_point_at_the_secret_and_the_warning_never_repeats_it():
    body = f"prod db password = Hunter22abc and key {AWS}"
    found = scan("title", body)
    assert [(f.kind, body[f.start:f.end]) for f in found] == [
        ("password_assignment", "Hunter22abc"),
        ("aws_access_key_id", AWS),
    ]
    for finding in found:
        text = finding.warning() + repr(finding.to_dict())
        assert "Hunter22abc" not in text and AWS not in text
        assert str(finding.start) in finding.warning()


def test_title_and_body_are_both_scanned_and_named():
    found = scan(f"key {AWS}", "nothing to see in this body at all")
    assert [(f.field, f.kind) for f in found] == [("title", "aws_access_key_id")]


def test_a_token_assigned_to_a_name_is_reported_once():
    found = scan_text(f"GITHUB_TOKEN={GITHUB}", "body")
    assert [f.kind for f in found] == ["github_token"]
