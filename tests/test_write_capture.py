"""`memsync capture`: one test per rule, through the CLI, with a real vault and index."""

from __future__ import annotations

import re

import pytest

from memsync import api, config, notes

from .conftest import write_card

BODY = "ecs-prod 上 nginx 的站点根目录是 /srv/www/site，发布时 rsync 进去"
AWS = "AKIA" + "IOSFODNN7" + "EXAMPLE"


def md_files(vault):
    return sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file())


def search_ids(cli, *query):
    code, data = cli("search", *query, "--json")
    return [hit["id"] for hit in data["hits"]] if code == 0 else []


def test_a_new_card_is_written_indexed_and_findable(cli, vault):
    code, data = cli("capture", "--title", "nginx 站点根目录位置", "--body", BODY, "--tags", "nginx,ops", "--json")
    assert code == 0
    assert data["status"] == "created" and data["indexed"] is True and data["conflict"] is False
    assert data["path"] == "03-Knowledge/nginx 站点根目录位置.md"
    assert search_ids(cli, "站点根目录") == [data["id"]]
    card = notes.parse((vault / data["path"]).read_bytes(), data["path"])
    assert (card.title, card.kind, card.tags, card.body) == ("nginx 站点根目录位置", "knowledge", ("nginx", "ops"), BODY)


def test_created_and_updated_are_iso_timestamps_with_a_timezone(cli, vault):
    _, data = cli("capture", "--title", "dates", "--body", BODY, "--json")
    text = (vault / data["path"]).read_text()
    stamps = re.findall(r"^(created|updated): (\S+)$", text, re.M)
    assert [k for k, _ in stamps] == ["created", "updated"]
    for _, value in stamps:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", value)


def test_the_kind_picks_the_folder(cli, vault):
    _, data = cli("capture", "--title", "a mistake", "--body", BODY, "--kind", "mistake", "--json")
    assert data["path"] == "08-Mistakes/a mistake.md"
    code, _ = cli("capture", "--title", "x", "--body", BODY, "--kind", "nonsense")
    assert code == 2 and md_files(vault) == ["08-Mistakes/a mistake.md"]


def test_the_same_title_and_body_again_is_unchanged(cli, vault):
    _, first = cli("capture", "--title", "twice", "--body", BODY, "--json")
    before = (vault / first["path"]).read_bytes()
    code, again = cli("capture", "--title", "twice", "--body", BODY + "\n\n", "--json")
    assert code == 0 and again["status"] == "unchanged"
    assert (again["id"], again["path"], again["indexed"]) == (first["id"], first["path"], None)
    assert md_files(vault) == [first["path"]] and (vault / first["path"]).read_bytes() == before


def test_a_body_under_twenty_characters_is_rejected_and_nothing_written(cli, vault):
    code, data = cli("capture", "--title", "tiny", "--body", "x" * 19, "--json")
    assert code == 1 and data["status"] == "rejected" and "20" in data["note"]
    assert md_files(vault) == []
    code, data = cli("capture", "--title", "tiny", "--body", "x" * 20, "--json")
    assert code == 0 and data["status"] == "created"


def test_same_title_other_body_is_saved_as_dash_2_and_reported(cli, vault):
    _, first = cli("capture", "--title", "nginx root", "--body", BODY, "--json")
    code, second = cli("capture", "--title", "nginx root", "--body", BODY + " (staging)", "--json")
    assert code == 0 and second["status"] == "created" and second["conflict"] is True
    assert second["path"] == "03-Knowledge/nginx root-2.md"
    assert second["existing_path"] == first["path"] and second["collision_paths"] == [first["path"]]
    assert (vault / first["path"]).read_text().endswith(BODY + "\n")  # never overwritten
    _, third = cli("capture", "--title", "nginx root", "--body", BODY + " (dev)", "--json")
    assert third["path"] == "03-Knowledge/nginx root-3.md"
    assert third["collision_paths"] == [first["path"], second["path"]]


def test_a_conflict_is_found_in_another_folder_too(cli, vault):
    _, first = cli("capture", "--title", "nginx root", "--body", BODY, "--kind", "tool", "--json")
    _, second = cli("capture", "--title", "nginx root", "--body", BODY + "!", "--json")
    assert second["path"] == "03-Knowledge/nginx root.md" and second["conflict"] is True
    assert second["existing_path"] == first["path"]
    # the name was not changed, and the note says where both are rather than "saved as" that name
    assert "this one was saved as 03-Knowledge/nginx root.md, under the same name in another folder" in second["note"]
    assert "so this one was saved as nginx root.md" not in second["note"]


def test_the_note_of_a_numbered_copy_names_its_file(cli, vault):
    cli("capture", "--title", "nginx root", "--body", BODY, "--json")
    _, second = cli("capture", "--title", "nginx root", "--body", BODY + "!", "--json")
    assert "1 other card(s) already have this title, so this one was saved as nginx root-2.md." in second["note"]


