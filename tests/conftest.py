"""Shared fixtures: a real data home and vault on disk, the CLI in-process and as a subprocess,
and real `memsync watch` processes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsync.cli import main

MEMSYNC_BIN = str(Path(sys.executable).with_name("memsync"))


def pytest_addoption(parser):
    parser.addoption("--run-stress", action="store_true", help="run tests marked stress")


# `make test`'s per-test timeout (setup.cfg) guards the quick suite; a stress test is long by
# design (thousands of examples, a soak), so it gets this unless it names its own.
STRESS_TIMEOUT = 3600


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-stress"):
        for item in items:
            if item.get_closest_marker("stress") and not item.get_closest_marker("timeout"):
                item.add_marker(pytest.mark.timeout(STRESS_TIMEOUT))
        return
    skip = pytest.mark.skip(reason="stress test: run with `make stress`")
    for item in items:
        if item.get_closest_marker("stress"):  # not `in item.keywords`: a folder named stress
            item.add_marker(skip)


def pytest_sessionfinish(session, exitstatus):
    """Tests kill writers mid-load, and a killed writer leaves its readers' hand-over folder
    (memsync.workerpool) for the next pool to remove: removed at the end of the run instead, so a
    run leaves nothing in /dev/shm."""
    from memsync import workerpool

    workerpool._sweep(workerpool.handover_root())


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """Every test gets its own data home and vault; nothing touches ~/.memsync."""
    home = tmp_path / "home"
    vault = tmp_path / "vault"
    vault.mkdir()
    monkeypatch.setenv("MEMSYNC_HOME", str(home))
    monkeypatch.setenv("MEMSYNC_VAULT", str(vault))
    monkeypatch.delenv("MEMSYNC_DB", raising=False)
    return home


@pytest.fixture
def fake_user(tmp_path, monkeypatch) -> Path:
    """A HOME of its own and a project folder to run in, for `memsync init`: the machine's real
    agent memory files and Obsidian vaults are never looked at."""
    user = tmp_path / "user"
    project = tmp_path / "project"
    user.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("MEMORY_FILE_PATH", raising=False)
    monkeypatch.chdir(project)
    return user


@pytest.fixture
def vault(home) -> Path:
    return Path(os.environ["MEMSYNC_VAULT"])


def compiler_at_hand() -> bool:
    """Whether the C compiler Python was built with is here: what setup.py's optional C
    extension (memsync._tokenstream) needs to be built."""
    return shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is not None


def every_code_point(step: int, placed) -> Iterator[tuple[int, str]]:
    """Texts that hold every code point, `step` of them a text, each written as `placed(char)`
    makes it (among neighbours of each kind): what a C twin of a Python cut is compared on."""
    for start in range(0, sys.maxunicode + 1, step):
        yield start, "".join(placed(chr(c)) for c in range(start, min(start + step, sys.maxunicode + 1)))


def write_card(vault: Path, rel: str, title: str | None = None, body: str = "", **meta) -> Path:
    """Write a card file the way a person would; returns its path."""
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    if title is not None or meta:
        lines.append("---")
        if title is not None:
            lines.append(f"title: {title}")
        for key, value in meta.items():
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value}")
        lines.append("---")
    path.write_text("\n".join(lines) + ("\n" if lines else "") + body, encoding="utf-8")
    return path


@pytest.fixture
def cli():
    """Run the CLI in-process; returns (exit_code, parsed JSON or stdout text)."""
    runner = CliRunner()

    def run(*args, stdin: str | None = None):
        result = runner.invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)
        out = result.stdout
        try:
            return result.exit_code, json.loads(out)
        except ValueError:
            return result.exit_code, out

    return run


@pytest.fixture
def run_cli():
    """Run the installed `memsync` as a real subprocess."""

    def run(*args, stdin: str | None = None, timeout: float = 60):
        proc = subprocess.run(
            [MEMSYNC_BIN, *[str(a) for a in args]], input=stdin, capture_output=True,
            text=True, timeout=timeout, env=os.environ.copy(),
        )
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            data = proc.stdout
        return proc.returncode, data, proc.stderr

    return run


# --- a real `memsync watch` ------------------------------------------------------------------

WATCH_DEADLINE = 30.0  # a bound on a hang, not a measure

RUNNING: list[subprocess.Popen] = []


def dump_watcher_stacks() -> None:
    """Ask every live watcher to print its threads' stacks to its log (shown on failure)."""
    for proc in RUNNING:
        if proc.poll() is None:
            proc.send_signal(signal.SIGUSR1)
    time.sleep(0.5)  # the dump is asynchronous; this only runs when a test has already failed


