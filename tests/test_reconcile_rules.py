"""A reconcile drops the cards that the current rules no longer reach, as a rebuild would: a
file indexed before a release skipped its folder leaves the index at the next `memsync index`."""

import memsync.adapters.base as base

from .conftest import write_card


def paths(cli, query):
    code, data = cli("search", query, "--json")
    assert code == 0
    return [hit["path"] for hit in data["hits"]]


def test_index_drops_a_card_under_a_folder_the_rules_now_skip(vault, cli, monkeypatch):
    write_card(vault, "node_modules/pkg/README.md", "Vendored ocelot", "ocelot readme")
    write_card(vault, "notes/mine.md", "Mine", "ocelot of my own")
    with monkeypatch.context() as old_rules:  # a release that did not yet skip node_modules/
        old_rules.setattr(base, "SKIPPED_FOLDERS", set())
        assert cli("index", "--json")[0] == 0
    assert sorted(paths(cli, "ocelot")) == ["node_modules/pkg/README.md", "notes/mine.md"]
    assert [f["check"] for f in cli("doctor", "--json")[1]["findings"]] == ["drift"]

    code, report = cli("index", "--json")
    assert code == 0 and report["removed"] == 1
    assert paths(cli, "ocelot") == ["notes/mine.md"]
    # doctor's drift check and its fix (`memsync index`) agree: nothing left to report
    assert [f["check"] for f in cli("doctor", "--json")[1]["findings"]] == []
