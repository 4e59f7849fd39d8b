"""Writes that read a card and write it back run one at a time per data home, between threads
(the MCP SDK runs tools in threads) and between processes: no change is lost, and a card
deleted or superseded meanwhile is never written back over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from functools import partial

import pytest

from memsync import api, config, notes
from memsync.errors import MemsyncError, NotFound
from memsync.write import atomic, journal
from memsync.write import vault as writes

SAVE_SECONDS = 0.003
BODY = "The build cache lives on cache-1 under /var/cache/build; prune it weekly."


@pytest.fixture
def slow_disk(monkeypatch):
    """Saves that take a few milliseconds, as an fsync on a real disk does: without the lock,
    another writer would read the card in that window and write back a copy from before."""
    real = atomic.replace

    def slow(target, data, mode=None):
        time.sleep(SAVE_SECONDS)
        real(target, data, mode)

    monkeypatch.setattr(atomic, "replace", slow)


def together(*calls):
    """Run each call in its own thread, all released at once; returns results or errors."""
    start = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(n, call):
        start.wait()
        try:
            results[n] = call()
        except MemsyncError as exc:
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n, call)) for n, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def later(delay: float, call, *args, **kwargs):
    time.sleep(delay)
    return call(*args, **kwargs)


def on_disk(vault, rel):
    return notes.parse((vault / rel).read_bytes(), rel)


def test_threads_updating_different_fields_of_one_card_all_land(vault, slow_disk):
    cfg = config.load()
    for n in range(10):
        card = writes.capture(cfg, f"build cache {n}", BODY)
        fields = {"title": f"build cache {n} (moved)", "body": BODY + " Edited.",
                  "tags": ["ci", "cache"], "priority": "high", "ttl": "90d"}
        results = together(*[partial(writes.update, cfg, card["id"], **{key: value})
                             for key, value in fields.items()])
        assert [r["status"] for r in results] == ["updated"] * len(fields), results
        final = on_disk(vault, card["path"])
        assert (final.title, final.body, list(final.tags), final.priority, final.ttl) == tuple(fields.values())


def test_an_update_racing_a_delete_never_brings_the_card_back(vault, slow_disk):
    cfg = config.load()
    for n in range(20):
        card = writes.capture(cfg, f"old host {n}", BODY)
        edited, deleted = together(
            partial(writes.update, cfg, card["id"], body=BODY + " Edited."),
            partial(writes.delete, cfg, card["id"]),
        )
        assert deleted["status"] == "deleted"
        assert not (vault / card["path"]).exists(), "the deleted card came back"
        trashed = on_disk(vault, deleted["trash_path"])
        if isinstance(edited, NotFound):  # the delete went first: nothing to update any more
            assert trashed.body == BODY
        else:  # the update went first, and the delete took the edited card
            assert edited["status"] == "updated" and trashed.body == BODY + " Edited."
        with api.open_index(cfg) as index:
            assert index.card_by_path("vault", card["path"]) is None


def test_an_update_racing_a_supersede_keeps_the_old_card_marked(vault, slow_disk):
    cfg = config.load()
    for n in range(12):
        card = writes.capture(cfg, f"deploy port {n}", BODY)
        edited, superseded = together(
            # A little later each round: the rounds sweep the window a lost mark needs.
            partial(later, n * SAVE_SECONDS / 2, writes.update, cfg, card["id"], tags=["deploy"]),
            partial(writes.supersede, cfg, card["id"], f"deploy port {n} now", BODY + " Moved to 9090."),
        )
        assert edited["status"] == "updated" and superseded["status"] == "superseded"
        old = on_disk(vault, card["path"])
        assert old.superseded_by == superseded["path"] and old.invalid_at
        assert old.tags == ("deploy",)  # both writes landed, in some order


UPDATER = f"""
import json, os, sys, time
from memsync.write import atomic, vault
from memsync import config
real = atomic.replace
atomic.replace = lambda target, data, mode=None: (time.sleep({SAVE_SECONDS}), real(target, data, mode))
go, card_id, field, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.001)
cfg = config.load()
print(json.dumps([vault.update(cfg, card_id, **{{field: f"{{field}}-{{n}}"}})["status"]
                  for n in range(rounds)]))
"""


def test_two_processes_updating_one_card_lose_nothing(vault, tmp_path):
    cfg = config.load()
    card = writes.capture(cfg, "release train", BODY)
    go, rounds = tmp_path / "go", 30
    procs = [
        subprocess.Popen([sys.executable, "-c", UPDATER, str(go), str(card["id"]), field, str(rounds)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        for field in ("priority", "ttl")
    ]
    go.write_text("go")
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert json.loads(stdout) == ["updated"] * rounds
    final = on_disk(vault, card["path"])
    assert (final.priority, final.ttl) == (f"priority-{rounds - 1}", f"ttl-{rounds - 1}")


def test_the_write_lock_excludes_threads_of_one_process(home):
    inside, overlaps = [0], []

    def hold():
        with journal.writing(home):
            inside[0] += 1
            overlaps.append(inside[0])
            time.sleep(0.01)
            inside[0] -= 1

    together(*[hold for _ in range(8)])
    assert overlaps == [1] * 8
