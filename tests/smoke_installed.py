"""Smoke run of an installed `memsync`, through that command only.

Usage: python -I smoke_installed.py /abs/path/to/bin/memsync

Run it with the interpreter of the venv that holds the installed package (its `mcp` is the client)
and from a working directory outside the checkout, so nothing from the source tree can be imported
by accident. It makes its own data home and vault, prints a transcript, and exits non-zero at the
first step that does not do what it should. Nothing here imports memsync.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

CARDS = {
    "03-Knowledge/服务器登录方式.md": (
        "---\ntitle: 服务器登录方式\nkind: knowledge\ntags: [ssh]\n---\n"
        "生产服务器登录使用私钥 ~/.ssh/id_ed25519，禁止密码登录。\n"
    ),
    "02-Projects/ecs-prod.md": (
        "---\ntitle: ecs-prod deployment\nkind: project\n---\n"
        "ecs-prod runs behind nginx; metrics go to prometheus.\n"
    ),
}
EXPECTED_TOOLS = {"memory_search", "memory_get", "memory_capture", "memory_update", "memory_supersede",
                  "memory_delete", "memory_stats", "memory_reindex"}


class SmokeFailure(Exception):
    pass


def run(memsync: str, env: dict, *args: str, expect: int = 0) -> str:
    proc = subprocess.run([memsync, *args], capture_output=True, text=True, env=env, timeout=120)
    print(f"$ memsync {' '.join(args)}  -> exit {proc.returncode}")
    try:  # a JSON reply in one line, cut; anything else as its first lines
        shown = [json.dumps(json.loads(proc.stdout), ensure_ascii=False)]
    except ValueError:
        shown = proc.stdout.strip().splitlines()[:3]
    for line in shown:
        print(f"    {line[:150]}{'…' if len(line) > 150 else ''}")
    if proc.returncode != expect:
        raise SmokeFailure(f"`memsync {' '.join(args)}` exited {proc.returncode}, expected {expect}\n"
                           f"stderr:\n{proc.stderr}")
    return proc.stdout


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SmokeFailure(what)


def cli_steps(memsync: str, env: dict, vault: Path) -> None:
    out = run(memsync, env, "--help")
    check("search" in out and "mcp" in out, "--help does not list the commands")

    report = json.loads(run(memsync, env, "index", "--json"))
    check(report["added"] == len(CARDS), f"index added {report['added']}, expected {len(CARDS)}")

    zh = json.loads(run(memsync, env, "search", "私钥", "--json"))
    check([h["title"] for h in zh["hits"]] == ["服务器登录方式"], f"search 私钥 gave {zh['hits']}")
    en = json.loads(run(memsync, env, "search", "nginx", "--json"))
    check([h["title"] for h in en["hits"]] == ["ecs-prod deployment"], f"search nginx gave {en['hits']}")

    card = json.loads(run(memsync, env, "show", str(zh["hits"][0]["id"]), "--json"))
    check("id_ed25519" in card["text"], "show did not return the card's text")

    saved = json.loads(run(memsync, env, "capture", "--title", "smoke test card",
                           "--body", "a capture through the installed command works", "--json"))
    check(saved["status"] == "created" and saved["indexed"] is True, f"capture gave {saved}")
    check((vault / saved["path"]).is_file(), f"capture wrote no file at {saved['path']}")
    found = json.loads(run(memsync, env, "search", "installed", "--json"))
    check(any(h["id"] == saved["id"] for h in found["hits"]), "the captured card is not searchable")


async def mcp_steps(memsync: str, env: dict, log: Path) -> None:
    params = StdioServerParameters(command=memsync, args=["mcp"], env=env)
    with anyio.fail_after(60), log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            print(f"$ memsync mcp  -> initialize: {init.server_info.name} {init.server_info.version}")
            tools = {tool.name for tool in (await session.list_tools()).tools}
            print(f"    tools/list: {', '.join(sorted(tools))}")
            check(tools >= EXPECTED_TOOLS, f"tools/list lacks {sorted(EXPECTED_TOOLS - tools)}")


def main(memsync: str) -> int:
    with tempfile.TemporaryDirectory(prefix="memsync-smoke-") as tmp:
        root = Path(tmp)
        vault = root / "vault"
        for rel, text in CARDS.items():
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_text(text, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSYNC_", "PYTHON"))}
        env.update(MEMSYNC_HOME=str(root / "home"), MEMSYNC_VAULT=str(vault), HOME=str(root))
        try:
            cli_steps(memsync, env, vault)
            anyio.run(mcp_steps, memsync, env, root / "mcp.log")
        except SmokeFailure as failure:
            print(f"SMOKE FAILED: {failure}", file=sys.stderr)
            log = root / "mcp.log"
            if log.exists():
                print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
            return 1
    print("smoke: every step passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
