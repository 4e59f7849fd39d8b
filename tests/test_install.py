"""The package as a user gets it: sdist and wheel built from this checkout, the wheel installed
non-editable into a fresh venv, and the smoke script run through that installed command only.

The editable install `make test` uses would hide a module or data file the wheel leaves out;
these tests are what catches it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from .conftest import compiler_at_hand

# Building the sdist and wheel, then installing with pip, pipx and uv takes minutes on a loaded
# machine (pipx alone 115 s there, with its setup); each subprocess has its own bound as well.
pytestmark = pytest.mark.timeout(900)

REPO = Path(__file__).resolve().parent.parent
SMOKE = Path(__file__).with_name("smoke_installed.py")
# What ships: the engine and the adapters (installed as memsync.adapters), every file but caches.
SHIPPED_TREES = {"memsync": "memsync", "adapters": "memsync/adapters"}


def clean_env() -> dict:
    """The environment of a user's shell: no memsync settings, no Python path into the checkout."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("MEMSYNC_", "PYTHON", "VIRTUAL_ENV"))}


# Built, not shipped as they are: the C extension's module (the editable install builds it in
# place) and compiled bytecode. A C source ships in the sdist; the wheel holds what it built.
BUILT = {".pyc", ".so", ".pyd"}
C_SOURCES = {".c"}


def source_files() -> list[tuple[str, str]]:
    """Every file of the shipped trees as (tree, path inside it), caches and builds left out."""
    out = []
    for tree in SHIPPED_TREES:
        for path in (REPO / tree).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in BUILT:
                out.append((tree, path.relative_to(REPO / tree).as_posix()))
    return out


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> Path:
    """sdist, then the wheel built from that sdist (python -m build does both, in that order),
    so a file missing from the sdist is missing from the wheel too."""
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
                          capture_output=True, text=True, cwd=out, env=clean_env(), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def installed(dist, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed (not editable); returns its bin folder."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (wheel,) = dist.glob("*.whl")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--no-input", str(wheel)],
        capture_output=True, text=True, cwd=venv, env=clean_env(), timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv / "bin"


def smoke(bin_dir: Path, python: Path, cwd: Path) -> subprocess.CompletedProcess:
    # -I: the script's folder (tests/) is not put on sys.path, nor is anything from the environment.
    return subprocess.run([str(python), "-I", str(SMOKE), str(bin_dir / "memsync")],
                          capture_output=True, text=True, cwd=cwd, env=clean_env(), timeout=300)


def test_the_wheel_holds_every_file_of_the_package(dist):
    (wheel,) = dist.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"{SHIPPED_TREES[tree]}/{rel}" for tree, rel in source_files()
              if Path(rel).suffix not in C_SOURCES}
    if compiler_at_hand():  # the token stream and the overlaps in C (setup.py); optional without
        wanted |= {f"memsync/{name}" + sysconfig.get_config_var("EXT_SUFFIX")
                   for name in ("_tokenstream", "_overlap")}
    missing = sorted(wanted - names)
    assert not missing, f"the wheel lacks {missing}: check packages / package_data in setup.py"


def test_the_sdist_holds_every_file_of_the_package(dist):
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:  # names are memsync-<version>/<path in the checkout>
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    missing = sorted({f"{tree}/{rel}" for tree, rel in source_files()} - names)
    assert not missing, f"the sdist lacks {missing}: check MANIFEST.in / setup.py"


def install_hint(python: Path, cwd: Path) -> str:
    proc = subprocess.run([str(python), "-I", "-c", "from memsync.semantic import install_hint; "
                           "print(install_hint())"], capture_output=True, text=True, cwd=cwd,
                          env=clean_env(), check=True)
    return proc.stdout


def test_the_installed_wheel_names_its_own_wheel_to_add_the_extra(installed, dist, tmp_path):
    (wheel,) = dist.glob("*.whl")
    hint = install_hint(installed / "python", tmp_path)
    assert f"-m pip install '{wheel}[semantic]'" in hint and "'memsync[semantic]'" not in hint


