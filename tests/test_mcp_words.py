import shlex

from memsync import api, config, dates
from memsync.doctor.checks import REINDEX
from memsync.mcp.words import for_model


def test_commands_with_a_tool_become_the_tool_with_its_arguments():
    assert for_model("find ids with `memsync search`") == "find ids with the memory_search tool"
    assert for_model("run `memsync index` to retry") == "run the memory_reindex tool to retry"
    assert (for_model("instead use `memsync supersede 12 --kind tool ...` to move it")
            == "instead use the memory_supersede tool with id=12, kind=tool to move it")


def test_a_commands_switches_and_card_id_reach_the_tool_as_arguments():
    """A switch in the command was dropped: `memsync index --rebuild` read as a plain reindex,
    `memsync show 5 --full` as a window of the card; the card's id was dropped too."""
    assert for_model("run `memsync index --rebuild`") == "run the memory_reindex tool with rebuild=true"
    assert for_model("`memsync show 5 --full`") == "the memory_get tool with id=5, full=true"
    assert for_model("then `memsync delete 12` if") == "then the memory_delete tool with id=12 if"
    assert (for_model("`memsync search --include-invalid heron`")  # the search words are no flag value
            == "the memory_search tool with include_invalid=true")


def test_a_command_with_a_flag_no_tool_takes_stays_the_users():
    """memory_reindex cannot embed and memory_search cannot explain a score: such a command once
    read as the bare tool, which does something else."""
    for command in ("`memsync index --embed`", "`memsync search --explain nginx`",
                    "`memsync index --embed --threads 1`"):
        assert for_model(f"run {command} again") == f"run {command} (for the user to run) again"


def test_flags_become_argument_names():
    assert for_model("search with --as-of 2026-02-28") == "search with as_of 2026-02-28"
    assert for_model("pass --title with a few words") == "pass title with a few words"
    assert for_model("capture with --on-conflict suffix") == "capture with on_conflict suffix"
    # a switch is turned on by passing true; a number after a flag is its value
    assert for_model("search with --include-invalid to list it") == "search with include_invalid=true to list it"
    assert (for_model("[… 9 more characters not shown; continue with --offset 50, or --full for the whole text]")
            == "[… 9 more characters not shown; continue with offset=50, or full=true for the whole text]")
    assert for_model("at most --limit 20.") == "at most limit=20."


def test_what_only_a_person_can_do_is_left_as_written_and_said_to_be_the_users():
    text = "empty it with `memsync delete --purge --all`"
    assert for_model(text) == text + " (for the user to run)"
    assert for_model("keep `memsync watch` running") == "keep `memsync watch` (for the user to run) running"
    assert (for_model("`memsync doctor --fix-pairs` drops the pointer")
            == "`memsync doctor --fix-pairs` (for the user to run) drops the pointer")
    # memory_reindex cannot confirm a mass removal: that yes is the person's
    text = "if you removed those files, confirm with `memsync index --allow-mass-removal`"
    assert for_model(text) == text + " (for the user to run)"


def test_a_command_for_the_user_inside_parentheses_opens_no_second_pair():
    """The advice's own parentheses hold the command: "(`memsync sources --remove x` (for the user
    to run))" read badly, so the words follow a comma there, closed by one when more follow."""
    assert (for_model("remove the source (`memsync sources --remove agent`)")
            == "remove the source (`memsync sources --remove agent`, for the user to run)")
    assert for_model(REINDEX) == "run the memory_reindex tool (or `memsync doctor --fix`, for the user to run)"
    stale = api.staleness(config.load(), ["2020-01-01T00:00:00+0000"], now=dates.stamp_seconds(
        "2020-01-01T00:03:00+0000"))
    assert [for_model(s) for s in stale] == [
        "no watcher running; index last updated 3 min ago (`memsync watch`, for the user to run, "
        "keeps it live; the memory_reindex tool catches it up)"]
    # parentheses closed before it, or inside a quoted path, leave it outside any
    assert (for_model("card 3 (a.md); run `memsync purge` now")
            == "card 3 (a.md); run `memsync purge` (for the user to run) now")
    assert (for_model("source 'x (old' can go: `memsync sources --remove x`")
            == "source 'x (old' can go: `memsync sources --remove x` (for the user to run)")


