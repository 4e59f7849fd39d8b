"""`memsync update`: correct a card in place, touching nothing but the given fields."""

from __future__ import annotations

import json
import re

import pytest

from memsync import notes

from .conftest import write_card

BODY = "The nginx site root on ecs-prod is /srv/www/site; deploys rsync into it."
HAND_WRITTEN = (
    "---\n"
    "title: 'nginx: site root'\n"
    "kind: knowledge\n"
    "tags:\n"
    "  - nginx\n"
    "  - ops\n"
    "owner: \"ops team\"   # who to ask\n"
    "created: 2024-03-01T09:00:00+08:00\n"
    "updated: 2024-03-01T09:00:00+08:00\n"
    "x-custom: {a: 1, b: [2, 3]}\n"
    "---\n"
    "\n"
    f"{BODY}\n"
)


def without_updated(text: str) -> str:
    return re.sub(r"^updated: .*$", "updated: <x>", text, flags=re.M)


@pytest.fixture
def card(cli, vault):
    """A hand-written card with unknown keys, comments and odd quoting, indexed; returns (id, path)."""
    path = vault / "03-Knowledge/nginx-root.md"
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    cli("index")
    _, data = cli("search", "nginx", "--json")
    return data["hits"][0]["id"], path


def test_only_the_given_field_changes_and_every_other_byte_stays(cli, card):
    card_id, path = card
    code, data = cli("update", card_id, "--tags", "nginx,ops,prod", "--json")
    assert code == 0 and data["status"] == "updated" and data["changed"] == ["tags"] and data["indexed"] is True
    expected = HAND_WRITTEN.replace("tags:\n  - nginx\n  - ops\n", "tags: [nginx, ops, prod]\n")
    assert without_updated(path.read_text()) == without_updated(expected)


def test_updated_is_refreshed_and_created_kept(cli, card):
    card_id, path = card
    cli("update", card_id, "--body", BODY + " Logs in /var/log/nginx.")
    parsed = notes.parse(path.read_bytes(), "x.md")
    assert parsed.created == "2024-03-01T09:00:00+08:00"
    assert parsed.updated != "2024-03-01T09:00:00+08:00" and parsed.updated > "2025"
    assert parsed.body == BODY + " Logs in /var/log/nginx."


def test_a_new_body_is_searchable_and_the_old_one_is_not(cli, card):
    card_id, _ = card
    cli("update", card_id, "--body", "The nginx site root on ecs-prod moved under /opt/htdocs.")
    assert [h["id"] for h in cli("search", "htdocs", "--json")[1]["hits"]] == [card_id]
    assert cli("search", "rsync", "--json")[0] == 1


def test_the_path_never_changes_and_the_note_says_so(cli, card, vault):
    card_id, path = card
    code, data = cli("update", card_id, "--title", "Where nginx serves from", "--json")
    assert code == 0 and data["path"] == "03-Knowledge/nginx-root.md" and path.exists()
    assert "no longer matches" in data["note"]
    assert sorted(p.name for p in vault.rglob("*.md")) == ["nginx-root.md"]
    assert cli("show", card_id, "--json")[1]["title"] == "Where nginx serves from"


def test_the_same_value_writes_nothing(cli, card):
    card_id, path = card
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    code, data = cli("update", card_id, "--title", "nginx: site root", "--tags", "nginx, ops",
                     "--body", BODY + "\n", "--json")
    assert code == 0 and data["status"] == "unchanged"
    assert data["changed"] == [] and data["indexed"] is None
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


def test_an_update_with_nothing_to_change_says_so_and_lists_the_fields(cli, card):
    card_id, path = card
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    code, data = cli("update", card_id, "--json")
    message = data["error"]["message"]
    assert code == 2 and "nothing to change was given" in message and "equal" not in message
    assert all(field in message for field in ("title", "body", "tags", "priority", "ttl"))
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


