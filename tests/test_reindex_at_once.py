"""Reindexes asked for at once in one process (an MCP server's tool calls run on threads) run one
after the other, so each changed file is read and written once, not once per call."""

from __future__ import annotations

import threading

from memsync import api, config

from .conftest import write_card

NOTES = 600  # past sync.PARALLEL_FROM: read by reader processes, as a big reindex is


def test_reindexes_at_once_write_each_changed_file_once(vault):
    for i in range(NOTES):
        write_card(vault, f"notes/{i % 7}/n{i}.md", f"note {i}", f"first text {i}")
    api.reindex(config.load())
    for i in range(NOTES):
        write_card(vault, f"notes/{i % 7}/n{i}.md", f"note {i}", f"second text {i}")
    together = threading.Barrier(3)
    reports: list[dict] = []

    def call() -> None:
        together.wait()
        reports.append(api.reindex(config.load()))

    calls = [threading.Thread(target=call) for _ in range(3)]
    for thread in calls:
        thread.start()
    for thread in calls:
        thread.join()
    assert sorted(r["updated"] for r in reports) == [0, 0, NOTES], reports
