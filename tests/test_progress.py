"""The progress bar `memsync index` draws on a terminal (a real pseudo-terminal, the installed
command): once every file is read the bar says it is finishing, since a rebuild still writes
for seconds then on a big tree, and its last line gives the overall rate."""

from __future__ import annotations

import os
import pty
import subprocess

from memsync.cli import FINISHING

from .conftest import MEMSYNC_BIN, write_card


def on_a_terminal(*args: str) -> str:
    """What the command wrote to its stderr, a pseudo-terminal (stdout goes nowhere)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([MEMSYNC_BIN, *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=follower, env=os.environ.copy())
    finally:
        os.close(follower)
    chunks = []
    try:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the command closed the terminal, it has ended
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_rebuild_on_a_terminal_says_it_is_finishing_then_ends_with_its_rate(vault, home):
    for i in range(30):
        write_card(vault, f"notes/card-{i}.md", f"Card {i}", f"body {i}")
    out = on_a_terminal("index", "--rebuild")
    assert "indexing" in out and "30/30" in out
    assert FINISHING in out
    assert out.rindex("files/s") > out.rindex(FINISHING)  # the last line drawn: the rate


def test_without_a_terminal_no_bar_is_drawn(vault, home, run_cli):
    write_card(vault, "a.md", "A", "body")
    code, _, err = run_cli("index", "--rebuild")
    assert code == 0 and FINISHING not in err and "files/s" not in err
