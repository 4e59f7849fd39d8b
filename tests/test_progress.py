"""The progress bar `memsync index` draws on a terminal (a real pseudo-terminal, the installed
command): once every file is read the bar says it is finishing, since a rebuild still writes
for seconds then on a big tree, and its last line gives the overall rate."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time

from memsync import config, reindexlock
from memsync.cli import FINISHING

from .conftest import MEMSYNC_BIN, write_card


class Terminal:
    """The installed command with its stderr on a pseudo-terminal (stdout goes nowhere), read
    as it writes."""

    def __init__(self, *args: str):
        self.leader, follower = pty.openpty()
        try:
            self.proc = subprocess.Popen([MEMSYNC_BIN, *args], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=follower,
                                         env=os.environ.copy())
        finally:
            os.close(follower)
        self.chunks: list[bytes] = []

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")

    def _read(self) -> bool:
        try:
            data = os.read(self.leader, 65536)
        except OSError:  # EIO: the command closed the terminal, it has ended
            return False
        self.chunks.append(data)
        return bool(data)

    def read_until(self, needle: str, within: float = 30) -> None:
        deadline = time.monotonic() + within
        while needle not in self.text():
            left = deadline - time.monotonic()
            assert left > 0 and select.select([self.leader], [], [], left)[0], self.text()
            assert self._read(), self.text()

    def finish(self) -> str:
        """All it wrote, once it has ended (with status 0)."""
        try:
            while self._read():
                pass
        finally:
            os.close(self.leader)
        assert self.proc.wait(timeout=60) == 0
        return self.text()


def on_a_terminal(*args: str) -> str:
    """What the command wrote to its stderr, a pseudo-terminal."""
    return Terminal(*args).finish()


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


def shown_rate(out: str) -> float:
    """The last rate the bar drew, in files per second."""
    return float(re.findall(r"([\d,]+\.\d) files/s", out)[-1].replace(",", ""))


def test_the_rate_counts_from_the_reindex_turn_not_from_the_wait_for_it(vault, home):
    """An index that waited for another process's reindex counted the wait in its rate. Counted
    from its turn, its work lies between the turn's release and its own end, so the rate it
    shows is at least the files over that stretch; counted from before the wait, it is below
    that, whatever the machine's speed or load."""
    files = 30
    for i in range(files):
        write_card(vault, f"notes/card-{i}.md", f"Card {i}", f"body {i}")
    on_a_terminal("index")
    for i in range(files):
        write_card(vault, f"notes/card-{i}.md", f"Card {i}", f"edited body {i}")
    with reindexlock.turn(config.load().db.path):
        waiting = Terminal("index")
        waiting.read_until("waiting for another reindex")
        time.sleep(1)  # the other reindex runs on
        released = time.monotonic()
    out = waiting.finish()
    after_release = time.monotonic() - released
    assert f"{files}/{files}" in out
    # the rate is shown to one decimal: a hair below files / after_release at the least
    assert shown_rate(out) >= files / after_release - 0.05, out


def test_a_count_over_several_sources_runs_on_and_ends_with_its_rate(vault, home, tmp_path, cli):
    """Each source counted after the ones before it: the bar never falls back to 0, and a source
    with nothing to do (last here) leaves it full, with the rate."""
    notes = tmp_path / "notes"
    for folder, count in ((vault, 20), (notes, 10)):
        for i in range(count):
            write_card(folder, f"card-{i}.md", f"Card {i}", f"body {i} of {folder.name}")
    assert cli("sources", "--add", "notes", "--path", notes)[0] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("sources", "--add", "empty", "--path", empty)[0] == 0
    out = on_a_terminal("index", "--rebuild")
    counts = [(int(d), int(t)) for d, t in re.findall(r"(\d+)/(\d+)", out)]
    assert counts[-1] == (30, 30) and (20, 20) in counts, out
    assert all(t2 >= t1 and d2 >= d1 for (d1, t1), (d2, t2) in zip(counts[1:], counts[2:])), counts
    assert out.rindex("files/s") > out.rindex("30/30"), out
