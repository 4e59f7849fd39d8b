"""A running watcher walks a folder that appears (made, or moved in) by its source's adapter's
rules, as a reconcile does: the dot-folders an adapter reads are entered, node_modules is not."""

from __future__ import annotations

import time

from .helpers import found


def wait_for(text: str, paths: list[str], proc) -> None:
    deadline = time.monotonic() + 20
    while found(text) != paths and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found(text) == paths, proc.stderr()


def test_a_project_moved_into_a_watched_source_brings_its_rules(tmp_path, cli, watcher):
    source, outside = tmp_path / "src", tmp_path / "elsewhere/shop"
    source.mkdir()
    (outside / ".cursor/rules").mkdir(parents=True)
    (outside / ".cursor/rules/style.mdc").write_text("---\ndescription: style\n---\nuse tabs-41\n")
    (outside / ".claude").mkdir()
    (outside / ".claude/CLAUDE.md").write_text("# Shop\nreleases by pelican-42\n")
    (outside / "node_modules/pkg").mkdir(parents=True)
    (outside / "node_modules/pkg/CLAUDE.md").write_text("vendored pelican-42\n")
    cli("sources", "--add", "rules", "--adapter", "cursor", "--path", source)
    cli("sources", "--add", "agents", "--adapter", "agents", "--path", source)
    proc = watcher()
    outside.rename(source / "shop")  # one rename: no event for any file inside
    wait_for("tabs-41", ["shop/.cursor/rules/style.mdc"], proc)
    wait_for("pelican-42", ["shop/.claude/CLAUDE.md"], proc)
    code, out = cli("index", "--json")  # what a reconcile finds: the same, nothing to change
    assert code == 0 and (out["added"], out["removed"]) == (0, 0)


def test_a_watcher_follows_a_projects_legacy_cursorrules(tmp_path, cli, watcher):
    source = tmp_path / "src"
    (source / "shop").mkdir(parents=True)
    (source / "shop/.cursorrules").write_text("name branches after osprey-3\n")
    (source / "node_modules/pkg").mkdir(parents=True)
    (source / "node_modules/pkg/.cursorrules").write_text("vendored osprey-3\n")
    cli("sources", "--add", "rules", "--adapter", "cursor", "--path", source)
    proc = watcher()
    wait_for("osprey-3", ["shop/.cursorrules"], proc)
    (source / "shop/.cursorrules").write_text("name branches after merlin-9\n")
    wait_for("merlin-9", ["shop/.cursorrules"], proc)
    wait_for("osprey-3", [], proc)
