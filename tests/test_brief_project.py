"""Which project a folder is, for `memsync brief`: names beyond ASCII in any case, a project
named by a wikilink or a path from the home, and the home or the root naming none."""

from __future__ import annotations

import json

import pytest

from memsync.brief.project import claude_folder_name

from . import briefing
from .briefing import brief, titles
from .conftest import write_card

two_projects, brief_home = briefing.two_projects, briefing.brief_home  # fixtures


def test_a_project_named_beyond_ascii_finds_its_cards_in_any_case(brief_home, cli, vault, tmp_path):
    """SQLite folds ASCII letters only: `Über` and `über` once missed each other."""
    uber = tmp_path / "code" / "Über"
    (uber / ".git").mkdir(parents=True)
    write_card(vault, "02-Projects/uber-plan.md", "Über plan", "The plan of the Über project.\n", project="über")
    write_card(vault, "02-Projects/ÜBER/notes.md", "Über notes", "Notes kept in a folder of its name.\n")
    assert cli("index")[0] == 0
    assert sorted(titles(brief(cli, uber, "--peek"), "project")) == ["Über notes", "Über plan"]


@pytest.mark.parametrize("where", ["home", "root"])
def test_the_home_or_the_root_names_no_project(brief_home, cli, where):
    # every source lies inside them: none of its cards is "this project" for that alone
    folder = brief_home["home"] if where == "home" else brief_home["home"].anchor
    memory = brief_home["home"] / ".claude" / "projects" / claude_folder_name(str(folder)) / "memory"
    memory.mkdir(parents=True)
    (memory / "dotfiles.md").write_text("The dotfiles are linked with stow from ~/dotfiles.\n")
    assert cli("index")[0] == 0
    data = brief(cli, folder, "--peek")
    assert titles(data, "project") == ["dotfiles"]  # what Claude Code kept for sessions there
    assert {"Shop deploy", "Git habits"} <= set(titles(data, "used"))  # still the most used


def test_a_project_named_by_a_wikilink_or_a_path_from_the_home_finds_its_cards(brief_home, cli, vault):
    site = brief_home["home"] / "code" / "site"
    (site / ".git").mkdir(parents=True)
    named = {"tilde": "~/code/site", "tilde-slash": "~/code/site/", "link": "[[site]]",
             "link-alias": "[[Projects/site|The site]]", "path": f"{site}/",
             "other-link": "[[site-old]]", "other-path": "~/code/site-old"}
    for title, value in named.items():
        write_card(vault, f"03-Knowledge/{title}.md", title, f"A card whose project is {value}.\n",
                   project=json.dumps(value))  # quoted, as Obsidian writes a link in a property
    assert cli("index")[0] == 0
    assert sorted(titles(brief(cli, site, "--peek"), "project")) == [
        "link", "link-alias", "path", "tilde", "tilde-slash"]


@pytest.mark.parametrize("value, key", [
    ("Blog", "blog"), ("[[blog]]", "blog"), ("[[Projects/blog.md|The Blog]]", "blog"),
    ("[[blog#Plans]]", "blog"), ("~/code/blog/", "/home/me/code/blog"), ("~", "/home/me"),
    ("/", "/"), ("~other/x", "~other/x"), ("[[a]] and [[b]]", "[[a]] and [[b]]"),
])
def test_a_project_value_as_the_brief_compares_it(value, key):
    from memsync.brief.project import project_key

    assert project_key(value, "/home/me") == key
