"""Several processes capturing at once: every card lands on disk and in the index, none is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from memsync import api, config, notes

PER_PROCESS = 50
# One writer process: waits for the start signal, then runs the real CLI 50 times in a row.
WRITER = """
import io, json, os, sys, time
from contextlib import redirect_stdout
from memsync.cli import main
go, prefix, who = sys.argv[1:4]
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.001)
results = []
for n in range(int(sys.argv[4])):
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            main(["capture", "--title", f"{prefix} card {n}", "--body",
                  f"written by {who}: fact number {n} about the {prefix} cluster", "--json"])
            code = 0
        except SystemExit as stop:
            code = stop.code or 0
    results.append({"code": code, "out": out.getvalue()})
print(json.dumps(results))
"""


def test_four_processes_capturing_at_once_lose_nothing(vault, tmp_path):
    go = tmp_path / "go"
    writers = [("shared", "A"), ("shared", "B"), ("solo-c", "C"), ("solo-d", "D")]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(go), prefix, who, str(PER_PROCESS)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        for prefix, who in writers
    ]
    go.write_text("go")
    outputs = [proc.communicate(timeout=120) for proc in procs]

    results = {}
    for (_prefix, who), proc, (stdout, stderr) in zip(writers, procs, outputs):
        assert proc.returncode == 0, stderr
        assert "locked" not in stdout + stderr
        runs = json.loads(stdout)
        assert [r["code"] for r in runs] == [0] * PER_PROCESS, runs
        results[who] = [json.loads(r["out"]) for r in runs]

    on_disk = {}
    for path in vault.rglob("*.md"):
        rel = path.relative_to(vault).as_posix()
        on_disk[rel] = notes.parse(path.read_bytes(), rel).body
    bodies = [f"written by {who}: fact number {n} about the {prefix} cluster"
              for prefix, who in writers for n in range(PER_PROCESS)]
    assert sorted(on_disk.values()) == sorted(bodies)  # every card, each exactly once

    with api.open_index(config.load()) as index:
        indexed = {row["path"]: row["body"] for row in index.cards("vault")}
    assert indexed == on_disk
    for who in "ABCD":
        assert all(r["status"] == "created" and r["indexed"] is True for r in results[who])

    # The shared titles: one of each pair holds the plain name, the other is -2 and says conflict.
    for n in range(PER_PROCESS):
        pair = sorted((results[w][n]["path"], results[w][n]["conflict"]) for w in "AB")
        assert pair == [(f"03-Knowledge/shared card {n}-2.md", True), (f"03-Knowledge/shared card {n}.md", False)]
    assert not any(r["conflict"] for w in "CD" for r in results[w])
