"""Shared fixtures: a real data home and vault on disk, the CLI in-process and as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsync.cli import main

MEMSYNC_BIN = str(Path(sys.executable).with_name("memsync"))


def pytest_addoption(parser):
    parser.addoption("--run-stress", action="store_true", help="run tests marked stress")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-stress"):
        return
    skip = pytest.mark.skip(reason="stress test: run with `make stress`")
    for item in items:
        if item.get_closest_marker("stress"):  # not `in item.keywords`: a folder named stress
            item.add_marker(skip)


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
def vault(home) -> Path:
    return Path(os.environ["MEMSYNC_VAULT"])


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