def test_a_body_over_the_index_size_cap_is_refused_like_capture(vault, card):
    from memsync import config, reading
    from memsync.write import vault as writes

    card_id, path = card
    before = path.read_bytes()
    huge = "a line of a log pasted whole into a card\n" * (reading.MAX_FILE_BYTES // 40)
    refused = writes.capture(config.load(), "the whole log", huge)
    data = writes.update(config.load(), card_id, body=huge)
    assert data["status"] == "rejected" and data["indexed"] is None
    assert refused["status"] == "rejected"
    for note in (data["note"], refused["note"]):
        assert "MiB the index reads; split it into several cards" in note
    assert path.read_bytes() == before


def test_changing_the_kind_is_refused_with_advice(cli, card):
    card_id, path = card
    before = path.read_bytes()
    code, data = cli("update", card_id, "--kind", "tool", "--json")
    assert code == 1 and "supersede" in data["error"]["message"] and "delete" in data["error"]["message"]
    assert path.read_bytes() == before


def test_a_body_under_twenty_characters_is_refused(cli, card):
    card_id, path = card
    before = path.read_bytes()
    code, data = cli("update", card_id, "--body", "too short", "--json")
    assert code == 1 and data["status"] == "rejected" and "20" in data["note"]
    assert path.read_bytes() == before


def test_update_never_reads_the_body_from_stdin(cli, card):
    card_id, path = card
    code, data = cli("update", card_id, "--tags", "x", "--json", stdin="a piped text that is long enough to be a body")
    assert code == 0 and data["changed"] == ["tags"]
    assert notes.parse(path.read_bytes(), "x.md").body == BODY


def test_priority_and_ttl_are_set_and_cleared(cli, card):
    card_id, path = card
    cli("update", card_id, "--priority", "5", "--ttl", "30d")
    text = path.read_text()
    assert "\npriority: 5\nttl: 30d\n---\n" in text
    parsed = notes.parse(path.read_bytes(), "x.md")
    assert (parsed.priority, parsed.ttl) == ("5", "30d")
    cli("update", card_id, "--priority", "", "--ttl", "")
    assert without_updated(path.read_text()) == without_updated(HAND_WRITTEN)


def test_update_then_update_back_is_byte_identical_except_updated(cli, vault):
    _, made = cli("capture", "--title", "nginx 站点根目录", "--body", BODY, "--tags", "nginx,ops", "--json")
    path = vault / made["path"]
    original = path.read_text()
    for field, other, back in (
        ("--title", "nginx 根目录（改）", "nginx 站点根目录"),
        ("--body", BODY + " And logs go to /var/log/nginx.", BODY),
        ("--tags", "web", "nginx,ops"),
        ("--priority", "high", ""),
    ):
        cli("update", made["id"], field, other)
        assert without_updated(path.read_text()) != without_updated(original)
        cli("update", made["id"], field, back)
        assert without_updated(path.read_text()) == without_updated(original), field


def test_crlf_files_keep_their_line_endings(cli, vault):
    path = vault / "03-Knowledge/windows.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"---\r\ntitle: windows card\r\nextra: keep\r\n---\r\n" + BODY.encode() + b"\r\n")
    cli("index")
    card_id = cli("search", "windows", "--json")[1]["hits"][0]["id"]
    cli("update", card_id, "--body", BODY + " Edited.")
    data = path.read_bytes()
    assert b"\r\nextra: keep\r\n" in data and data.endswith(b" Edited.\r\n") and b"\n" not in data.replace(b"\r\n", b"")


def test_a_card_with_broken_yaml_is_refused_not_mangled(cli, vault):
    path = write_card(vault, "broken.md", body="")
    path.write_text("---\ntitle: [unclosed\n---\n" + BODY + "\n")
    cli("index")
    card_id = cli("search", "rsync", "--json")[1]["hits"][0]["id"]
    before = path.read_bytes()
    code, data = cli("update", card_id, "--tags", "x", "--json")
    assert code == 1 and "YAML" in data["error"]["message"]
    assert path.read_bytes() == before


def test_a_card_from_a_read_only_source_is_refused(cli, vault, home, tmp_path):
    other = tmp_path / "claude-memory"
    write_card(other, "notes.md", "foreign note", "kept by another agent, never written by memsync")
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"sources": [{"name": "claude", "adapter": "markdown", "path": str(other)}]}))
    cli("index")
    card_id = cli("search", "foreign", "--json")[1]["hits"][0]["id"]
    before = (other / "notes.md").read_bytes()
    for args in (("update", card_id, "--tags", "x"), ("delete", card_id),
                 ("supersede", card_id, "--title", "t", "--body", BODY)):
        code, data = cli(*args, "--json")
        assert code == 1 and data["error"]["code"] == "read_only_source", args
    assert (other / "notes.md").read_bytes() == before


def test_an_unknown_id_is_not_found(cli, vault):
    cli("index")
    code, data = cli("update", 12345, "--tags", "x", "--json")
    assert code == 1 and data["error"]["code"] == "not_found"


def test_a_plain_note_gets_a_frontmatter_and_keeps_its_text(cli, vault):
    note = vault / "plain.md"
    note.write_text("# Plain note\n\n" + BODY + "\n")
    cli("index")
    card_id = cli("search", "rsync", "--json")[1]["hits"][0]["id"]
    code, data = cli("update", card_id, "--tags", "nginx", "--json")
    assert code == 0 and data["changed"] == ["tags"]
    text = note.read_text()
    assert re.fullmatch(r"---\ntags: \[nginx\]\nupdated: \S+\n---\n# Plain note\n\n" + re.escape(BODY) + r"\n", text)
    assert cli("show", card_id, "--json")[1]["title"] == "plain"  # a note is titled by its file name


def test_a_kind_change_of_a_superseded_card_points_at_its_newest_version(cli, card):
    # superseding an old version is refused, so the advice names the newest card of the chain
    card_id, path = card
    ids = [card_id]
    for n in (2, 3):
        code, data = cli("supersede", ids[-1], "--title", f"nginx site root v{n}",
                         "--body", f"The nginx site root on ecs-prod moved to /srv/www/v{n}.", "--json")
        assert code == 0, data
        ids.append(str(data["id"]))
    for old in ids[:2]:
        code, data = cli("update", old, "--kind", "tool", "--json")
        message = data["error"]["message"]
        assert code == 1 and "already superseded" in message
        assert f"supersede {ids[2]} --kind tool" in message and f"supersede {old} " not in message
        code, data = cli("supersede", old, "--kind", "tool", "--title", "x",
                         "--body", "a body long enough to be written at all", "--json")
        assert code == 1 and f"(id {ids[2]})" in data["error"]["message"]
    (path.parent / "nginx site root v3.md").unlink()  # the chain now ends in no valid card
    assert cli("index", "--json")[0] == 0
    code, data = cli("update", card_id, "--kind", "tool", "--json")
    message = data["error"]["message"]
    assert code == 1 and "supersede " not in message and "capture the fact anew" in message
