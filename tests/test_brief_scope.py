"""Which cards belong to a project (memsync.store.brief.project_cards), on a real index: a name
that is only part of a folder, a file or a tag is not the project's, and a name with LIKE's or
JSON's own characters means itself."""

from __future__ import annotations

import pytest

from memsync.store import brief
from memsync.store.brief import Scope
from memsync.store.index import Index

from .conftest import write_card

CARDS = {  # path -> frontmatter
    "notes/shop.md": {},  # a note named after the project
    "Shop/readme.md": {},  # its folder at the root, in another case (ASCII)
    "x/SHOP/y.md": {},
    "x/shopping/y.md": {},  # the name inside a longer folder name
    "x/workshop.md": {},
    "x/shop.md.bak/z.md": {},
    "t/nested.md": {"tags": ["area/shop"]},  # a nested tag ending in the name
    "t/longer.md": {"tags": ["shopping"]},
    "t/parent.md": {"tags": ["shop/area"]},  # a nested tag counts for its parents too
    "t/plain.md": {"tags": ["shop"]},
    "p/front.md": {"project": "Shop"},
    "p/other.md": {"project": "shops"},
    "u/a_b/y.md": {},  # _ and % are LIKE's wildcards; here they are letters
    "u/axb/y.md": {},
    "u/a%b.md": {},
    "u/aZZb.md": {},
    "q/quote.md": {"tags": ['q"x']},  # a quote, escaped in the tag list's JSON
    "登录/z.md": {},
    "c/登录服务器/z.md": {},
    "c/cjk.md": {"tags": ["登录"]},
}
EXPECTED = {
    "shop": {"notes/shop.md", "Shop/readme.md", "x/SHOP/y.md", "t/nested.md", "t/parent.md",
             "t/plain.md", "p/front.md"},
    "a_b": {"u/a_b/y.md"},
    "a%b": {"u/a%b.md"},
    'q"x': {"q/quote.md"},
    "登录": {"登录/z.md", "c/cjk.md"},
}


@pytest.fixture
def index(vault, cli, home):
    for rel, meta in CARDS.items():
        write_card(vault, rel, rel.rsplit("/", 1)[-1].removesuffix(".md"), "a card\n", **meta)
    assert cli("index")[0] == 0
    opened = Index(home / "memsync.db")
    yield opened
    opened.close()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_project_holds_its_folders_notes_tags_and_frontmatter_and_no_lookalike(index, name):
    rows = brief.project_cards(brief.connection(index), Scope(name, (name,), ()), "2026-12-05")
    assert {row["path"] for row in rows} == EXPECTED[name]
