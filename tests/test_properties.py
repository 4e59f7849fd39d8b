"""Convergence: any sequence of file operations, synced incrementally, equals a rebuild."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.model import Source
from memsync.store.index import Index
from memsync.sync import Indexer

from .helpers import snapshot

NAMES = ["a.md", "b.md", "sub/c.md", "sub/d.md", "深/卡片.md", "notes.txt"]
# Bodies link to each other (a card's links field changes when the linking card does) and
# carry headings and tags.
BODIES = st.lists(st.sampled_from(["abc ", "东京都", "阿里云", "\n", "-", ":", "#", "# h\n", "#t/x ",
                                   "[[a]]", "[[b|lb]]", "[[sub/c#h]]", "[[d|东京]]", "![[卡片]]",
                                   "[[A]]", "```\n"]), max_size=12).map("".join)

op = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), BODIES),
    st.tuples(st.just("bad_yaml"), st.sampled_from(NAMES), BODIES),
    st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.none()),
    st.tuples(st.just("trash"), st.sampled_from(NAMES), st.none()),
    st.tuples(st.just("untrash"), st.sampled_from(NAMES), st.none()),
)


def apply(root: Path, action, name, arg) -> list[tuple[str, str]]:
    """Do one file operation; return what an event stream would report: (kind, path...)."""
    path = root / name
    if action in ("write", "bad_yaml"):
        path.parent.mkdir(parents=True, exist_ok=True)
        head = "---\ntitle: [broken\n---\n" if action == "bad_yaml" else f"---\ntitle: t {arg[:5]}\n---\n"
        path.write_text(head + arg, encoding="utf-8")
        return [("sync", name)]
    if action == "rename" and path.exists() and name != arg:
        (root / arg).parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, root / arg)
        return [("move", name, arg)]
    if action == "delete" and path.exists():
        path.unlink()
        return [("sync", name)]
    if action == "trash" and path.exists():
        target = root / ".trash" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        return [("move", name, f".trash/{name}")]
    if action == "untrash" and (root / ".trash" / name).exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(root / ".trash" / name, path)
        return [("move", f".trash/{name}", name)]
    return []


def without_ids(snap):
    return {k: {f: v for f, v in row.items() if f != "id"} for k, row in snap.items()}


def converges(ops, reconcile_every):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        source = Source("vault", "markdown", str(root), True)
        live = Index(Path(tmp) / "live.db")
        work = Indexer(live, [source])
        for step, (action, name, arg) in enumerate(ops, start=1):
            for event in apply(root, action, name, arg):
                if event[0] == "move":
                    work.move("vault", event[1], event[2])
                else:
                    work.sync_paths("vault", [event[1]])
            if reconcile_every and step % reconcile_every == 0:
                work.reconcile()
        fresh = Index(Path(tmp) / "fresh.db")
        Indexer(fresh, [source]).rebuild()
        assert without_ids(snapshot(live)) == without_ids(snapshot(fresh))
        live.close()
        fresh.close()
        shutil.rmtree(root)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, max_size=25), reconcile_every=st.integers(min_value=0, max_value=6))
def test_incremental_sync_equals_rebuild(ops, reconcile_every):
    converges(ops, reconcile_every)


@pytest.mark.stress
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, max_size=80), reconcile_every=st.integers(min_value=0, max_value=10))
def test_incremental_sync_equals_rebuild_long(ops, reconcile_every):
    converges(ops, reconcile_every)
