"""Delete and restore at the system's limits: a name of 255 bytes, a path near PATH_MAX."""

from __future__ import annotations

import os

from memsync.write import trashnames

BODY = "The printer queue needs a restart after each upgrade of cupsd."
NAME = "字" * 84 + ".md"  # 255 bytes, NAME_MAX on Linux and macOS


def _id_of(cli, rel):
    code, found = cli("search", "--json", "printer queue")
    return next(h["id"] for h in found["hits"] if h["path"] == rel)


def test_a_second_copy_of_a_255_byte_name_goes_to_the_trash_within_the_limit(cli, vault):
    path = vault / "cjk" / NAME
    path.parent.mkdir()
    path.write_text(BODY)
    cli("index")
    assert cli("delete", _id_of(cli, f"cjk/{NAME}"))[0] == 0
    path.write_text(BODY + " Second copy.")
    cli("index")
    second = _id_of(cli, f"cjk/{NAME}")
    code, data = cli("delete", second, "--json")
    assert code == 0 and data["status"] == "deleted", data
    copy = data["trash_path"]
    assert copy.endswith("-2.md") and len(copy.rsplit("/", 1)[1].encode()) <= 255
    assert trashnames.original(vault, copy) == f"cjk/{NAME}"
    assert cli("delete", "--purge", f".trash/cjk/{NAME}")[0] == 0  # the first copy, for good
    code, data = cli("delete", "--restore", copy, "--json")
    assert code == 0 and data["path"] == f"cjk/{NAME}" and data["id"] == second
    assert path.read_text() == BODY + " Second copy."


def _near_path_max(vault) -> str:
    """A vault-relative path whose full path is 4,090 bytes: `.trash/` takes it past 4,095."""
    rel, room = "deep", 4090 - len(str(vault).encode()) - len("/deep")
    while room > 256:  # what is left, `/` and the file's name, must fit in NAME_MAX (255) bytes
        rel, room = f"{rel}/{'d' * 250}", room - 251
    return f"{rel}/{'n' * (room - 4)}.md"


def test_a_card_whose_trash_path_would_pass_path_max_goes_to_the_top_of_the_trash(run_cli, vault):
    rel = _near_path_max(vault)
    path = vault / rel
    path.parent.mkdir(parents=True)
    path.write_text(BODY)
    assert len(os.fsencode(path)) == 4090
    run_cli("index")
    card = run_cli("search", "--json", "printer queue")[1]["hits"][0]["id"]
    code, data, err = run_cli("delete", card, "--json")
    assert code == 0 and data["status"] == "deleted", err
    assert data["trash_path"] == ".trash/" + path.name and not path.exists()
    assert sorted(os.listdir(vault / ".trash")) == sorted([path.name, trashnames.RECORD])  # no folders
    code, data, err = run_cli("delete", "--restore", ".trash/" + path.name, "--json")
    assert code == 0 and data["path"] == rel and data["id"] == card, err
    assert path.read_text() == BODY and os.listdir(vault / ".trash") == []
