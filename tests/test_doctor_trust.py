"""`memsync doctor` never cries wolf: a database another process is writing is busy, not damaged;
a read-only index is not writable (with the fix), and `--fix` on it says so without a traceback."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from memsync import config
from memsync.doctor import exam

from .conftest import write_card
from .mcp_helpers import server_log

__all__ = ["server_log"]  # a fixture, imported for the tests below

HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT OR REPLACE INTO meta VALUES ('held', 'by a writer')")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


@pytest.fixture
def indexed(vault, cli) -> Path:
    write_card(vault, "03-Knowledge/ecs.md", "ECS deploy address", "the deploy address is 10.0.0.5")
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "the nginx site root is /srv/www")
    assert cli("index")[0] == 0
    return config.load().db.path


@contextmanager
def writer_holding_the_lock(db: Path, seconds: float = 30):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "holding"
        yield proc
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_doctor_under_a_writer_holding_the_lock_says_busy_not_damaged(indexed, run_cli):
    with writer_holding_the_lock(indexed):
        result = exam.run(config.load(), wait=0.2)
        assert [f["check"] for f in result["findings"]] == ["busy"], result
        code, out, err = run_cli("doctor")  # the command's own bounded wait
        fixing = exam.run(config.load(), fix=True, wait=0.2)
    assert code == 1 and "busy (another process is writing)" in out and "Traceback" not in err
    assert "damaged" not in out
    assert fixing["fixed"] == [] and "busy" in fixing["not_fixed"]
    assert exam.run(config.load())["sound"]


def test_doctor_beside_a_busy_writer_never_says_damaged(indexed):
    """50 checks while another connection writes in short bursts, as a watcher does."""
    stop = threading.Event()

    def churn():
        rng = random.Random(7)
        with closing(sqlite3.connect(indexed, isolation_level=None, timeout=30)) as conn:
            n = 0
            while not stop.is_set():
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('churn', ?)", (str(n),))
                time.sleep(rng.uniform(0, 0.02))
                conn.execute("COMMIT")
                n += 1
                time.sleep(rng.uniform(0, 0.003))

    writer = threading.Thread(target=churn)
    writer.start()
    try:
        cfg = config.load()
        results = [exam.run(cfg, wait=2.0) for _ in range(50)]
    finally:
        stop.set()
        writer.join()
    said = [f for r in results for f in r["findings"]]
    assert not [f for f in said if f["check"] == "integrity" or "damaged" in f["message"]], said
    assert all(f["check"] == "busy" for f in said), said


def make_read_only(path: Path) -> None:
    """Not writable, even by root (the tests may run as root, whom modes do not stop)."""
    if hasattr(sys, "getwindowsversion"):
        pytest.skip("POSIX modes")
    import os

    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
            pytest.skip("cannot make a file read-only for root here (no chattr)")
    else:
        path.chmod(path.stat().st_mode & ~0o222)


def make_writable(path: Path) -> None:
    import os

    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    else:
        path.chmod(path.stat().st_mode | 0o200)


@pytest.fixture
def read_only():
    made: list[Path] = []

    def lock(path: Path) -> None:
        make_read_only(path)
        made.append(path)

    yield lock
    for path in reversed(made):
        make_writable(path)


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_index_is_not_writable_with_the_fix_and_fix_says_so(indexed, run_cli,
                                                                        read_only, what):
    with closing(sqlite3.connect(indexed)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (indexed.parent / "memsync.db").chmod(0o600)
    read_only(indexed if what == "file" else indexed.parent)
    code, out, err = run_cli("doctor", "--json")
    assert code == 1 and "Traceback" not in err, err
    [finding] = [f for f in out["findings"] if f["check"] == "writable"]
    shut = indexed if what == "file" else indexed.parent
    assert "not writable" in finding["message"]
    assert f"chmod {'600' if what == 'file' else '700'} {shut}" in finding["fix"]  # the home's own modes
    assert not [f for f in out["findings"] if f["check"] == "integrity"], out
    code, out, err = run_cli("doctor", "--fix")
    assert code == 1 and "Traceback" not in err, err
    assert "nothing was repaired: the index is not writable" in out
    write_card(indexed.parent.parent / "vault", "new.md", "new", "a card the index must take in")
    code, out, err = run_cli("index")  # SQLite may still write its -wal file beside a read-only one
    assert "Traceback" not in err and (code == 0 or "memsync: " in err), err


def test_memory_stats_check_under_a_writer_holding_the_lock_says_busy(indexed, server_log):
    from .mcp_helpers import scenario, tool  # the MCP SDK loads for this test only

    async def body(session):
        with writer_holding_the_lock(indexed):
            data = await tool(session, "memory_stats", check=True)
        checks = [f["check"] for f in data["doctor"]["findings"]]
        assert "busy" in checks and "integrity" not in checks, data["doctor"]
        assert not any("damaged" in f["message"] for f in data["doctor"]["findings"])

    scenario(body)(server_log)


def test_a_home_at_555_is_told_one_chmod_that_lets_doctor_fix_and_keeps_it_private(indexed, run_cli, read_only):
    """`chmod u+w` would leave it open to others, and `doctor --fix` is refused while the home
    cannot be written: both findings name `chmod 700 HOME`, which does both."""
    home = indexed.parent
    for f in home.iterdir():
        f.chmod(0o600)
    home.chmod(0o555)
    read_only(home)
    code, out, err = run_cli("doctor", "--json")
    fixes = {f["check"]: f["fix"] for f in out["findings"]}
    assert fixes["writable"] == f"make it writable (chmod 700 {home}), then run `memsync doctor` again"
    assert fixes["permissions"] == f"run `chmod 700 {home}` (writable by you, private to you)"
    code, out, err = run_cli("doctor", "--fix")
    assert code == 1 and f"chmod 700 {home}" in out
    make_writable(home)
    subprocess.run(f"chmod 700 {home}", shell=True, check=True)
    code, out, err = run_cli("doctor", "--json")
    assert code == 0 and out["findings"] == [], out


def test_capture_into_a_home_it_cannot_write_names_the_chmod_doctor_names(indexed, run_cli, read_only):
    home = indexed.parent
    for f in home.iterdir():
        f.chmod(0o600)
    home.chmod(0o500)
    read_only(home)
    code, out, err = run_cli("capture", "--title", "Queue", "--body", "Jobs go through the rabbitmq queue shop-jobs.")
    assert code == 0 and f"make it writable by you (chmod 700 {home})" in out, out
    code, out, err = run_cli("doctor", "--json")
    assert [f["fix"] for f in out["findings"] if f["check"] == "writable"] == [
        f"make it writable (chmod 700 {home}), then run `memsync doctor` again"]
