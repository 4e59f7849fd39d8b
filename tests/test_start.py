"""The console script's start (memsync.start): the cyclic collector stays off while the CLI
loads, and is on again when the command runs."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

PROBE = """
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
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    # Loading click and the CLI allocates enough for dozens of collections with the collector
    # on (28 in a `memsync search` measured so); none may start before the CLI is loaded.
    assert found["early"] == 0, proc.stderr
    assert found["enabled"] is True
    assert found["frozen"] > 10_000  # the modules' objects, out of the collector's reach
