"""Atomic writes: a write that fails or dies midway leaves no partial card and no temp file."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

import pytest

from memsync.write import atomic

LIMIT = 1 << 20  # 1 MiB: the index stays far below it, the big card does not
BIG_BODY = "memsync atomic write test line\n" * 100_000  # ~3 MB

# The real CLI in a child process; argv[1] picks unnamed temp files (tmpfile) or named ones
# (named). An argument `@FILE` stands for the file's text (a 3 MB --body is over the argv limit).
CLI = """
import sys
from memsync.write import atomic
atomic._tmpfile_ok = atomic._tmpfile_ok and sys.argv[1] == "tmpfile"
from memsync.cli import main
main([open(a[1:]).read() if a.startswith("@") else a for a in sys.argv[2:]])
"""
# Same, but the process SIGKILLs itself after writing half of the card into the temp file.
KILLED_MIDWAY = """
import os, signal, sys
from memsync.write import atomic
atomic._tmpfile_ok = atomic._tmpfile_ok and sys.argv[1] == "tmpfile"
def half_then_die(fd, data):
    os.write(fd, bytes(data[: len(data) // 2]))
    os.kill(os.getpid(), signal.SIGKILL)
atomic._write_all = half_then_die
from memsync.cli import main
main(sys.argv[2:])
"""
MODES = ["tmpfile", "named"] if atomic._tmpfile_ok else ["named"]


def small_file_limit():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG from write() instead of a signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def run(script, mode, *args, stdin=None, limit=False):
    return subprocess.run(
        [sys.executable, "-c", script, mode, *map(str, args)], input=stdin, capture_output=True,
        text=True, timeout=60, env=os.environ.copy(), preexec_fn=small_file_limit if limit else None,
    )


def everything(vault):
    """Every entry in the vault, hidden ones included."""
    return sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*"))


@pytest.mark.parametrize("mode", MODES)
def test_a_capture_that_fails_midway_leaves_nothing(vault, mode):
    proc = run(CLI, mode, "capture", "--title", "too big for the disk", "--json", stdin=BIG_BODY, limit=True)
    assert proc.returncode == 2, proc.stderr
    assert '"write_failed"' in proc.stdout and "nothing was saved" in proc.stdout
    assert everything(vault) in ([], ["03-Knowledge"])


@pytest.mark.parametrize("mode", MODES)
def test_an_update_that_fails_midway_keeps_the_old_file_whole(cli, vault, tmp_path, mode):
    _, made = cli("capture", "--title", "small card", "--body", "a small card that fits on any disk", "--json")
    before = (vault / made["path"]).read_bytes()
    (tmp_path / "big.txt").write_text(BIG_BODY)
    proc = run(CLI, mode, "update", made["id"], "--body", f"@{tmp_path / 'big.txt'}", "--json", limit=True)
    assert proc.returncode == 2 and '"write_failed"' in proc.stdout, proc.stderr
    assert (vault / made["path"]).read_bytes() == before
    assert everything(vault) == ["03-Knowledge", made["path"]]


def test_a_process_killed_while_filling_the_temp_file_leaves_nothing(vault):
    if "tmpfile" not in MODES:
        pytest.skip("no O_TMPFILE here: covered by the named-temp test below")
    proc = run(KILLED_MIDWAY, "tmpfile", "capture", "--title", "killed", "--body", "x" * 5000)
    assert proc.returncode == -signal.SIGKILL
    assert everything(vault) in ([], ["03-Knowledge"])


def test_a_named_temp_left_by_a_killed_process_is_swept_by_the_next_write(cli, vault):
    proc = run(KILLED_MIDWAY, "named", "capture", "--title", "killed", "--body", "x" * 5000)
    assert proc.returncode == -signal.SIGKILL
    leftovers = [p for p in everything(vault) if p.endswith(".tmp")]
    assert len(leftovers) == 1 and leftovers[0].startswith("03-Knowledge/.memsync-")  # hidden: never indexed
    assert not [p for p in everything(vault) if p.endswith(".md")]
    code, data = cli("capture", "--title", "next", "--body", "the next write in that folder cleans up", "--json")
    assert code == 0
    assert everything(vault) == ["03-Knowledge", data["path"]]


@pytest.fixture
def plain(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    return folder


def test_a_temp_file_of_a_live_writer_is_not_swept(plain):
    mine = plain / f".memsync-{os.getpid()}-0123456789ab.tmp"
    mine.write_bytes(b"in progress")
    assert atomic.sweep(plain) == [] and mine.exists()


def test_linking_never_replaces_an_existing_file(plain):
    target = plain / "card.md"
    with atomic.Staged(plain, b"first") as one, atomic.Staged(plain, b"second") as two:
        assert one.link(target) is True
        assert two.link(target) is False
    assert target.read_bytes() == b"first" and sorted(os.listdir(plain)) == ["card.md"]


def test_replace_keeps_the_permission_bits(plain):
    target = plain / "card.md"
    target.write_bytes(b"old")
    target.chmod(0o640)
    atomic.replace(target, b"new")
    assert target.read_bytes() == b"new" and (target.stat().st_mode & 0o777) == 0o640
    assert os.listdir(plain) == ["card.md"]


def test_move_no_clobber_refuses_a_taken_name(plain):
    (plain / "a.md").write_bytes(b"a")
    (plain / "b.md").write_bytes(b"b")
    assert atomic.move_no_clobber(plain / "a.md", plain / "b.md") is False
    assert (plain / "a.md").read_bytes() == b"a" and (plain / "b.md").read_bytes() == b"b"
    assert atomic.move_no_clobber(plain / "a.md", plain / "c.md") is True
    assert sorted(os.listdir(plain)) == ["b.md", "c.md"]
