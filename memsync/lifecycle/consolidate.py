"""`memsync consolidate`: the audit's plan (memsync.lifecycle.plan), shown, applied, undone.

Applying writes the plan as one run (memsync.write.runs): both sides of every file saved first,
the files moved under the journal, so a run killed midway is settled by the next write and the
vault is as before or as after it, never between. `--undo RUN` puts every file back, byte for
byte, and refuses (changing nothing) when one of them was edited after the run.
"""

from __future__ import annotations

import json
import secrets as random_tokens
import time

from memsync import private
from memsync.config import Config
from memsync.lifecycle import audit, plan
from memsync.write import atomic, journal, runs, vaultio


def dry_run(cfg: Config, threshold: float | None = None, save: bool = False) -> dict:
    """The plan, printed; nothing changes (with `save`, the plan is left in the home for review)."""
    recovered = runs.recover(cfg)
    built = _plan(cfg, threshold)
    result = {"applied": False, **built.to_dict()}
    if recovered:
        result["recovered"] = recovered
    if save:
        folder = private.mkdir(runs.folder(cfg))
        path = folder / f"plan-{time.strftime('%Y%m%d')}.json"
        with atomic.Staged(folder, json.dumps(result, ensure_ascii=False, indent=1).encode(),
                           private.FILE_MODE) as staged:
            staged.replace(path)
        result["saved"] = str(path)
    return result


def _plan(cfg: Config, threshold: float | None, catch_up: bool = False) -> plan.Plan:
    """The plan over the index; with `catch_up`, over the index brought in line with the files
    first: a plan that is applied must not pair cards by what they held before an edit no
    watcher saw (a card rewritten on another subject would be merged all the same)."""
    from memsync import session
    from memsync.lifecycle.opening import index_of

    with index_of(cfg) as index:
        if catch_up:
            session.indexer(cfg, index).reconcile()
        report = audit.run(cfg, index, threshold, listed=10**9)
    return plan.build(vaultio.root(cfg), report)


def apply(cfg: Config, threshold: float | None = None) -> dict:
    recovered = runs.recover(cfg)
    vault = vaultio.root(cfg)
    with journal.writing(cfg.home.path):  # no update or supersede reads a file while we work
        built = _plan(cfg, threshold, catch_up=True)
        result = {"applied": True, **built.to_dict()}
        if recovered:
            result["recovered"] = recovered
        if not built.changes:
            result["run"] = None
            return result
        run = time.strftime("%Y%m%d-%H%M%S-") + random_tokens.token_hex(3)
        files = runs.save(cfg, run, built.changes.values())
        runs.transition(cfg, vault, run, files, "apply")
    result["run"] = run
    result["undo"] = f"memsync consolidate --undo {run}"
    result["indexed"] = runs.sync(cfg, files)
    return result




def undo(cfg: Config, run: str) -> dict:
    return runs.undo(cfg, run)