def test_doctor_is_the_stats_tool_with_its_check():
    assert (for_model("so `memsync doctor` reports the history as gone")
            == "so the memory_stats tool with check=true reports the history as gone")


def test_the_users_words_are_never_touched():
    # titles, paths and values reach messages quoted or as paths: they are data, not advice
    assert (for_model("a card titled 'plan --draft' already exists (notes --draft/plan --draft.md)")
            == "a card titled 'plan --draft' already exists (notes --draft/plan --draft.md)")
    assert for_model("no card has kind '--as-of'") == "no card has kind '--as-of'"
    assert for_model('{"existing_path": "a --title.md"}') == '{"existing_path": "a --title.md"}'
    assert for_model("moved to .trash/a--b.md") == "moved to .trash/a--b.md"
    assert for_model(None) is None and for_model("") == ""


def test_a_restore_is_the_delete_tool_with_restore():
    assert (for_model("moved to .trash/a.md; undo with `memsync delete --restore .trash/a.md`")
            == "moved to .trash/a.md; undo with the memory_delete tool with restore=.trash/a.md")
    assert for_model("Add --force to move that file") == "Add force=true to move that file"


def test_every_cli_flag_a_tool_takes_becomes_its_argument():
    """A flag named in a message (the missing-extra error says --semantic) must reach the model
    as the tool's argument: every option of a command that has a tool, where the tool takes an
    argument of that name, is translated."""
    import anyio
    import click
    from mcp.client import Client

    from memsync import config
    from memsync.cli import main
    from memsync.mcp import server as mcp_server
    from memsync.mcp.words import TOOL_FOR_COMMAND

    async def schemas():
        async with Client(mcp_server.build(config.load())) as client:
            return {t.name: set(t.input_schema["properties"]) for t in (await client.list_tools()).tools}

    arguments = anyio.run(schemas)
    ctx = click.Context(main)
    untranslated = []
    for command, tool in TOOL_FOR_COMMAND.items():
        for param in main.get_command(ctx, command).params:
            for flag in [o for o in param.opts + param.secondary_opts if o.startswith("--")]:
                name = flag[2:]
                argument = name.replace("-", "_")
                if argument in arguments[tool] and for_model(flag) not in (argument, argument + "=true"):
                    untranslated.append(f"memsync {command} {flag}")
    assert not untranslated, untranslated
    assert for_model("search without --semantic") == "search without semantic=true"


def test_a_path_with_an_apostrophe_reaches_the_tool_whole():
    # a title such as "Bob's deploy notes" names the file; shlex.quote writes its quote as '"'"'
    path = ".trash/03-Knowledge/Bob's deploy notes.md"
    text = f"undo with `memsync delete --restore {shlex.quote(path)}`"
    assert for_model(text) == f"undo with the memory_delete tool with restore={path}"


def test_a_shell_quoted_path_with_spaces_reaches_the_tool_whole():
    # file names keep their spaces (issue 19), so the CLI's advice quotes them for a shell
    text = "undo with `memsync delete --restore '.trash/03-Knowledge/backup owner.md'`"
    assert for_model(text) == "undo with the memory_delete tool with restore=.trash/03-Knowledge/backup owner.md"


def test_a_restore_of_nothing_names_the_tool_that_finds_a_deleted_cards_file():
    """The advice was `ls <vault>/.trash`, a shell command an agent over MCP may not have."""
    import anyio
    from mcp.client import Client

    from memsync.mcp import server as mcp_server

    async def restore():
        async with Client(mcp_server.build(config.load())) as client:
            return await client.call_tool("memory_delete", {"restore": ".trash/none.md"})

    result = anyio.run(restore)
    said = result.content[0].text
    assert result.is_error and "`ls" not in said and "ls " not in said
    assert said.startswith("nothing at .trash/none.md; the memory_get tool with the deleted card's id says "
                           "where its file is in the trash"), said
