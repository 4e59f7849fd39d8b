"""memory_stats gives memsync doctor's findings when asked (check=true), over the SDK's stdio client."""

from __future__ import annotations

import anyio

from .conftest import write_card
from .mcp_helpers import DEADLINE, STRUCTURED, connected


def test_memory_stats_reports_the_doctor_summary_only_when_asked(vault, home, cli, tmp_path):
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "The nginx site root is /srv/www.")
    assert cli("index")[0] == 0
    (home / "memsync.db").chmod(0o644)
    card = vault / "03-Knowledge/nginx.md"
    before = card.read_bytes()

    async def main():
        with anyio.fail_after(DEADLINE):
            async with connected(tmp_path / "server.log", STRUCTURED) as session:
                plain = await session.call_tool("memory_stats", {})
                assert not plain.is_error and "doctor" not in plain.structured_content
                checked = await session.call_tool("memory_stats", {"check": True})
                assert not checked.is_error, checked.content[0].text
                return checked

    checked = anyio.run(main)
    summary = checked.structured_content["doctor"]
    assert summary["sound"] is False
    [finding] = [f for f in summary["findings"] if f["check"] == "permissions"]
    assert str(home / "memsync.db") in finding["message"] and "doctor --fix" in finding["fix"]
    assert "permissions" in checked.content[0].text
    assert card.read_bytes() == before  # a check, not a repair
    assert (home / "memsync.db").stat().st_mode & 0o077  # still loose: stats never fixes


def test_the_advice_of_a_check_is_in_tool_words(vault, home, cli, tmp_path):
    # mcp.md: a command no tool runs reaches the model marked as the user's to run, as in every
    # other reply; the findings of memory_stats check=true and its audit part are advice too.
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "The nginx site root is /srv/www.")
    assert cli("index")[0] == 0
    (home / "memsync.db").chmod(0o644)

    async def main():
        with anyio.fail_after(DEADLINE):
            async with connected(tmp_path / "server.log") as session:
                return await session.call_tool("memory_stats", {"check": True})

    text = anyio.run(main).content[0].text
    assert "`memsync doctor --fix` (for the user to run)" in text
    assert "`memsync consolidate` (for the user to run)" in text
