"""memory_stats and memory_reindex read to a model as `memsync stats`, `memsync index` and
`memsync doctor` read to a person: one problem, one finding to a line, never a list of records
run together on one line."""

from __future__ import annotations

import anyio

from .mcp_helpers import DEADLINE, connected

BROKEN = "---\ntags: [open\n---\nA note about zookeeper.\n"


def _text_of(tmp_path, tool: str, arguments: dict) -> list[str]:
    """The lines of one call's reply, from a live `memsync mcp` over stdio."""
    async def main():
        with anyio.fail_after(DEADLINE):
            async with connected(tmp_path / "server.log") as session:
                return await session.call_tool(tool, arguments)

    reply = anyio.run(main)
    assert not reply.is_error, reply.content[0].text
    return reply.content[0].text.splitlines()


def test_problems_and_findings_are_one_to_a_line(vault, home, cli, tmp_path):
    (vault / "03-Knowledge").mkdir(parents=True, exist_ok=True)
    (vault / "03-Knowledge/broken.md").write_text(BROKEN)
    (vault / "03-Knowledge/latin.md").write_bytes(b"Caf\xe9 notes about the espresso machine.\n")
    assert cli("index")[0] == 0
    lines = _text_of(tmp_path, "memory_stats", {"check": True})
    assert "problems (2):" in lines
    assert any(line.startswith("  03-Knowledge/broken.md: frontmatter is not valid YAML") for line in lines)
    assert any(line.startswith("  03-Knowledge/latin.md: not valid UTF-8") for line in lines)
    assert "doctor: 2 findings:" in lines
    assert sum(line.startswith("  problem: vault:03-Knowledge/") for line in lines) == 2
    assert sum(line.startswith("    fix: ") for line in lines) == 2
    text = "\n".join(lines)
    assert '{"' not in text and "source vault, path" not in text  # no record written as JSON or pairs


def test_a_reindex_lists_its_problems_one_to_a_line(vault, home, cli, tmp_path):
    (vault / "broken.md").write_text(BROKEN)
    (vault / "fine.md").write_text("A note about the espresso machine.\n")
    assert cli("index")[0] == 0
    lines = _text_of(tmp_path, "memory_reindex", {"rebuild": True})
    assert "problems (1):" in lines, lines
    assert any(line.startswith("  broken.md: frontmatter is not valid YAML") for line in lines), lines
    assert not any("path broken.md" in line for line in lines)
