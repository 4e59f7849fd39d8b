"""The session brief over MCP, read through the SDK's stdio client as an agent's client would: the
`memsync://brief` resource (the server's folder), its template with a project, and the prompt."""

from __future__ import annotations

import json
import os
import time
import urllib.parse
from pathlib import Path

import anyio
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .conftest import MEMSYNC_BIN, write_card
from .mcp_helpers import DEADLINE, TOOLS


def _vault(tmp_path, vault, cli):
    shop = tmp_path / "code" / "shop"
    (shop / ".git").mkdir(parents=True)
    write_card(vault, "02-Projects/shop-deploy.md", "Shop deploy", "Deploy with make deploy from the ops box.\n",
               project="shop")
    write_card(vault, "02-Projects/blog.md", "Blog theme", "The blog uses the hugo-paper theme.\n", project="blog")
    write_card(vault, "02-Projects/shop-db.md", "Shop db", "password = hunter2xyz9 for the shop database\n",
               project="shop")
    assert cli("index")[0] == 0
    # a file written in the second of a brief is told again by the next one: not here
    time.sleep(1.01 - time.time() % 1)
    return shop


def test_the_brief_resource_template_and_prompt_through_the_sdk_client(tmp_path, vault, cli):
    server_log = tmp_path / "server.log"
    shop = _vault(tmp_path, vault, cli)
    params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp"], env=os.environ.copy(), cwd=str(shop))
    seen: dict = {}

    async def main():
        with anyio.fail_after(DEADLINE), server_log.open("a") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write, read_timeout_seconds=DEADLINE) as session):
                await session.initialize()
                seen["tools"] = {t.name for t in (await session.list_tools()).tools}
                seen["resources"] = [str(r.uri) for r in (await session.list_resources()).resources]
                seen["templates"] = [t.uri_template for t in (await session.list_resource_templates()).resource_templates]
                seen["prompts"] = [p.name for p in (await session.list_prompts()).prompts]
                here = await session.read_resource("memsync://brief")
                seen["here"] = here.contents[0].text
                seen["mime"] = here.contents[0].mime_type
                blog = await session.read_resource("memsync://brief/blog")
                seen["blog"] = blog.contents[0].text
                by_path = await session.read_resource("memsync://brief/" + urllib.parse.quote(str(shop)))
                seen["by_path"] = by_path.contents[0].text
                prompt = await session.get_prompt("brief", {"project": "blog"})
                seen["prompt"] = prompt.messages[0].content.text

    anyio.run(main)
    assert seen["tools"] == TOOLS  # the brief is no tool: tools/list is unchanged
    assert seen["resources"] == ["memsync://brief"]
    assert seen["templates"] == ["memsync://brief/{+project}"]
    assert seen["prompts"] == ["brief"]
    assert seen["mime"] == "text/markdown"
    assert seen["here"].startswith(f"# Memory brief: shop ({shop})")
    assert "Shop deploy" in seen["here"] and "Blog theme" not in seen["here"]
    assert "hunter2" not in seen["here"] and "Held back: 1 card" in seen["here"]
    assert seen["by_path"] == seen["here"]  # the same project, nothing changed in between
    assert "Blog theme" in seen["blog"] and "Shop deploy" not in seen["blog"]
    assert seen["prompt"].splitlines()[0] == "# Memory brief: blog"
    assert "memory_capture" in seen["prompt"].splitlines()[-1]
    assert "Traceback" not in server_log.read_text()


def test_a_brief_without_an_index_is_an_error_that_says_what_to_do(tmp_path):
    server_log = tmp_path / "server.log"
    params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp"], env=os.environ.copy(), cwd=str(tmp_path))

    async def main():
        with anyio.fail_after(DEADLINE), server_log.open("a") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write, read_timeout_seconds=DEADLINE) as session):
                await session.initialize()
                try:
                    await session.read_resource("memsync://brief")
                except Exception as exc:  # the SDK raises the JSON-RPC error
                    return str(exc)
                return None

    message = anyio.run(main)
    assert message and "memsync brief" in message and "memsync index" in message


def test_briefs_asked_for_at_once_all_answer_and_keep_one_mark(tmp_path, vault, cli):
    """The server answers requests on several threads: each brief notes its time in brief.json,
    and none may trip over another's write (they once shared a temp file, and some failed)."""
    server_log = tmp_path / "server.log"
    shop = _vault(tmp_path, vault, cli)
    params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp"], env=os.environ.copy(), cwd=str(shop))
    texts: list[str] = []

    async def one(session, n: int) -> None:
        if n % 2:
            texts.append((await session.read_resource("memsync://brief")).contents[0].text)
        else:
            texts.append((await session.get_prompt("brief", {})).messages[0].content.text)

    async def main():
        with anyio.fail_after(DEADLINE), server_log.open("a") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write, read_timeout_seconds=DEADLINE) as session):
                await session.initialize()
                async with anyio.create_task_group() as group:
                    for n in range(16):
                        group.start_soon(one, session, n)

    anyio.run(main)
    assert len(texts) == 16 and all(t.startswith(f"# Memory brief: shop ({shop})") for t in texts)
    home = Path(os.environ["MEMSYNC_HOME"])
    assert list(json.loads((home / "brief.json").read_text())["last_brief"]) == [f"mcp:{shop}"]
    assert not [p.name for p in home.iterdir() if p.name.endswith(".tmp")]  # no temp file left
    log = server_log.read_text()
    assert "Traceback" not in log and "could not note" not in log
