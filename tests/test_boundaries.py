"""Module boundaries: the pure core imports no outside system, and the read path stays light."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memsync"
PURE = ["cjk", "search/query", "model", "dates", "paging", "errors", "notes"]
OUTSIDE = {"sqlite3", "click", "mcp", "watchdog"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("module", PURE)
def test_pure_core_touches_no_outside_system(module):
    assert imported_modules(PACKAGE / f"{module}.py").isdisjoint(OUTSIDE)


def test_only_index_imports_sqlite3():
    users = {p.stem for p in PACKAGE.rglob("*.py") if "sqlite3" in imported_modules(p)}
    assert users <= {"index"}


def test_read_path_does_not_import_heavy_modules(vault, cli):
    cli("index")
    probe = (
        "import sys, json\n"
        "from memsync.cli import main\n"
        "for args in (['search', 'anything'], ['stats'], ['--help']):\n"
        "    try:\n"
        "        main(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ['watchdog', 'mcp', 'frontmatter', 'yaml', 'anyio', 'pydantic']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == [], proc.stderr
