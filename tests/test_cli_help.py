"""Docs that cannot drift: every command has help text ending with an example, and
docs/commands.md names every command and option there is, and none that is not."""

import re
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


COMMANDS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "commands.md"
OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")
EVERYWHERE = {"--help", "-h", "--json"}  # said once for every command


def row_cells() -> list[str]:
    """The first cell of each row of the commands table, without its escaped pipes."""
    lines = COMMANDS_PAGE.read_text(encoding="utf-8").splitlines()
    return [line.replace("\\|", "/").split("|")[1] for line in lines if line.startswith("| `memsync")]


def option_names(command: click.Command) -> list[set[str]]:
    """Each parameter's option names (any one of them documents it); a hidden one is on its way out."""
    return [{*p.opts, *p.secondary_opts} for p in command.params
            if isinstance(p, click.Option) and not p.hidden and not {*p.opts} & EVERYWHERE]


def commands_of(cell: str) -> list[tuple[str, click.Command]]:
    """The commands a row is about: `memsync NAME`, or the subcommands of a group it names."""
    name = cell.strip(" `").split()[1]
    command = main.get_command(None, name)
    assert command is not None, f"docs/commands.md names `memsync {name}`, which does not exist"
    if not isinstance(command, click.Group):
        return [(name, command)]
    words = set(cell.replace("`", " ").split())
    subs = [(f"{name} {sub}", command.get_command(None, sub)) for sub in command.list_commands(None) if sub in words]
    return [(n, c) for n, c in subs if c is not None]


def test_the_commands_page_names_every_option_and_only_real_ones():
    problems = []
    for cell in row_cells():
        commands = commands_of(cell)
        shown = set(OPTION.findall(cell.replace("`", " ")))
        real = {o for _, c in commands for names in option_names(c) for o in names} | EVERYWHERE
        problems += [f"`memsync {n}` has {sorted(names)}, not in its row" for n, c in commands
                     for names in option_names(c) if not names & shown]
        problems += [f"the row of `memsync {commands[0][0]}` names {o}, which no such command has"
                     for o in sorted(shown - real)]
    page = COMMANDS_PAGE.read_text(encoding="utf-8")
    problems += [f"global option {o} is not on the page" for names in option_names(main)
                 for o in sorted(names) if not any(n in page for n in names)]
    assert not problems, "docs/commands.md: " + "; ".join(problems)


def test_the_commands_page_has_a_row_for_every_command():
    first_cells = row_cells()
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
