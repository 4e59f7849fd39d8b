"""A folder memsync may not read (chmod 000, or no x) leaves its cards out with a problem that
says so, in `memsync index`, a rebuild, stats and doctor alike, and on the folder-stamp path of a
big survey; made readable again, its cards come back under their ids and the problem goes.
Run in subprocesses that cannot read past a mode (test_watch_inodes.without_root_reads)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import MEMSYNC_BIN, write_card
from .test_watch_inodes import without_root_reads

FOLDER_DENIED = "folder cannot be read (permission denied); make it readable, e.g. chmod u+rx"


@pytest.fixture
def notes(vault: Path) -> Path:
    for i in range(3):
        write_card(vault, f"sub/n{i}.md", f"sub note {i}", f"a note in the folder to close, {i}")
        write_card(vault, f"top/t{i}.md", f"top note {i}", f"a note in a folder left open, {i}")
    write_card(vault, "sub/deep/d.md", "deep note", "a note below the folder to close")
    return vault


def memsync(*args: str) -> tuple[int, dict | str]:
    proc = subprocess.run([*without_root_reads(), MEMSYNC_BIN, *args], capture_output=True, text=True,
                          timeout=120)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        return proc.returncode, proc.stdout + proc.stderr


def ids() -> dict[str, str]:
    code, out = memsync("search", "note", "-n", "20", "--json")
    assert code == 0, out
    assert isinstance(out, dict)
    return {hit["path"]: hit["id"] for hit in out["hits"]}


def denied(report: dict) -> list[str]:
    return sorted(p["path"] for p in report["problems"] if p["message"] == FOLDER_DENIED)


@pytest.mark.parametrize("mode", [0o000, 0o644])  # neither read nor entered; read, not entered
def test_a_folder_that_cannot_be_read_is_a_problem_until_it_can(notes, mode):
    code, out = memsync("index", "--json")
    assert code == 0 and len(out["problems"]) == 0, out
    before = ids()
    assert len(before) == 7
    (notes / "sub").chmod(mode)
    try:
        code, out = memsync("index", "--json")
        assert code == 0 and out["removed"] == 4 and denied(out) == ["sub/"], out
        code, out = memsync("stats", "--json")
        assert {(p["path"], p["message"]) for p in out["problems"]} == {("sub/", FOLDER_DENIED)}
        code, out = memsync("doctor")
        assert code == 1 and f"vault:sub/: {FOLDER_DENIED}" in out, out
        code, out = memsync("index", "--rebuild", "--json")
        assert code == 0 and denied(out) == ["sub/"], out
        assert ids() == {p: i for p, i in before.items() if p.startswith("top/")}
    finally:
        (notes / "sub").chmod(0o755)
    code, out = memsync("index", "--json")
    assert code == 0 and out["added"] == 4 and out["problems"] == [], out
    assert ids() == before
    code, out = memsync("doctor")
    assert code == 0, out


# A big survey (memsync.survey, made big here), which does not list folders whose stamps hold.
BIG_SURVEY = """
import json, sys, time
from memsync import api, config, reading, survey, treewalk
from memsync.sync import Indexer
survey.PROCESSES_FROM, treewalk.WALK_SAMPLE, treewalk.SLOW_STAT_NS = 1, 0, 10**12
survey.PARTS_PER_WORKER = 1
time.sleep(reading.RACY_NS / 1e9 + 0.05)  # past the racy window: the folders get stamps
with api.open_index(config.load()) as index:
    report = Indexer(index, config.load().sources, workers=int(sys.argv[1])).reconcile()
    print(json.dumps({"problems": report.problems, "stamps": index._conn.execute(
        "SELECT count(*) FROM folder_stamps").fetchone()[0]}))
"""


@pytest.mark.parametrize("workers", [1, 2])
def test_a_folder_stamp_does_not_hide_a_folder_that_cannot_be_read(notes, workers):
    def reconcile() -> dict:
        proc = subprocess.run([*without_root_reads(), sys.executable, "-c", BIG_SURVEY, str(workers)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    assert memsync("index", "--json")[0] == 0
    before = ids()
    assert reconcile()["stamps"] > 0  # the folders are stamped
    (notes / "sub").chmod(0o000)
    try:
        for _ in range(2):  # and the second time, with the stamps the first one left
            assert denied(reconcile()) == ["sub/"]
            assert sorted(ids()) == sorted(p for p in before if p.startswith("top/"))
    finally:
        (notes / "sub").chmod(0o755)
    assert reconcile()["problems"] == []
    assert ids() == before


@pytest.mark.parametrize("mode", [0o000, 0o644])
def test_a_watcher_says_a_folder_cannot_be_read_until_it_can(vault, watcher, mode):
    import os

    from .test_watch_inodes import wait_for_problem
    from .watching import converge, mark, put

    inside, outside = mark(), mark()
    put(vault, "d/a.md", inside)
    put(vault, "top.md", outside)
    proc = watcher(under=without_root_reads())
    converge({"d/a.md": inside, "top.md": outside})
    os.chmod(vault / "d", mode)
    try:
        converge({"top.md": outside}, gone={inside})
        wait_for_problem("d/", True)
    finally:
        os.chmod(vault / "d", 0o755)
    converge({"d/a.md": inside, "top.md": outside})
    wait_for_problem("d/", False)
    assert proc.stop() == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


def test_a_folder_that_cannot_be_entered_is_a_problem_whatever_it_holds(vault, watcher):
    """Read but not entered (chmod u=r): an empty folder, one holding only a folder, one holding
    no note are closed as much as one whose notes cannot be stat'ed. The watcher, `memsync index`
    and doctor name the same folders: the closed ones, not a folder below one."""
    import os

    from .test_watch_inodes import problems
    from .watching import DEADLINE, converge, mark, put

    top = mark()
    put(vault, "top.md", top)
    for folder in ("empty", "only/sub", "pics"):
        (vault / folder).mkdir(parents=True)
    (vault / "pics" / "a.png").write_bytes(b"\x89PNG")
    closed = ["empty/", "only/", "pics/"]
    proc = watcher(under=without_root_reads())
    converge({"top.md": top})
    for folder in closed:
        os.chmod(vault / folder, 0o444)
    try:
        deadline = time.monotonic() + DEADLINE
        while sorted(problems()) != closed:  # the watcher's word
            assert time.monotonic() < deadline, problems()
            time.sleep(0.05)
        code, out = memsync("index", "--json")
        assert code == 0 and denied(out) == closed, out
        code, out = memsync("doctor")
        assert code == 1 and all(f"vault:{folder}: {FOLDER_DENIED}" in out for folder in closed), out
        assert "only/sub/" not in out
    finally:
        for folder in closed:
            os.chmod(vault / folder, 0o755)
    code, out = memsync("index", "--json")
    assert code == 0 and out["problems"] == [], out
    assert proc.stop() == 0, proc.stderr()