def test_on_conflict_reject_writes_nothing_and_exits_3(cli, vault):
    _, first = cli("capture", "--title", "nginx root", "--body", BODY, "--json")
    code, data = cli("capture", "--title", "nginx root", "--body", BODY + "!", "--on-conflict", "reject", "--json")
    assert code == 3 and data["status"] == "conflict" and data["conflict"] is True
    assert data["existing_path"] == first["path"] and "update" in data["note"]
    assert md_files(vault) == [first["path"]]


def test_on_conflict_reject_also_sees_a_file_the_index_has_not_caught_up_with(cli, vault):
    write_card(vault, "03-Knowledge/nginx root.md", "nginx root", BODY)  # not indexed
    code, data = cli("capture", "--title", "nginx root", "--body", BODY + "!", "--on-conflict", "reject", "--json")
    assert code == 3 and data["existing_path"] == "03-Knowledge/nginx root.md"
    assert md_files(vault) == ["03-Knowledge/nginx root.md"]


def test_a_different_title_with_the_same_file_name_is_no_conflict(cli, vault):
    cli("capture", "--title", "a/b", "--body", BODY)
    code, data = cli("capture", "--title", "a b", "--body", BODY, "--json")
    assert code == 0 and data["path"] == "03-Knowledge/a b-2.md" and data["conflict"] is False


def test_suspected_secrets_are_written_with_warnings_that_do_not_repeat_them(cli, vault):
    body = f"the CI user's key is {AWS}, rotate it yearly"
    code, data = cli("capture", "--title", "ci key", "--body", body, "--json")
    assert code == 0 and data["status"] == "created" and (vault / data["path"]).exists()
    assert [f["class"] for f in data["secrets_found"]] == ["aws_access_key_id"]
    assert data["secrets_found"][0]["field"] == "body"
    assert body[data["secrets_found"][0]["start"]:data["secrets_found"][0]["end"]] == AWS
    assert data["warnings"] and AWS not in str(data["warnings"]) and AWS not in str(data["secrets_found"])


def test_reject_secrets_writes_nothing_and_exits_1(cli, vault):
    code, data = cli("capture", "--title", "ci key", "--body", f"the key is {AWS} for ci",
                     "--reject-secrets", "--json")
    assert code == 1 and data["status"] == "rejected" and data["secrets_found"]
    assert "without rejecting secrets" in data["note"]
    assert "reject_secrets" not in data["note"]  # the MCP argument's name means nothing here
    assert md_files(vault) == []


def test_an_index_failure_keeps_the_file_and_says_so(cli, vault, home, monkeypatch):
    broken = home.parent / "broken.db"
    broken.write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("MEMSYNC_DB", str(broken))
    code, data = cli("capture", "--title", "kept", "--body", BODY, "--json")
    assert code == 0 and data["status"] == "created" and data["indexed"] is False
    assert data["warnings"] and "memsync index" in data["warnings"][-1]
    assert (vault / data["path"]).read_text().endswith(BODY + "\n")
    monkeypatch.delenv("MEMSYNC_DB")
    cli("index")
    assert search_ids(cli, "站点根目录")


def test_the_body_is_read_from_stdin_when_not_given(cli, vault):
    code, data = cli("capture", "--title", "from a pipe", "--json", stdin=BODY + "\n")
    assert code == 0 and (vault / data["path"]).read_text().endswith(BODY + "\n")


def test_the_body_may_be_the_last_argument_but_not_given_twice(run_cli, vault):
    code, data, _ = run_cli("capture", "--title", "as an argument", BODY, "--json")
    assert code == 0 and (vault / data["path"]).read_text().endswith(BODY + "\n")
    code, _, err = run_cli("capture", "--title", "twice", "--body", BODY, BODY)
    assert code == 2 and "give the body once" in err
    assert not (vault / "03-Knowledge" / "twice.md").exists()


def test_capture_indexes_only_the_card_it_wrote(cli, vault):
    write_card(vault, "elsewhere.md", "someone else's note", "written by a person, not indexed yet")
    cli("capture", "--title", "mine", "--body", BODY)
    with api.open_index(config.load()) as index:
        assert [row["path"] for row in index.cards()] == ["03-Knowledge/mine.md"]


@pytest.mark.parametrize("command", ["capture", "update", "supersede", "delete"])
def test_each_write_command_has_help_ending_with_an_example(cli, command):
    code, text = cli(command, "--help")
    assert code == 0 and "--json" in text
    example = text.rsplit("Example:", 1)
    assert len(example) == 2 and f"memsync {command}" in example[1]


@pytest.mark.parametrize("text", ["2024-02-30", "2023-13-01", "2024-02-30 10:00:00"])
def test_a_title_or_summary_that_looks_like_an_impossible_date_is_kept_as_text(cli, vault, text):
    """YAML reads 2024-02-30 unquoted as a date, and no such date exists: written plain, the
    note's frontmatter could not be read back. The value is quoted and read back as its text."""
    code, data = cli("capture", "--title", text, "--summary", text, "--body", BODY, "--json")
    assert code == 0 and data["status"] == "created", data
    card = notes.parse((vault / data["path"]).read_bytes(), data["path"])
    assert (card.title, card.summary, card.problem) == (text, text, None)
    code, data = cli("update", str(data["id"]), "--summary", text + " again", "--json")
    assert code == 0, data
