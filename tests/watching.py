"""What the watcher tests share: unique markers written into cards the way editors and sync
tools write them, a view of the index, and `converge`, which waits (with a deadline, never a
sleep) until the index holds exactly the live cards and proves it through search."""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path

import pytest

from memsync import api, config
from memsync.search.lexical import Query

from .conftest import WATCH_DEADLINE, dump_watcher_stacks

DEADLINE = WATCH_DEADLINE


def mark() -> str:
    return "mk" + secrets.token_hex(6)


def text(marker: str, extra: str = "") -> str:
    return f"---\ntitle: card {marker}\ntags: [watch]\n---\nThe body names {marker}. {extra}\n"


def put(vault: Path, rel: str, marker: str, extra: str = "") -> None:
    """An in-place write, as VS Code and most programs do it."""
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text(marker, extra), encoding="utf-8")


def atomic_put(vault: Path, rel: str, marker: str, temp: str) -> None:
    """Write a temp file beside the card and rename it over (Syncthing, write-file-atomic)."""
    path = vault / rel
    tmp = path.with_name(temp)
    tmp.write_text(text(marker), encoding="utf-8")
    os.replace(tmp, path)


def vim_put(vault: Path, rel: str, marker: str) -> None:
    """vim 9's default save: probe file, rename to a backup, write anew, drop the backup."""
    path = vault / rel
    probe = path.with_name("4913")
    probe.write_bytes(b"")
    probe.unlink()
    backup = path.with_name(path.name + "~")
    os.rename(path, backup)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text(marker))
        handle.flush()
        os.fsync(handle.fileno())
    backup.unlink()


def cfg() -> config.Config:
    return config.load()


def view(c: config.Config) -> dict[str, str]:
    """path -> title + body of every card in the index (empty if there is no index yet)."""
    if not c.db.path.exists():
        return {}
    with api.open_index(c) as index:
        rows = index._conn.execute("SELECT path, title, body FROM cards WHERE source = 'vault'")
        return {r[0]: r[1] + "\n" + r[2] for r in rows}


def converge(live: dict[str, str], gone: set[str] = frozenset(), timeout: float = DEADLINE) -> None:
    """Wait until the index holds exactly `live`; then prove it through search as well."""
    c = cfg()
    deadline = time.monotonic() + timeout
    while True:
        got = view(c)
        if got.keys() == live.keys() and all(live[p] in got[p] for p in live):
            break
        if time.monotonic() > deadline:
            dump_watcher_stacks()
            missing = sorted(p for p in live if live[p] not in got.get(p, ""))[:10]
            extra = sorted(set(got) - set(live))[:10]
            pytest.fail(f"index did not converge: missing/stale {missing}, phantom {extra}")
        time.sleep(0.02)
    sample = list(live.items())[:25]
    for path, marker in sample:
        hits = api.search(c, Query(marker))["hits"]
        assert [h["path"] for h in hits] == [path], marker
    for marker in list(gone)[:25]:
        assert api.search(c, Query(marker))["hits"] == [], marker


def card_id(rel: str) -> int:
    with api.open_index(cfg()) as index:
        row = index.card_by_path("vault", rel)
        assert row is not None, rel
        return row["id"]


@contextlib.contextmanager
def settled_watcher():
    """An in-process watcher, past its start-up pass; stopped (lock released) on the way out."""
    from memsync.watch import Watcher

    w = Watcher(cfg())
    w.start()
    try:
        assert w.wait_idle(DEADLINE)
        yield w
    finally:
        w.stop()


def source_view(name: str) -> dict[str, str]:
    """path -> title + body of every card of one source."""
    with api.open_index(cfg()) as index:
        rows = index._conn.execute("SELECT path, title, body FROM cards WHERE source = ?", (name,))
        return {r[0]: r[1] + "\n" + r[2] for r in rows}


def wait_until(check, what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            dump_watcher_stacks()
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.02)
