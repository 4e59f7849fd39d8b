"""The two lock files beside an index share their making (memsync.lockfile) and keep their own
meaning and format: the reindex turn is waited for and names its holder's pid, and stays; the
watcher's lock refuses a second holder, names it in JSON, and goes with it."""

from __future__ import annotations

import json
import os
import stat

import pytest

from memsync import reindexlock
from memsync.watch.lock import WatcherLocked, WatchLock, index_lock_file


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_reindex_turn_names_its_holder_by_pid_and_its_file_stays(tmp_path):
    db = tmp_path / "index" / "memsync.db"  # its folder made with it
    with reindexlock.turn(db):
        lock = reindexlock.path_of(db)
        assert lock.read_text() == f"{os.getpid()}\n" and mode(lock) == 0o600
        fd = os.open(lock, os.O_RDONLY)
        try:
            assert reindexlock.holder(fd) == os.getpid()
        finally:
            os.close(fd)
    assert lock.read_text() == f"{os.getpid()}\n"  # the last holder, for a waiter to name


def test_the_watchers_lock_names_its_holder_in_json_refuses_another_and_goes(tmp_path):
    path = index_lock_file(tmp_path / "elsewhere" / "memsync.db")
    first = WatchLock(path, "/the/vault", {"home": "/the/home"})
    first.acquire()
    try:
        record = json.loads(path.read_text())
        assert record["pid"] == os.getpid() and record["vault"] == "/the/vault"
        assert record["home"] == "/the/home" and record["format"] == 1 and record["since"]
        assert mode(path) == 0o600
        with pytest.raises(WatcherLocked, match=f"pid {os.getpid()}"):
            WatchLock(path, "/the/vault").acquire()  # another open file: refused, not waited for
        assert [p.name for p in path.parent.iterdir()] == [path.name]  # no record left aside
    finally:
        first.release()
    assert not path.exists()
