"""Docs that cannot drift: every command has help text ending with an example."""

from pathlib import Path

import click
import pytest

from memsync.cli import main

COMMANDS = sorted(main.list_commands(None))  # loads every command's module
# each command of a group, by its command line
SUBCOMMANDS = sorted(f"{name} {sub}" for name in COMMANDS if isinstance(group := main.get_command(None, name), click.Group)
                     for sub in group.list_commands(None))


def test_the_documented_commands_exist():
    expected = {"paths", "index", "watch", "search", "show", "capture", "update", "supersede",
                "delete", "stats", "sources", "bench", "mcp"}
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS + SUBCOMMANDS)
def test_every_command_has_help_with_an_example(cli, name):
    code, text = cli(*name.split(), "--help")
    assert code == 0
    assert "Example" in text, f"`memsync {name} --help` has no example"
    example = text.split("Example", 1)[1]
    assert "memsync" in example and f" {name}" in example


def test_top_level_help_lists_commands(cli):
    code, text = cli("--help")
    assert code == 0 and "search" in text and "capture" in text


def test_the_commands_page_has_a_row_for_every_command():
    page = (Path(__file__).resolve().parents[1] / "docs" / "commands.md").read_text(encoding="utf-8")
    first_cells = [line.split("|")[1] for line in page.splitlines() if line.startswith("| `memsync")]
    named = {word.strip("`[]") for cell in first_cells for word in cell.split()}
    assert set(COMMANDS) <= named, f"docs/commands.md lacks {sorted(set(COMMANDS) - named)}"


@pytest.mark.parametrize(("args", "said"), [
    (("search", "-x"), "No such option '-x'. To search for '-x', put the query after `--`: memsync search -- -x"),
    (("search", "- a list item"), "put the query after `--`: memsync search -- '- a list item'"),
    (("capture", "--title", "t", "- check backups weekly"),
     "A value that begins with '-' goes after `--`, which ends the options: memsync capture … -- '- …'"),
    (("search", "x", "--vault", "v"), "global options go before the command: memsync --vault v search x"),
])
def test_text_that_begins_with_a_dash_is_answered_with_how_to_pass_it(run_cli, args, said):
    code, _, err = run_cli(*args)
    assert code == 2 and said in err


def test_a_body_after_the_double_dash_is_taken(cli, vault):
    code, data = cli("capture", "--title", "backups", "--json", "--", "- check backups weekly on ecs-prod")
    assert code == 0 and data["status"] == "created"
    assert (vault / data["path"]).read_text().rstrip().endswith("- check backups weekly on ecs-prod")
