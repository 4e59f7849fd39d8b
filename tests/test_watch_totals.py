"""A watcher runs for weeks: what it adds up over its life (Watcher.totals, the summary
`memsync watch --json` prints on stop) stays small however many batches it takes."""

from __future__ import annotations

import time

from memsync.model.indexing import RunningTotals, SyncReport

from .watching import DEADLINE, cfg, settled_watcher, view


def test_totals_keep_their_sums_the_latest_problems_and_no_paths():
    totals = RunningTotals()
    for i in range(1000):
        totals.merge(SyncReport(
            scanned=2, updated=1, unchanged=1,
            problems=[{"path": f"n{i}.md", "message": "frontmatter is not valid YAML"},
                      {"path": "log.md", "message": "changing while read; retry"}],
            retry=["log.md"], denied=[("vault", "closed/")], vanished=["gone.md"]))
    assert (totals.scanned, totals.updated, totals.unchanged) == (2000, 1000, 1000)
    assert [p["path"] for p in totals.problems] == [f"n{i}.md" for i in range(980, 1000)]
    assert totals.problems_total == 1000  # a file still being written is no problem yet
    assert (totals.retry, totals.denied, totals.vanished) == ([], [], [])
    assert totals.to_dict()["problems_total"] == 1000


def test_a_note_saved_broken_many_times_leaves_the_watcher_few_problems(vault):
    with settled_watcher() as w:
        for i in range(30):
            (vault / "broken.md").write_text(f"---\ntitle: [unclosed\n---\nsave{i}\n")
            deadline = time.monotonic() + DEADLINE
            while f"save{i}" not in view(cfg()).get("broken.md", ""):
                assert time.monotonic() < deadline, f"save {i} was not indexed"
                time.sleep(0.01)
        # Most saves are a batch of their own (the first may fall to the watcher's catch-up at
        # its start, which is no batch): more problems than the totals keep, one a batch.
        assert w.batches > 20
        assert len(w.totals.problems) <= 20  # one a batch, until now
        assert w.totals.problems[-1]["path"] == "broken.md"
        assert w.totals.problems_total > 20
