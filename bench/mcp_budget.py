"""What `memsync mcp` costs an agent's context, in bytes: tools/list, and each reply.

A real `memsync mcp` over a generated 30-card vault, driven through the SDK's stdio client as an
agent's client would. A reply's size is the JSON-RPC message as the server wrote it on stdout
(captured with `tee`: UTF-8, nothing escaped as \\uXXXX), split into its text block (what a
client that reads `content` passes on) and its structured content (what a client that reads
`structuredContent` passes on; only with `--structured`). tools/list is counted as when the
budget was set (issue 12): `json.dumps` of the tools as the client parses them; its whole
message is recorded too. Tokens are estimated at 4 bytes each.

    python -m bench.mcp_budget [--before DIR]     # DIR: an older tree, measured alongside
    python -m bench.mcp_budget --checkout DIR     # only measure that tree, save nothing

Writes bench/results/mcp_budget.json (unless --checkout); `python -m bench.report` renders it
into bench/RESULTS.md and docs/benchmarks.md.
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
TARGETS = {"tools_list": 7000, "search_10": 2500}
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


def sent(wire: Path) -> dict:
    """The responses the server wrote, by JSON-RPC id: their size in bytes and their result."""
    out = {}
    for line in wire.read_bytes().splitlines():
        message = json.loads(line)
        if "id" in message and "result" in message:
            out[message["id"]] = (len(line), message["result"])
    return out


def reply_sizes(result, wire: dict) -> dict:
    """One reply's sizes; the whole message is the response on the wire whose text is this one."""
    text = _text(result)
    whole = [n for n, res in wire.values()
             if "".join(c.get("text", "") for c in res.get("content", [])) == text]
    if not whole:
        raise SystemExit("a reply was not found among the messages the server wrote")
    structured = result.structured_content
    return {
        "bytes": whole[0],
        "text_bytes": len(text.encode("utf-8")),
        "structured_bytes": len(json.dumps(structured, ensure_ascii=False).encode("utf-8")) if structured else 0,
        "is_error": bool(result.is_error),
    }


async def measure(env: dict, command: list[str], cwd: str) -> dict:
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    wire = Path(cwd) / "wire.jsonl"
    # The server's stdout also goes to a file, so sizes are of what it sent, not a re-serialisation.
    teed = ["sh", "-c", 'w=$1; shift; "$@" | tee "$w"', "sh", str(wire), *command]
    params = StdioServerParameters(command=teed[0], args=teed[1:], env=env, cwd=cwd)
    calls = []
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
            # Wait for the in-process watcher's start-up pass: 30 cards take well under a second.
            for _ in range(200):
                found = await session.call_tool("memory_search", {"query": "deploy", "limit": 20})
                if _text(found).startswith(("20 hits", "20+ hits")) or len(
                        (found.structured_content or {}).get("hits", [])) == 20:  # an older tree's reply
                    break
                await anyio.sleep(0.05)
            else:
                raise SystemExit("the vault's 30 cards were not searchable within 10 s")
            for limit in (1, 10, 20):
                calls.append((f"search_{limit}", await session.call_tool(
                    "memory_search", {"query": "deploy", "limit": limit})))
            first = (found.structured_content["hits"][0]["id"] if found.structured_content
                     else first_id(_text(found)))
            calls.append(("get", await session.call_tool("memory_get", {"id": first})))
            calls.append(("capture", await session.call_tool("memory_capture", {
                "title": "bench capture", "body": "A fact captured by the budget bench, long enough to keep."})))
            calls.append(("stats", await session.call_tool("memory_stats", {})))
    responses = sent(wire)
    out["tools_list_message"] = next(n for n, res in responses.values() if "tools" in res)
    out["replies"] = {name: reply_sizes(result, responses) for name, result in calls}
    return out


def first_id(text: str) -> int:
    """The first hit's id: the text's first line that starts with a number (a hit block's)."""
    return next(int(line.split()[0]) for line in text.splitlines()[1:] if line[:1].isdigit())


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


NAMES = {"search_1": "memory_search, 1 hit", "search_10": "memory_search, 10 hits",
         "search_20": "memory_search, 20 hits", "get": "memory_get, short card",
         "capture": "memory_capture (created)", "stats": "memory_stats"}


def table(data: dict) -> list[str]:
    """Markdown rows: each reply's whole message, its text block and its structured content, in
    bytes, with tokens for what reaches the model (the text, or the structured content when a
    client prefers it), by default and with `--structured`, and the whole message before."""
    old = data.get("before") or {}
    lines = ["| figure | whole message, bytes | text block | structured content | model reads ≈ tokens "
             "| before: whole |", "|---|---|---|---|---|---|"]
    for label, key in (("tools/list (8 tools, `json.dumps` as issue 12 counted)", "tools_list"),
                       ("tools/list, whole message as sent", "tools_list_message"),
                       ("server instructions (initialize)", "instructions")):
        value, before = data[key], old.get(key)
        lines.append(f"| {label} | {value:,} | – | – | {value // BYTES_PER_TOKEN:,} | "
                     f"{f'{before:,}' if before else '–'} |")
    rows = [(label, data["replies"][key], key) for key, label in NAMES.items()]
    rows += [(f"{label}, `--structured`", data["structured"][key], None) for key, label in NAMES.items()
             if key in data.get("structured", {})]
    for label, r, key in rows:
        was = old.get("replies", {}).get(key)
        read = max(r["text_bytes"], r["structured_bytes"])  # the larger: what the worst client passes on
        lines.append(f"| {label} | {r['bytes']:,} | {r['text_bytes']:,} | {r['structured_bytes']:,} | "
                     f"{read // BYTES_PER_TOKEN:,} | {_before(was)} |")
    return lines


def _before(was: dict | None) -> str:
    return f"{was['bytes']:,}" if was else "–"


def _commit_of(tree: str) -> str:
    stamp = Path(tree) / "COMMIT"  # a `git archive` export has no .git; write the hash beside it
    return stamp.read_text().strip() if stamp.exists() else str(tree)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", help="measure the memsync in this source tree instead")
    parser.add_argument("--before", help="also measure this older source tree, for the before column")
    args = parser.parse_args(argv)
    data = run(args.checkout)
    data["structured"] = run(args.checkout, ("--structured",))["replies"]
    if args.before:
        data["before"] = {**run(args.before), "tree": _commit_of(args.before)}
    data["targets"] = {
        "tools_list": {"limit": TARGETS["tools_list"], "met": data["tools_list"] <= TARGETS["tools_list"]},
        "search_10": {"limit": TARGETS["search_10"],
                      "met": data["replies"]["search_10"]["bytes"] <= TARGETS["search_10"]},
    }
    data["issue_12_figures"] = ISSUE_12
    print("\n".join(table(data)))
    if args.checkout:
        return
    from .machine import info, save

    print(save("mcp_budget", {"bench": "mcp_budget", **data, **info()}), file=sys.stderr)


if __name__ == "__main__":
    main()
