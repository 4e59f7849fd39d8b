"""vaultio.inside, the write side's boundary: a path that leads out of the vault is refused, and
the folders it keeps across many calls (a consolidate plan) change no answer. On disk: links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memsync.errors import PathOutsideVault
from memsync.write import vaultio


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "notes").mkdir(parents=True)
    outside.mkdir()
    (vault / "notes/plain.md").write_text("x")
    (outside / "victim.md").write_text("y")
    (vault / "notes/out.md").symlink_to(outside / "victim.md")
    (vault / "notes/in.md").symlink_to(vault / "notes/plain.md")
    (vault / "linked").symlink_to(outside, target_is_directory=True)
    (vault / "notes/dangling.md").symlink_to(vault / "nowhere.md")
    return Path(os.path.realpath(vault))


RELS = ["notes/plain.md", "notes/out.md", "notes/in.md", "linked/victim.md", "linked",
        "notes/missing.md", "missing/missing.md", "notes/dangling.md", "notes/./plain.md", ".",
        "notes", "../vault/notes/plain.md", "/etc/passwd", ""]


def _answer(vault: Path, rel: str, folders=None):
    try:
        return vaultio.inside(vault, rel, folders)
    except PathOutsideVault as exc:
        return exc.message


def _refused_by_parents(vault: Path, rel: str) -> bool:
    """The first rule: the resolved path is the vault or has it among its parents."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts:
        return True
    real = Path(os.path.realpath(vault.joinpath(*[p for p in parts if p not in ("", ".")])))
    return real != vault and vault not in real.parents


@pytest.mark.parametrize("rel", RELS)
def test_kept_folders_give_the_answer_each_call_alone_gives(tree, rel):
    folders: dict[str, str] = {}
    for other in RELS:  # the folders of every other path kept first
        _answer(tree, other, folders)
    assert _answer(tree, rel, folders) == _answer(tree, rel)
    assert isinstance(_answer(tree, rel), str) == _refused_by_parents(tree, rel)


def test_links_that_lead_out_are_refused_and_links_inside_are_not(tree):
    assert "leads outside the vault" in _answer(tree, "notes/out.md", {})
    assert "leads outside the vault" in _answer(tree, "linked/victim.md", {})
    assert _answer(tree, "notes/in.md", {}) == tree / "notes/in.md"
    assert vaultio.read_bytes(tree / "notes/in.md") is None  # a link is never read through
    assert vaultio.read_bytes(tree / "notes/plain.md") == b"x"
