"""A symbolic link to a file in an agents or cursor source is read as that file: a CLAUDE.md that
links into a dotfiles folder gives its card, a link to a file the source reads anyway gives no
second one, and a link that dangles, loops or leads to a folder gives none."""

from __future__ import annotations

import os
import time

import memsync.adapters as adapters
from memsync import treewalk
from memsync.exclusions import Exclusions

from .helpers import found


def hits(cli, text: str) -> list[tuple[str, str]]:
    code, data = cli("search", text, "--json")
    assert code == (0 if data["hits"] else 1)  # as grep: 1 when nothing matched
    return [(hit["source"], hit["path"]) for hit in data["hits"]]


def project_with_links(tmp_path):
    project, dotfiles = tmp_path / "shop", tmp_path / "dotfiles"
    (project / "api").mkdir(parents=True)
    dotfiles.mkdir()
    (project / "AGENTS.md").write_text("# Agents\nrun the tests with tox-7\n")
    (project / "CLAUDE.md").symlink_to("AGENTS.md")  # the usual: one file for both agents
    (dotfiles / "CLAUDE.md").write_text("# Shared\nanswer in terse-9 style\n")
    (project / "api/CLAUDE.md").symlink_to(dotfiles / "CLAUDE.md")  # a shared file elsewhere
    return project, dotfiles


def test_a_link_to_a_file_is_read_and_a_link_to_a_file_read_anyway_is_not_read_twice(tmp_path, cli):
    project, _ = project_with_links(tmp_path)
    assert cli("sources", "--add", "shop", "--adapter", "agents", "--path", project)[0] == 0
    assert hits(cli, "terse-9") == [("shop", "api/CLAUDE.md")]
    assert hits(cli, "tox-7") == [("shop", "AGENTS.md")]
    code, report = cli("doctor", "--json")
    assert code == 0 and report["findings"] == []


def test_a_link_to_a_link_read_anyway_gives_no_second_card(tmp_path, cli):
    # CLAUDE.md -> AGENTS.md -> ~/dotfiles/AGENTS.md: the source reads the text as AGENTS.md
    project, dotfiles = project_with_links(tmp_path)
    (dotfiles / "AGENTS.md").write_text("# Agents\nrun the tests with nox-3\n")
    (project / "AGENTS.md").unlink()
    (project / "AGENTS.md").symlink_to(dotfiles / "AGENTS.md")
    cli("sources", "--add", "shop", "--adapter", "agents", "--path", project)
    assert hits(cli, "nox-3") == [("shop", "AGENTS.md")]


def test_links_that_dangle_loop_or_lead_to_a_folder_give_no_card(tmp_path, cli):
    project = tmp_path / "shop"
    for folder in ("dangling", "loop", "folder/CLAUDE.md"):
        (project / folder).mkdir(parents=True)
    (project / "dangling/CLAUDE.md").symlink_to(tmp_path / "nowhere.md")
    (project / "loop/CLAUDE.md").symlink_to("AGENTS.md")
    (project / "loop/AGENTS.md").symlink_to("CLAUDE.md")
    (project / "folder/CLAUDE.md/notes.md").write_text("plain but not wanted\n")
    (project / "GEMINI.md").symlink_to(project / "folder")
    code, out = cli("sources", "--add", "shop", "--adapter", "agents", "--path", project, "--json")
    assert code == 0 and out["status"] == "added"
    code, report = cli("index", "--json")
    assert code == 0 and report["problems"] == []
    assert cli("stats", "--json")[1]["cards"] == 0


def test_a_change_to_a_links_target_reaches_the_index_with_memsync_index(tmp_path, cli):
    project, dotfiles = project_with_links(tmp_path)
    cli("sources", "--add", "shop", "--adapter", "agents", "--path", project)
    (dotfiles / "CLAUDE.md").write_text("# Shared\nanswer in brisk-4 style, always\n")
    code, report = cli("index", "--json")
    assert code == 0 and report["updated"] == 1
    assert hits(cli, "brisk-4") == [("shop", "api/CLAUDE.md")] and hits(cli, "terse-9") == []
    (dotfiles / "CLAUDE.md").unlink()  # the link now dangles: its card goes
    assert cli("index", "--json")[1]["removed"] == 1
    assert hits(cli, "brisk-4") == []


def test_a_cursorrules_link_to_agents_md_is_read_by_the_cursor_source(tmp_path, cli):
    project = tmp_path / "shop"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Agents\nbranches are named after finch-2\n")
    (project / ".cursorrules").symlink_to("AGENTS.md")
    cli("sources", "--add", "rules", "--adapter", "cursor", "--path", project)
    assert hits(cli, "finch-2") == [("rules", ".cursorrules")]


def test_the_vault_reads_no_link(vault, tmp_path, cli):
    (tmp_path / "outside.md").write_text("# Outside\nheld by ibis-6\n")
    (vault / "link.md").symlink_to(tmp_path / "outside.md")
    cli("index")
    assert hits(cli, "ibis-6") == []


def test_a_stamped_folder_gives_a_links_target_signature(tmp_path):
    """The survey of a big tree stats a stamped folder's stored files by path (lstat_all): a
    link there is the target's signature, as the walk gave it."""
    project, dotfiles = project_with_links(tmp_path)
    adapter = adapters.get("agents", str(project))
    walked = treewalk.walk(adapter, Exclusions(str(project)), [(str(project), "")])
    assert sorted(walked) == ["AGENTS.md", "api/CLAUDE.md"]
    target = os.stat(dotfiles / "CLAUDE.md")
    assert walked["api/CLAUDE.md"] == (target.st_size, target.st_mtime_ns, target.st_ctime_ns, target.st_ino)
    assert treewalk.lstat_all((str(project), ""), list(walked), adapter) == walked


def test_a_watcher_follows_a_link_made_and_repointed_while_it_runs(tmp_path, cli, watcher):
    project, dotfiles = project_with_links(tmp_path)
    (dotfiles / "OTHER.md").write_text("# Other\nreleases by heron-8\n")
    cli("sources", "--add", "shop", "--adapter", "agents", "--path", project)
    proc = watcher()
    (project / "web").mkdir()
    (project / "web/CLAUDE.md").symlink_to(dotfiles / "CLAUDE.md")
    wait_for("terse-9", ["api/CLAUDE.md", "web/CLAUDE.md"], proc)
    (project / "api/next").symlink_to(dotfiles / "OTHER.md")
    os.replace(project / "api/next", project / "api/CLAUDE.md")  # `ln -sfn`: a new link, renamed over
    wait_for("heron-8", ["api/CLAUDE.md"], proc)
    wait_for("terse-9", ["web/CLAUDE.md"], proc)


def wait_for(text: str, paths: list[str], proc) -> None:
    deadline = time.monotonic() + 20
    while sorted(found(text)) != paths and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(found(text)) == paths, proc.stderr()

