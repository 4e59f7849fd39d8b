"""The path-safety fences of `memsync delete` and `capture`: nothing outside the vault is ever
moved or removed, whether named by a path, reached through a symlink, or through a folder
that links outside."""

from __future__ import annotations

import pytest

from . import trashing
from .trashing import BODY, tree

card = trashing.card  # a fixture


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.md").write_text("---\ntitle: victim\n---\nmust never be moved or removed\n")
    return folder


@pytest.mark.parametrize("mode", [("--restore",), ("--purge",), ("--restore", "--force")])
@pytest.mark.parametrize("arg", ["../outside/victim.md", ".trash/../../outside/victim.md", "{outside}/victim.md",
                                 "/etc/hostname"])
def test_paths_outside_the_vault_are_refused(cli, vault, card, outside, mode, arg):
    cli("delete", card["id"])
    before, victim = tree(vault), (outside / "victim.md").read_bytes()
    code, data = cli("delete", mode[0], arg.format(outside=outside), *mode[1:], "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert tree(vault) == before and (outside / "victim.md").read_bytes() == victim


@pytest.mark.parametrize("mode", ["--restore", "--purge"])
def test_a_symlink_in_the_trash_pointing_outside_is_refused(cli, vault, outside, mode):
    (vault / ".trash").mkdir()
    (vault / ".trash/evil.md").symlink_to(outside / "victim.md")
    victim = (outside / "victim.md").read_bytes()
    code, data = cli("delete", mode, ".trash/evil.md", "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert (vault / ".trash/evil.md").is_symlink() and (outside / "victim.md").read_bytes() == victim
    assert not (vault / "evil.md").exists()


def test_a_trash_folder_that_links_outside_is_refused(cli, vault, card, outside):
    (vault / ".trash").symlink_to(outside)
    code, data = cli("delete", card["id"], "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert (vault / card["path"]).exists() and sorted(p.name for p in outside.iterdir()) == ["victim.md"]
    code, _ = cli("delete", "--purge", "--all", "--yes", "--json")
    assert code == 2 and (outside / "victim.md").exists()


def test_a_kind_folder_that_links_outside_is_refused(cli, vault, outside):
    (vault / "03-Knowledge").symlink_to(outside, target_is_directory=True)
    code, data = cli("capture", "--title", "escape", "--body", BODY, "--json")
    assert code == 2 and data["error"]["code"] == "path_outside_vault"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"]


def test_purge_all_removes_links_but_never_what_they_point_to(cli, vault, outside):
    (vault / ".trash/sub").mkdir(parents=True)
    (vault / ".trash/sub/link-to-folder").symlink_to(outside, target_is_directory=True)
    (vault / ".trash/sub/link-to-file.md").symlink_to(outside / "victim.md")
    code, data = cli("delete", "--purge", "--all", "--yes", "--json")
    assert code == 0 and data["purged"] == 2
    assert (outside / "victim.md").exists() and not any((vault / ".trash").iterdir())
