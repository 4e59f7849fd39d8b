"""Reader processes are capped per process, over all its jobs at once: an MCP server runs its
tool calls on threads, and each reindex that found many files started readers of its own."""

from __future__ import annotations

import json

from memsync import config, readerbudget, sync
from memsync.store.index import Index
from memsync.sync import Indexer

from .mcp_helpers import scenario, server_log, tool
from .rebuilding import SMALL, fill

__all__ = ["server_log"]  # a fixture, imported for the tests below


def test_a_job_started_while_another_holds_every_reader_reads_in_its_own_process(vault, tmp_path, monkeypatch):
    for name, value in SMALL.items():  # a few hundred cards make many chunks
        monkeypatch.setattr(sync, name, value)
    fill(vault)
    inner: list = []

    def meanwhile(done: int, total: int) -> None:  # between the first rebuild's batches
        if inner:
            return
        other = Index(tmp_path / "other.db")
        try:
            inner.append(Indexer(other, config.load().sources, workers=2).rebuild())
        finally:
            other.close()

    first = Index(tmp_path / "first.db")
    try:  # asks for every reader the process may run
        outer = Indexer(first, config.load().sources, workers=readerbudget.most() + 1).rebuild(progress=meanwhile)
    finally:
        first.close()
    assert outer.readers == readerbudget.most() + 1  # its readers and itself
    assert inner[0].readers == 1 and inner[0].added == outer.added  # itself alone, the same work
    again = Index(tmp_path / "again.db")
    try:  # the readers are given back when a job ends
        assert Indexer(again, config.load().sources, workers=2).rebuild().readers == 2
    finally:
        again.close()


def test_threads_past_the_cores_starts_no_more_readers_than_cores_for_an_mcp_reindex(server_log, vault, home):
    for n in range(sync.PARALLEL_FROM + 100):  # enough to be read by reader processes
        (vault / f"shrike {n}.md").write_text(f"a shrike seen on the fence, number {n}\n")
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"threads": readerbudget.most() + 2}))

    async def body(session):
        report = await tool(session, "memory_reindex", rebuild=True)
        assert report["added"] == sync.PARALLEL_FROM + 100
        assert report["readers"] == readerbudget.most() + 1, report  # the cores' readers and the server

    scenario(body)(server_log)
