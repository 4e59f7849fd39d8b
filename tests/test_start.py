"""`memsync search` starts fast: only the read side is imported, nothing of the write side,
the watcher or the MCP SDK, and the collector does not walk what the imports made
(bench/perf_commands.py measures the whole-process time)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from importlib import metadata

import pytest

from memsync.cli import COMMANDS, MODULE_OF, main

OTHER_SIDES = ["memsync.cli.write", "memsync.cli.watch", "memsync.cli.serve", "memsync.cli.init",
               "memsync.cli.service", "memsync.cli.bench", "memsync.write.vault", "memsync.sync",
               "memsync.outline", "memsync.store.backlinks", "memsync.store.fieldstore",  # the indexer's
               "memsync.reindexlock", "memsync.lockfile",  # a reindex's turn (api.reindex), a lock taken
               "logging", "watchdog", "mcp", "yaml", "frontmatter", "hashlib"]


@pytest.mark.parametrize(("stale", "query"), [(False, "anything"), (True, "anything"), (False, "同步 私钥")])
def test_a_search_imports_the_read_side_only(vault, cli, home, stale, query):
    cli("index")
    if stale:  # an index no watcher keeps: the search asks the lock file whether one runs
        with closing(sqlite3.connect(home / "memsync.db")) as conn, conn:
            conn.execute("UPDATE meta SET value = '2020-01-01T00:00:00+0000' "
                         "WHERE key IN ('last_sync', 'last_change')")
    probe = (
        "import sys, json\n"
        "from memsync.cli import main\n"
        "code = 0\n"
        "try:\n"
        f"    main(['search', {query!r}], standalone_mode=False)\n"
        "except SystemExit as stop:\n"
        "    code = stop.code\n"
        "from memsync import cjk\n"
        f"print(json.dumps([[m for m in {OTHER_SIDES!r} if m in sys.modules],\n"
        "                  sorted(cjk._BUILT), code]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    loaded, classes_built, code = json.loads(proc.stdout.strip().splitlines()[-1])
    assert code in (0, 1, None), proc.stderr  # hits or none: the search itself ran to its end
    assert loaded == [], proc.stderr
    # a query never builds the CJK character classes: milliseconds, for a few characters
    assert classes_built == []


def test_every_command_lives_in_the_module_the_table_names_and_the_table_names_them_all():
    for name, module in MODULE_OF.items():
        assert main.get_command(None, name).callback.__module__ == f"memsync.cli.{module}", name
    names = main.list_commands(None)  # loads every module: what they define, the table lists
    assert set(names) == set(MODULE_OF)
    assert sum(map(len, COMMANDS.values())) == len(MODULE_OF)  # no command under two modules


def test_a_brief_imports_the_read_side_only(vault, cli, tmp_path):
    """A session-start hook runs `memsync brief` before every session: as light as a search."""
    cli("index")
    probe = (
        "import sys, json\n"
        "from memsync.cli import main\n"
        "try:\n"
        f"    main(['brief', '--project', {str(tmp_path)!r}, '--peek'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {OTHER_SIDES!r} if m in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [], proc.stderr


# The console script (memsync.start): the cyclic collector stays off while the CLI loads, and
# is on again when the command runs.
COLLECTOR_PROBE = """
import gc, json, sys
from memsync.start import entry
early = []  # collections that began before the CLI had loaded
gc.callbacks.append(lambda phase, info: phase == "start" and early.append(
    not hasattr(sys.modules.get("memsync.cli"), "MODULE_OF")))
sys.argv = ["memsync", "search", "anything", "--json"]
try:
    entry()
except SystemExit:
    pass
print(json.dumps({"early": sum(early), "later": len(early) - sum(early),
                  "enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
"""


def test_the_console_script_is_the_start_module():
    scripts = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert scripts["memsync"] == "memsync.start:entry"


def test_no_collection_runs_while_the_cli_loads_and_the_collector_is_back_after(vault, cli):
    (vault / "a.md").write_text("---\ntitle: anything\n---\nanything at all\n", encoding="utf-8")
    cli("index")
    proc = subprocess.run([sys.executable, "-c", COLLECTOR_PROBE], capture_output=True, text=True, timeout=60)
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    # Loading click and the CLI allocates enough for dozens of collections with the collector
    # on (28 in a `memsync search` measured so); none may start before the CLI is loaded.
    assert found["early"] == 0, proc.stderr
    assert found["enabled"] is True
    assert found["frozen"] > 10_000  # the modules' objects, out of the collector's reach
