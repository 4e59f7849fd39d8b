"""What `memsync mcp` costs an agent's context, in bytes: tools/list, and each reply.

A real `memsync mcp` over a generated 30-card vault, driven through the SDK's stdio client as an
agent's client would. Bytes are counted the way they were when the budget was set (issue 12):
`json.dumps` of the tools list and of each call's result as the SDK client parses them. Each
reply is also split into its text block (what a client that reads `content` passes on) and its
structured content (what a client that reads `structuredContent` passes on), since clients pick
one of the two. Tokens are estimated at 4 bytes each.

    python -m bench.mcp_budget [--before DIR]     # DIR: an older tree, measured alongside
    python -m bench.mcp_budget --checkout DIR     # only measure that tree, save nothing

Writes bench/results/mcp_budget.json (unless --checkout); `python -m bench.report` renders it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import anyio

BYTES_PER_TOKEN = 4
TARGETS = {"tools_list": 7000, "search_10_text": 2500}
# As issue 12 measured them (its own 30-card vault) before the budget work; the table's "before"
# column is measured here, on this vault, with --before pointing at a tree from before it.
ISSUE_12 = {"tools_list": 21398, "search_10": 9032, "get": 3776}

TOPICS = ["nginx", "postgres", "redis", "kafka", "grafana", "backup"]


def make_vault(root: Path) -> Path:
    """30 cards; every one mentions `deploy`, so one query can fill pages of 1, 10 and 20 hits,
    and every body is long enough for a full 160-character snippet."""
    vault = root / "vault"
    folder = vault / "03-Knowledge"
    folder.mkdir(parents=True)
    for n in range(30):
        topic = TOPICS[n % len(TOPICS)]
        body = (f"The {topic} deploy for service {n} runs from the ops-{n:02d} host; its config "
                f"lives in /etc/{topic}/service-{n}.conf and the rollback notes sit beside it. "
                f"Ask the platform team before changing the {topic} deploy schedule for service {n}.")
        (folder / f"{topic}-service-{n}.md").write_text(
            f"---\ntitle: {topic} deploy for service {n}\nkind: knowledge\ntags: [{topic}, ops]\n---\n{body}\n",
            encoding="utf-8")
    return vault


def size(obj) -> int:
    return len(json.dumps(obj))


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def reply_sizes(result) -> dict:
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = "".join(c.get("text", "") for c in dumped.get("content", []))
    structured = dumped.get("structuredContent")
    return {
        "bytes": size(dumped),
        "text_bytes": len(text.encode("utf-8")),
        "structured_bytes": len(json.dumps(structured, ensure_ascii=False).encode("utf-8")) if structured else 0,
        "is_error": bool(dumped.get("isError")),
    }


async def measure(env: dict, command: list[str], cwd: str) -> dict:
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    with open(os.devnull, "w") as quiet:
        async with (stdio_client(params, errlog=quiet) as (read, write),
                    ClientSession(read, write) as session):
            init = await session.initialize()
            tools = (await session.list_tools()).tools
            listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
            out = {
                "tools_list": size(listed),
                "instructions": len((init.instructions or "").encode("utf-8")),
                "per_tool": {t["name"]: size(t) for t in listed},
                "output_schemas": sum(size(t["outputSchema"]) for t in listed if "outputSchema" in t),
                "replies": {},
            }
            replies = out["replies"]
            # Wait for the in-process watcher's start-up pass: 30 cards take well under a second.
            for _ in range(200):
                found = await session.call_tool("memory_search", {"query": "deploy", "limit": 20})
                if _text(found).startswith(("20 hits", "20+ hits")) or len(
                        (found.structured_content or {}).get("hits", [])) == 20:
                    break
                await anyio.sleep(0.05)
            else:
                raise SystemExit("the vault's 30 cards were not searchable within 10 s")
            for limit in (1, 10, 20):
                replies[f"search_{limit}"] = reply_sizes(
                    await session.call_tool("memory_search", {"query": "deploy", "limit": limit}))
            first = (found.structured_content["hits"][0]["id"] if found.structured_content
                     else int(_text(found).split("\n")[2].split()[0]))  # a text hit block starts with its id
            replies["get"] = reply_sizes(await session.call_tool("memory_get", {"id": first}))
            replies["capture"] = reply_sizes(await session.call_tool("memory_capture", {
                "title": "bench capture", "body": "A fact captured by the budget bench, long enough to keep."}))
            replies["stats"] = reply_sizes(await session.call_tool("memory_stats", {}))
    return out


def run(checkout: str | None, options: tuple[str, ...] = ()) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MEMSYNC_HOME": str(Path(tmp) / "home"),
               "MEMSYNC_VAULT": str(make_vault(Path(tmp)))}
        env.pop("MEMSYNC_DB", None)
        command = [str(Path(sys.executable).with_name("memsync")), "mcp", *options]
        if checkout:  # the same client against another tree's server
            env["PYTHONPATH"] = str(Path(checkout).resolve())
            command = [sys.executable, "-c", "import sys; from memsync.cli import main; sys.exit(main())", "mcp",
                       *options]
        return anyio.run(measure, env, command, tmp)  # cwd: not a source tree


def table(data: dict) -> list[str]:
    """Markdown rows: whole reply, its text block and its structured content, in bytes, with
    tokens for the text (what a client that reads text passes on) and the figure before."""
    old = data.get("before") or {}
    lines = ["| figure | whole reply, bytes | text block | structured content | text ≈ tokens | before: whole / text |",
             "|---|---|---|---|---|---|"]
    for label, key in (("tools/list (8 tools)", "tools_list"), ("server instructions (initialize)", "instructions")):
        value, before = data[key], old.get(key)
        lines.append(f"| {label} | {value:,} | – | – | {value // BYTES_PER_TOKEN:,} | "
                     f"{f'{before:,}' if before else '–'} |")
    names = {"search_1": "memory_search, 1 hit", "search_10": "memory_search, 10 hits",
             "search_20": "memory_search, 20 hits", "get": "memory_get, short card",
             "capture": "memory_capture (created)", "stats": "memory_stats"}
    rows = [(label, data["replies"][key], key) for key, label in names.items()]
    rows += [(f"{names[key]}, `--text-only`", r, None) for key, r in data.get("text_only", {}).items()
             if key in ("search_10", "get")]
    for label, r, key in rows:
        was = old.get("replies", {}).get(key)
        before = f"{was['bytes']:,} / {was['text_bytes']:,}" if was else "–"
        lines.append(f"| {label} | {r['bytes']:,} | {r['text_bytes']:,} | {r['structured_bytes']:,} | "
                     f"{r['text_bytes'] // BYTES_PER_TOKEN:,} | {before} |")
    return lines


def _commit_of(tree: str) -> str:
    stamp = Path(tree) / "COMMIT"  # a `git archive` export has no .git; write the hash beside it
    return stamp.read_text().strip() if stamp.exists() else str(tree)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", help="measure the memsync in this source tree instead")
    parser.add_argument("--before", help="also measure this older source tree, for the before column")
    args = parser.parse_args(argv)
    data = run(args.checkout)
    data["text_only"] = run(args.checkout, ("--text-only",))["replies"]
    if args.before:
        data["before"] = {**run(args.before), "tree": _commit_of(args.before)}
    data["targets"] = {
        "tools_list": {"limit": TARGETS["tools_list"], "met": data["tools_list"] <= TARGETS["tools_list"]},
        "search_10_text": {"limit": TARGETS["search_10_text"],
                           "met": data["replies"]["search_10"]["text_bytes"] <= TARGETS["search_10_text"]},
    }
    data["issue_12_figures"] = ISSUE_12
    print("\n".join(table(data)))
    if args.checkout:
        return
    from .machine import info, save

    print(save("mcp_budget", {"bench": "mcp_budget", **data, **info()}), file=sys.stderr)


if __name__ == "__main__":
    main()
