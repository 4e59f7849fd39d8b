"""memsync.secrets: which text counts as a suspected credential. Pure, table-driven."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

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
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG" + "/bPxRfiCYEXAMPLEKEY"
SLACK_HOOK = "https://hooks.slack.com/" + "services/T0123ABCD/B0456EFGH/" + "aBcDeFgHiJkLmNoPqRsTuVwX"
DISCORD_HOOK = "https://discord.com/api/" + "webhooks/112233445566778899/" + "Zx9-aB3_cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3"
TEAMS_HOOK = ("https://contoso.webhook.office.com/" + "webhookb2/0a1b2c3d-1111-2222-3333-444455556666"
              + "@9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff/IncomingWebhook/abc123def456/0123-4567")


def pem(kind: str) -> str:
    return f"-----BEGIN {kind}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END {kind}-----"


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
        # issue 19: the kinds that were missed
        ("DATABASE_URL=postgres://app:Tr0ub4dor@db.internal:5432/app", "database_url_password"),
        ("postgresql+psycopg2://app:pa55word@10.0.0.5/app", "database_url_password"),
        ("mysql://root:hunter2@localhost/shop", "database_url_password"),
        ("mongodb+srv://svc:s3cr3tXY@cluster0.abcde.mongodb.net/db", "database_url_password"),
        ("redis://:r3disPass@cache:6379/0", "database_url_password"),
        ("amqp://guest:guest@rabbit:5672/", "database_url_password"),
        ("postgres://user:pass@host/db", "database_url_password"),
        (f"alerts go to {SLACK_HOOK}", "slack_webhook"),
        (f"告警推送到 {DISCORD_HOOK} 即可", "discord_webhook"),
        (f"Teams channel hook: {TEAMS_HOOK}", "teams_webhook"),
        (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key"),
        (f'"SecretAccessKey": "{AWS_SECRET}"', "aws_secret_access_key"),
        (pem("RSA PRIVATE KEY"), "private_key"),
        (pem("EC PRIVATE KEY"), "private_key"),
        (pem("DSA PRIVATE KEY"), "private_key"),
        (pem("OPENSSH PRIVATE KEY"), "private_key"),
        (pem("ENCRYPTED PRIVATE KEY"), "private_key"),
        (pem("PRIVATE KEY"), "private_key"),
        (pem("PGP PRIVATE KEY BLOCK"), "private_key"),
        (f"Authorization: Bearer {JWT}", "jwt"),
        ("the password is hunter22x.", "password_assignment"),
        ("DB_PASSWORD=S3cretPass1", "password_assignment"),
        ("passwd: q1w2e3r4t5", "password_assignment"),
        ("服务器密码是Abc12345，别外传", "password_assignment"),
        ("数据库的密码为 xK9mm2pq", "password_assignment"),
        ("パスワードは abc12345 です", "password_assignment"),
        ("パスワード：Zq8pass99", "password_assignment"),
        ("관리자 비밀번호는 qwer1234 입니다", "password_assignment"),
        ("비밀번호: Zq8pass99", "password_assignment"),
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
        # issue 19: prose and URLs around the new kinds
        "the password policy requires 12 characters",
        "password is required for every account",
        "the password is stored in the team vault",
        "Reset your password: open Settings, then Security",
        "密码策略要求至少 12 位",
        "パスワードは管理者に聞いてください",
        "비밀번호는 관리자에게 문의하세요",
        "postgres://db.internal:5432/app",
        "postgres://app@db.internal/app",
        "postgres://app:${PGPASSWORD}@db.internal/app",
        "mysql://root:<password>@localhost/shop",
        "redis://:****@cache:6379",
        "https://user:pass@example.com is not a database URL rule",
        "see https://api.slack.com/messaging/webhooks for setup",
        "https://hooks.slack.com/services/ is the prefix",
        "https://discord.com/api/webhooks/ takes an id and a token",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
        "-----BEGIN CERTIFICATE-----",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----",
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


def test_the_secret_half_of_an_aws_pair_is_found_near_its_key_id():
    body = f"ci user\nAccess key ID: {AWS}\nSecret: {AWS_SECRET}\n"
    found = scan_text(body, "body")
    assert [(f.kind, body[f.start:f.end]) for f in found] == [
        ("aws_access_key_id", AWS), ("aws_secret_access_key", AWS_SECRET)]


def test_a_database_url_finding_points_at_the_password_only():
    body = "prod: postgres://app:Tr0ub4dor@db.internal/app"
    (finding,) = scan_text(body, "body")
    assert body[finding.start:finding.end] == "Tr0ub4dor"


def test_a_private_key_finding_covers_the_whole_block():
    body = "key:\n" + pem("EC PRIVATE KEY") + "\nafter"
    (finding,) = scan_text(body, "body")
    assert body[finding.start:finding.end] == pem("EC PRIVATE KEY")


def test_a_password_value_ends_before_the_sentence_does():
    body = "the password is hunter22x. Change it monthly"
    (finding,) = scan_text(body, "body")
    assert body[finding.start:finding.end] == "hunter22x"


@pytest.mark.parametrize("secret", [
    "Tr0ub4dor", SLACK_HOOK, DISCORD_HOOK, TEAMS_HOOK, AWS_SECRET, JWT, "Abc12345", "qwer1234",
])
def test_no_warning_echoes_a_new_kind_of_secret(secret):
    body = (f"db postgres://app:Tr0ub4dor@h/app hooks {SLACK_HOOK} {DISCORD_HOOK} {TEAMS_HOOK} "
            f"key {AWS} {AWS_SECRET} jwt {JWT} 密码是Abc12345 비밀번호는 qwer1234 끝")
    found = scan("title", body)
    assert len(found) == 9
    for finding in found:
        assert secret not in finding.warning() + repr(finding.to_dict())


# Texts where the substring hints and the case-blind regexes could disagree: the pieces every
# pattern starts from, letters the case-blind rules take for others (ſ, the Kelvin sign,
# dotless ı), CJK password words, separators.
_PIECES = st.sampled_from([
    "AKIA", "ASIA", "ghp_", "github_pat_", "xoxb-", "AIza", "sk-", "sk-proj-", "eyJ", ".eyJ",
    "-----BEGIN ", "PRIVATE KEY-----", "https://hooks.slack.com/services/", "discord.com/api/webhooks/",
    ".webhook.office.com/webhookb2/", "postgres://", "MySQL://", "u:", "@db", "password", "PASSWORD",
    "paſſword", "\u212aey", "api_key", "ToKen", "secret", "aws_secret", "密码", "パスワードは", "비밀번호는 ",
    " = ", ": ", "：", " is ", "是", "\n", " ", "\"", AWS, AWS_SECRET, GITHUB, JWT, "Ab12Cd34Ef56Gh78Ij90Kl",
    "0123456789", "ıd",
])


@settings(max_examples=400, deadline=None)
@example("paſſword = abc1234x")  # found by the regex alone: lower() keeps ſ, casefold() makes it s
@example("aws_ſecret_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=14).map("".join))
def test_skipping_the_patterns_a_text_has_no_hint_of_changes_no_finding(text):
    from memsync import secrets

    every = ([(kind, pattern, group) for kind, pattern, group, _ in secrets.PATTERNS], True, True)
    assert scan_text(text, "body") == secrets._scan(text, "body", *every)
