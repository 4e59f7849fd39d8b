"""The session brief over MCP: a resource, a resource template and a prompt (memsync.brief).

Clients that show resources can attach `memsync://brief` (the project is the server's working
directory: a client starts a stdio server in the project it works on) or
`memsync://brief/{project}` (a folder's path, `~` allowed, or a project's name); a client with
prompts offers `brief`. None of them is a tool, so tools/list stays as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.resources.templates import ResourceSecurity

from memsync import brief as brief_mod
from memsync.config import Config
from memsync.errors import MemsyncError

URI = "memsync://brief"
TEMPLATE = "memsync://brief/{+project}"
AGENT = "mcp"
DESCRIBE = ("What to know before working here: this project's cards, what changed since the last "
            "brief, the most used cards (Markdown, about 1,200 tokens).")


def text(cfg: Config, project: str | None) -> str:
    """The brief's Markdown for `project` (a path or a name; None: the server's directory)."""
    if project is None:
        return brief_mod.make(cfg, os.getcwd(), agent=AGENT)["text"]
    where = os.path.expanduser(project.strip())
    if os.path.isabs(where) or os.path.isdir(where):
        return brief_mod.make(cfg, where, agent=AGENT)["text"]
    return brief_mod.make(cfg, name=project, agent=AGENT)["text"]


def register(server, now: Callable[[], Config]) -> None:
    def read(project: str | None) -> str:
        try:
            return text(now(), project)
        except MemsyncError as err:
            raise ResourceError(f"memsync brief: {err.message}") from None

    @server.resource(URI, name="brief", title="Session brief", description=DESCRIBE,
                     mime_type="text/markdown")
    def brief_here() -> str:
        return read(None)

    @server.resource(TEMPLATE, name="brief-for-project", title="Session brief for a project",
                     description=DESCRIBE.replace("this project's", "that project's") +
                     " project: a folder's path or a project's name.",
                     mime_type="text/markdown",
                     security=ResourceSecurity(reject_path_traversal=False, reject_absolute_paths=False))
    def brief_for(project: str) -> str:
        return read(project)

    @server.prompt(name="brief", title="Session brief",
                   description="Start with what memsync remembers of this project. project: a "
                               "folder's path or a project's name (default: the server's folder).")
    def brief_prompt(project: str | None = None) -> str:
        return read(project)
