"""Without memsync[semantic] installed: asking for it is an error that says how to install it, in
the words of whoever asked (a person at the CLI, a model calling a tool), and nothing else changes.

The installed memsync runs with the model package hidden, as on a machine without the extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import anyio
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .conftest import write_card
from .helpers import WITHOUT_EXTRA, run_without_extra, sync


def test_index_embed_without_the_extra_advises_indexing_without_embed(vault):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    done = run_without_extra("index", "--embed")
    assert done.returncode == 2
    assert "pip install '.[semantic]'" in done.stderr and "index without --embed" in done.stderr
    assert "search without" not in done.stderr  # nobody searched
    done = run_without_extra("index", "--json")
    assert done.returncode == 0 and '"added": 1' in done.stdout


def test_memory_search_semantic_without_the_extra_names_the_argument_not_the_flag(vault, tmp_path):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    params = StdioServerParameters(command=sys.executable, args=["-c", WITHOUT_EXTRA, "mcp"],
                                   env=os.environ.copy())

    async def main():
        with anyio.fail_after(60), (tmp_path / "server.log").open("w") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                asked = await session.call_tool("memory_search", {"query": "database", "semantic": True})
                plain = await session.call_tool("memory_search", {"query": "database"})
                return asked, plain

    asked, plain = anyio.run(main)
    text = "".join(c.text for c in asked.content)
    assert asked.is_error and "memsync[semantic]" in text
    assert "--semantic" not in text and "search without semantic" in text
    assert "pipx install --force '.[semantic]'" in text  # other tools' commands stay as written
    assert not plain.is_error and "Backups" in "".join(c.text for c in plain.content)


def test_semantic_on_in_config_json_without_the_extra_is_a_doctor_finding_and_a_watch_warning(home, vault):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    done = run_without_extra("doctor", "--json")
    assert done.returncode == 0 and "semantic" not in done.stdout  # off: nothing to say
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    done = run_without_extra("doctor", "--json")
    assert done.returncode == 1, done
    (finding,) = [f for f in json.loads(done.stdout)["findings"] if f["check"] == "semantic"]
    assert "memsync[semantic] is not installed" in finding["message"]
    assert "pip install '.[semantic]'" in finding["fix"] and '"semantic": false' in finding["fix"]
    watch = subprocess.Popen([sys.executable, "-c", WITHOUT_EXTRA, "watch"], stderr=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, text=True, env=os.environ.copy())
    stop = threading.Timer(60, watch.terminate)  # a watcher that never says it: fail, not hang
    stop.start()
    try:
        said = []
        for line in watch.stderr:  # the watcher speaks once started; the warning follows at once
            said.append(line)
            if "warning" in line or len(said) > 5:
                break
    finally:
        stop.cancel()
        watch.terminate()
        watch.wait(timeout=30)
        watch.stderr.close()
    assert any("memsync[semantic] is not installed" in line for line in said), said
