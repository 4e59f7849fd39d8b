from memsync.mcp_words import for_model


def test_commands_with_a_tool_become_the_tool():
    assert for_model("find ids with `memsync search`") == "find ids with the memory_search tool"
    assert for_model("run `memsync index` to retry") == "run the memory_reindex tool to retry"
    assert for_model("use `memsync supersede 12 --kind tool ...`") == "use the memory_supersede tool"


def test_flags_become_argument_names():
    assert for_model("search with --as-of 2026-02-28") == "search with as_of 2026-02-28"
    assert for_model("pass --title with a few words") == "pass title with a few words"
    assert for_model("capture with --on-conflict suffix") == "capture with on_conflict suffix"


def test_what_only_a_person_can_do_is_left_as_written():
    text = "undo with `memsync delete --restore 03-Knowledge/a.md`"
    assert for_model(text) == text
    assert for_model("keep `memsync watch` running") == "keep `memsync watch` running"


def test_paths_and_plain_words_are_untouched():
    assert for_model("moved to .trash/a--b.md") == "moved to .trash/a--b.md"
    assert for_model(None) is None and for_model("") == ""