def test_the_installed_wheel_uses_the_c_extensions_it_built(installed, tmp_path):
    if not compiler_at_hand():
        pytest.skip("no C compiler: the wheel is built without the C extensions")
    proc = subprocess.run([str(installed / "python"), "-I", "-c",
                           "from memsync import cjk, _tokenstream, _overlap; "
                           "from memsync.lifecycle import shingles; "
                           "assert cjk._stream is _tokenstream.stream; "
                           "assert cjk._lower is _tokenstream.lower; "
                           "assert shingles._candidates_in_c is _overlap.candidates; "
                           "print(cjk.to_index_text('同步Sync'))"],
                          capture_output=True, text=True, cwd=tmp_path, env=clean_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "同步 步 sync"


def test_the_installed_wheel_passes_the_smoke_run(installed, tmp_path):
    proc = smoke(installed, installed / "python", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "smoke: every step passed" in proc.stdout
    print(proc.stdout)  # shown with `pytest -s`: the transcript of the run


def test_the_installed_command_does_not_run_from_the_checkout(installed, tmp_path):
    code = "import memsync, sys; print(memsync.__file__)"
    proc = subprocess.run([str(installed / "python"), "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=clean_env(), check=True)
    location = Path(proc.stdout.strip()).resolve()
    assert REPO not in location.parents, f"the fresh venv imports memsync from {location}"


# `pipx install .` and `uv tool install .`: each builds from a folder the way a user's checkout
# is, into its own venv. A copy of the checkout, so no build/ left over in it can leak into the
# package and nothing of theirs is written into the working tree.
COPY_IGNORE = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis",
               ".ruff_cache", "bench")


@pytest.fixture(scope="session")
def tool_bin(tmp_path_factory) -> Path:
    """pipx and uv, installed from PyPI into a throwaway venv."""
    venv = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--no-input", "pipx", "uv"],
        capture_output=True, text=True, env=clean_env(), timeout=600,
    )
    if proc.returncode != 0:
        pytest.skip(f"pipx and uv could not be installed from PyPI here: {proc.stderr[-500:]}")
    return venv / "bin"


def tool_install(tool: str, tool_bin: Path, checkout: Path, root: Path) -> tuple[Path, Path]:
    """Install `checkout` with pipx or uv under `root`; returns (memsync command, its python)."""
    env = clean_env()
    if tool == "pipx":
        env.update(PIPX_HOME=str(root / "pipx"), PIPX_BIN_DIR=str(root / "bin"))
        args = [str(tool_bin / "pipx"), "install", str(checkout)]
        python = root / "pipx" / "venvs" / "memsync" / "bin" / "python"
    else:
        env.update(UV_TOOL_DIR=str(root / "uv"), UV_TOOL_BIN_DIR=str(root / "bin"))
        args = [str(tool_bin / "uv"), "tool", "install", str(checkout)]
        python = root / "uv" / "memsync" / "bin" / "python"
    proc = subprocess.run(args, capture_output=True, text=True, cwd=root, env=env, timeout=600)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return root / "bin", python


@pytest.mark.parametrize("tool", ["pipx", "uv"])
def test_pipx_and_uv_tool_install_give_a_working_memsync(tool, tool_bin, tmp_path):
    if not (tool_bin / tool).exists():
        pytest.skip(f"{tool} did not install here")
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO, checkout, ignore=shutil.ignore_patterns(*COPY_IGNORE))
    bin_dir, python = tool_install(tool, tool_bin, checkout, tmp_path)
    want = "pipx install --force" if tool == "pipx" else "uv tool install --force"
    assert f"`{want} '{checkout}[semantic]'`" in install_hint(python, tmp_path)
    proc = smoke(bin_dir, python, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "smoke: every step passed" in proc.stdout
