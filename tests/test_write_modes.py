"""The mode of a card the write side creates: the vault's own notes' mode, 0600 with a secret."""

from __future__ import annotations

import os
import stat

from .conftest import write_card

BODY = "The backup job runs at 02:00 from cron on ecs-prod and keeps seven days."
SECRET_BODY = "The staging database is postgres://app:Tr0ub4dor@db.internal/app for now."


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_card_takes_the_mode_most_notes_in_its_folder_have(cli, vault):
    for n in range(3):
        os.chmod(write_card(vault, f"03-Knowledge/note {n}.md", f"note {n}", BODY), 0o660)
    os.chmod(write_card(vault, "03-Knowledge/odd one.md", "odd one", BODY), 0o644)
    code, data = cli("capture", "--title", "backup schedule", "--body", BODY, "--json")
    assert code == 0 and data["status"] == "created"
    assert mode(vault / data["path"]) == 0o660


def test_a_card_in_a_new_folder_takes_the_mode_of_the_vaults_notes(cli, vault):
    os.chmod(write_card(vault, "inbox/shared.md", "shared", BODY), 0o664)
    _, data = cli("capture", "--title", "backup schedule", "--kind", "tool", "--body", BODY, "--json")
    assert data["path"].startswith("07-Tools/") and mode(vault / data["path"]) == 0o664


def test_an_empty_vault_gives_its_folders_mode_without_execute_bits(cli, vault):
    os.chmod(vault, 0o750)
    _, data = cli("capture", "--title", "backup schedule", "--body", BODY, "--json")
    assert mode(vault / data["path"]) == 0o640


def test_a_card_with_a_secret_is_private_and_the_warning_says_so(cli, vault):
    os.chmod(write_card(vault, "03-Knowledge/shared.md", "shared", BODY), 0o664)
    code, data = cli("capture", "--title", "staging db", "--body", SECRET_BODY, "--json")
    assert code == 0 and data["status"] == "created"
    assert mode(vault / data["path"]) == 0o600
    assert [s["class"] for s in data["secrets_found"]] == ["database_url_password"]
    assert any("0600" in w for w in data["warnings"])
    assert not any("Tr0ub4dor" in w for w in data["warnings"])


def test_a_rejected_secret_says_nothing_about_a_mode(cli, vault):
    code, data = cli("capture", "--title", "staging db", "--body", SECRET_BODY, "--reject-secrets", "--json")
    assert code == 1 and data["status"] == "rejected"
    assert not any("0600" in w for w in data["warnings"])


def test_supersede_and_update_that_bring_a_secret_make_the_card_private(cli, vault):
    os.chmod(vault, 0o755)
    _, first = cli("capture", "--title", "staging db", "--body", BODY, "--json")
    assert mode(vault / first["path"]) == 0o644
    _, new = cli("supersede", first["id"], "--title", "staging db", "--body", SECRET_BODY, "--json")
    assert mode(vault / new["path"]) == 0o600 and any("0600" in w for w in new["warnings"])
    assert mode(vault / first["path"]) == 0o644  # the old card's mark keeps its mode
    _, other = cli("capture", "--title", "cron host", "--body", BODY, "--json")
    _, updated = cli("update", other["id"], "--body", SECRET_BODY, "--json")
    assert updated["status"] == "updated" and mode(vault / other["path"]) == 0o600
