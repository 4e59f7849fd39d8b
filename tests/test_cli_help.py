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


@pytest.mark.parametrize("name", COMMANDS + SUBCOMMANDS)
def test_every_command_but_mcp_takes_json_as_the_docs_say(name):
    """README.md and docs/commands.md: every command but `mcp` takes `--json`."""
    command = main
    for word in name.split():
        command = command.get_command(None, word)
    if isinstance(command, click.Group):
        return
    takes = any("--json" in p.opts for p in command.params)
    assert takes == (name != "mcp"), f"`memsync {name}` {'takes' if takes else 'lacks'} --json"


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


def test_the_tag_filter_does_what_its_help_says(cli, vault):
    (vault / "indexer.md").write_text("working on the indexer today #project/memsync\n")
    assert cli("index")[0] == 0
    help_text = " ".join(cli("search", "--help")[1].split())  # as wrapped
    assert "exact" not in help_text and "any case, # optional; a/b is found by a too" in help_text
    for tag in ("Project", "#project", "project/memsync"):
        code, data = cli("search", "indexer", "--tag", tag, "--json")
        assert code == 0 and [h["path"] for h in data["hits"]] == ["indexer.md"], tag
    assert cli("search", "indexer", "--tag", "memsync")[0] == 1  # the nested part alone is no tag


# `memsync [global options] COMMAND [SUBCOMMAND] ...` as a page writes it inside code
COMMAND_LINE = re.compile(r"(?<![\w/.-])memsync((?:\s+--?[a-z][\w-]*(?:[ =](?!-)[^\s`]+)?)*)\s+([a-z][a-z-]*)([^`\n|;#)&]*)")


def wrong_options(text: str) -> list[str]:
    """Each option a command line in the code of `text` gives its command (or, before it, the
    group memsync) and that command does not have."""
    from .test_docs import CODE, FENCE

    chunks = [m.group(0) for m in FENCE.finditer(text)] + [m.group(0).strip("`") for m in CODE.finditer(FENCE.sub("", text))]
    names = {o for p in main.params for o in (*p.opts, *p.secondary_opts)}
    wrong = []
    for line in (m for chunk in chunks for m in COMMAND_LINE.finditer(chunk)):
        wrong += [f"memsync {o} (global)" for o in OPTION.findall(line.group(1)) if o not in names]
        command, rest = main.get_command(None, line.group(2)), line.group(3).split(" -- ")[0]
        if isinstance(command, click.Group):
            sub = (rest.split() or [""])[0]
            command = command.get_command(None, sub) if sub in command.list_commands(None) else None
        if command is not None:
            have = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
            wrong += [f"{line.group(0).strip()}: {o}" for o in OPTION.findall(rest) if o not in have]
    return wrong


def test_every_option_a_page_shows_a_command_is_one_it_has():
    from .test_docs import PAGES, ROOT

    wrong = [f"{page.relative_to(ROOT)}: {w}" for page in PAGES for w in wrong_options(page.read_text(encoding="utf-8"))]
    assert not wrong, "options no such command has: " + "; ".join(wrong)


def test_the_option_check_catches_a_wrong_option_in_code_only():
    text = ("run `memsync search nginx --kindz x`, `memsync --vaults v index`, `memsync index --rebuild`\n"
            "```sh\nmemsync hooks install codex --projectz ~/x   # a comment --not-an-option\n```\n"
            "and in prose memsync search --whatever is not checked; `memsync search -- -x` neither\n")
    assert wrong_options(text) == ["memsync hooks install codex --projectz ~/x: --projectz",
                                   "memsync search nginx --kindz x: --kindz", "memsync --vaults (global)"]