class Proc:
    """A started `memsync watch` and the file its stderr goes to."""

    def __init__(self, proc: subprocess.Popen, log: Path):
        self.proc, self.log = proc, log

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, needle: str, timeout: float = WATCH_DEADLINE) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.stderr():
            if self.proc.poll() is not None:
                pytest.fail(f"watcher exited {self.proc.returncode}: {self.stderr()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {needle!r} from the watcher: {self.stderr()}")
            time.sleep(0.01)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the watcher (SIGSTOP) for the body, so it reads every event the body makes at
        once when it goes on (SIGCONT). The kernel stops the threads one by one, after kill()
        has returned: the body begins only once every one of them is stopped, or the watcher
        could look at the disk halfway through it."""
        self.proc.send_signal(signal.SIGSTOP)
        try:
            deadline = time.monotonic() + WATCH_DEADLINE
            while not all_stopped(self.proc.pid):
                if time.monotonic() > deadline:
                    pytest.fail("the watcher did not stop on SIGSTOP")
                time.sleep(0.001)
            yield
        finally:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self, sig=signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=WATCH_DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            self.proc.wait()
            pytest.fail(f"the watcher did not stop: {self.stderr()}")


def all_stopped(pid: int) -> bool:
    """Whether every thread of process `pid` is stopped by a signal (state T in its stat)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:  # a thread that has just ended
            continue
        if stat[stat.rindex(")") + 2] != "T":
            return False
    return True


@pytest.fixture
def watcher(tmp_path):
    """Start `memsync watch -vv ARGS` (by default waiting until it watches; `under`: a command
    that runs it, e.g. with fewer privileges); every one started is killed at the end, its log
    printed (pytest shows it when the test failed)."""
    started: list[Proc] = []

    def start(*args: str, ready: bool = True, under: tuple[str, ...] = ()) -> Proc:
        log = tmp_path / f"watch{len(started)}.log"
        with open(log, "wb") as err:
            proc = subprocess.Popen(
                [*under, MEMSYNC_BIN, "watch", "-vv", *args], stdout=subprocess.PIPE, stderr=err,
                env={**os.environ, "PYTHONFAULTHANDLER": "1"},
            )
        running = Proc(proc, log)
        started.append(running)
        RUNNING.append(proc)
        if ready:
            running.wait_for("start-up reconcile")
            running.wait_for("memsync: watching")
        return running

    yield start
    for running in started:
        if running.proc.poll() is None:
            running.proc.kill()
            running.proc.wait()
        if running.proc.stdout is not None:
            running.proc.stdout.close()
        print(f"--- watcher {running.proc.pid} stderr ---\n{running.stderr()}")  # shown on failure
    RUNNING.clear()


@pytest.fixture
def zone(monkeypatch):
    """Set this process's time zone (TZ and tzset); the one before comes back after the test."""

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def live_watcher(watcher):
    """One `memsync watch` for the whole test, which must stop cleanly, with no traceback."""
    proc = watcher()
    yield proc
    assert proc.stop() == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


@pytest.fixture(scope="session")
def template(tmp_path_factory):
    """An index of the semantic tests' cards with every card embedded: the model's work done once
    a session, here because several test modules copy its vectors (tests/semantic_index.py)."""
    from .semantic_index import embedded_index

    return embedded_index(tmp_path_factory.mktemp("semantic-template"))


@pytest.fixture
def memory(vault, template):
    """This test's vault and index of the semantic tests' cards, with the template's vectors."""
    from .semantic_index import with_vectors

    return with_vectors(vault, template)
