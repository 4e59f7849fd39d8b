"""The MCP set-up for the clients people use, as `memsync init` prints it.

Pure: given the absolute path of the installed command and the data home, each client gets the
exact text to paste. The home goes in as `--home`, so a server started by a desktop app (with
none of the shell's environment) reads the same config.json, vault and index as the CLI.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path


def installed_command() -> Path:
    """The `memsync` executable this process runs from, as an absolute path.

    Not resolved through symlinks: pipx and `uv tool` put a link on PATH whose target moves on
    reinstall, while the link itself stays."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "memsync":
        found = shutil.which(str(argv0)) if not argv0.parent.parts else str(argv0)
        return Path(os.path.abspath(found or argv0))
    beside = Path(sys.executable).with_name("memsync")  # run as `python -m` or in-process
    if beside.exists():
        return Path(os.path.abspath(beside))
    on_path = shutil.which("memsync")
    return Path(os.path.abspath(on_path)) if on_path else beside


def server_args(home: Path) -> list[str]:
    return ["--home", str(home), "mcp"]


def server_json(command: Path, home: Path) -> str:
    entry = {"mcpServers": {"memsync": {"command": str(command), "args": server_args(home)}}}
    return json.dumps(entry, ensure_ascii=False, indent=2)


def snippets(command: Path, home: Path) -> dict[str, dict[str, str]]:
    """Client name -> where it goes and what to paste."""
    cli = " ".join(shlex.quote(part) for part in [str(command), *server_args(home)])
    return {
        "claude_code": {
            "where": "run in a shell",
            "text": f"claude mcp add -s user memsync -- {cli}",
        },
        "claude_desktop": {
            "where": "add to claude_desktop_config.json",
            "text": server_json(command, home),
        },
        "cursor": {
            "where": "add to ~/.cursor/mcp.json (every project) or .cursor/mcp.json (one)",
            "text": server_json(command, home),
        },
    }
