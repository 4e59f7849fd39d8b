"""`memsync consolidate`: the audit's plan (memsync.lifecycle.plan), shown, applied, undone.

Applying writes the plan as one run (memsync.write.runs): both sides of every file saved first,
the files moved under the journal, so a run killed midway is settled by the next write and the
vault is as before or as after it, never between. `--undo RUN` puts every file back, byte for
byte, and refuses (changing nothing) when one of them was edited after the run.
"""

from __future__ import annotations

import secrets as random_tokens
import time
from collections.abc import Callable

from memsync.config import Config
from memsync.lifecycle import audit, opening, plan, saved
from memsync.store.index import Index
from memsync.write import journal, runs, vaultio

Waiting = Callable[[int | None], None]  # told the pid of the reindex it waits for


def dry_run(cfg: Config, threshold: float | None = None, save: bool = False) -> dict:
    """The plan, printed; nothing changes (with `save`, the plan is left in the home for review,
    and `apply_saved` carries out exactly that one later)."""
    opening.require(cfg)
    recovered = runs.recover(cfg)
    built = _plan(cfg, threshold, keep_texts=save)
    result = {"applied": False, **built.to_dict()}
    if recovered:
        result["recovered"] = recovered
    if save and result["empty"]:
        result["saved"] = None  # nothing to review: the daily timer leaves no plan a day
    elif save:
        path, earlier = saved.save(cfg, result, built)
        result["saved"] = str(path)
        if earlier:
            result["kept"] = str(earlier)  # the day's plan saved before: not replaced
    return result


def _plan(cfg: Config, threshold: float | None, catch_up: bool = False,
          keep_texts: bool = True, waiting: Waiting | None = None) -> plan.Plan:
    """The plan over the index; with `catch_up`, over the index brought in line with the files
    first: a plan that is applied must not pair cards by what they held before an edit no
    watcher saw (a card rewritten on another subject would be merged all the same). Without
    `keep_texts`, a plan to show only (plan.build)."""
    with opening.index_of(cfg) as index:  # one connection for the catch-up and the audit
        denied = _caught_up(cfg, index, waiting) if catch_up else []
        report = audit.run(cfg, index, threshold, listed=10**9)
        not_indexed = index.unindexed("vault")
        unfilled = None if report["cards"] else opening.never_filled(cfg, index)
    # only what the plan is made of: the other sections list every card at 100,000 cards
    steps = {key: report[key] for key in plan.SECTIONS}
    del report
    built = plan.build(vaultio.root(cfg), steps, keep_texts=keep_texts)
    # Left out of the index by the catch-up, so of the audit: no step names them, this does.
    built.skipped += [{"step": "read", "path": path, "why": _out_of_reach(path)} for path in denied]
    # ... and the others an index before left out, counted (doctor lists them)
    named = set(denied)
    built.not_indexed = [path for path in not_indexed if path not in named]
    built.notes = [unfilled] if unfilled else []
    return built


def _caught_up(cfg: Config, index: Index, waiting: Waiting | None) -> list[str]:
    """The index brought in line with the files, in the index's reindex turn as `memsync index`
    takes it (memsync.reindexlock; `waiting` as for api.reindex): beside another reindex, both
    would read and write every changed file. The turn is held for the catch-up only, as the
    watcher holds it around its own (memsync.watch.reporting). Returns the vault paths it could
    not read."""
    from memsync import session
    from memsync.reindexlock import turn

    with turn(cfg.db.path, waiting):
        return [path for source, path in session.indexer(cfg, index).reconcile().denied
                if source == "vault"]


def _out_of_reach(path: str) -> str:
    what = "folder" if path.endswith("/") else "file"
    return (f"this {what} cannot be read (permission denied), so its cards are out of the index "
            f"and of this plan; make it readable (chmod u+r{'x' if what == 'folder' else ''}), "
            "then consolidate again")


def apply(cfg: Config, threshold: float | None = None, waiting: Waiting | None = None) -> dict:
    """A plan built now, from the files as they are, carried out; said when it is not the plan
    last saved for review (that one is carried out by `apply_saved`). `waiting` is told, once,
    when the catch-up before the plan waits for another process's reindex, with its pid."""
    opening.require(cfg)  # before the reindex turn and the journal: nothing left behind
    recovered = runs.recover(cfg)
    reviewed = saved.newest_unapplied(cfg)
    with journal.writing(cfg.home.path):  # no update or supersede reads a file while we work
        built = _plan(cfg, threshold, catch_up=True, waiting=waiting)
        result = {"applied": True, **built.to_dict()}
        if reviewed and not saved.same_plan(reviewed[1], built):
            result["differs_from"] = str(reviewed[0])
        result.update(_run(cfg, list(built.changes.values())))
    return _finish(cfg, result, recovered)


def apply_saved(cfg: Config, name: str) -> dict:
    """A saved plan carried out as it was saved: the steps whose files changed since are left
    out (listed in `skipped`), never planned anew."""
    recovered = runs.recover(cfg)
    path, plan_saved = saved.load(cfg, name)
    with journal.writing(cfg.home.path):
        changes, steps = saved.applicable(cfg, plan_saved)
        result = {"applied": True, "plan": str(path), **steps, "files": len(changes), "empty": not changes}
        result.update(_run(cfg, changes))
    return _finish(cfg, result, recovered)


def _run(cfg: Config, changes: list) -> dict:
    """Write the changes as one run (the write lock held); its name and files, for _finish."""
    if not changes:
        return {"run": None}
    run = time.strftime("%Y%m%d-%H%M%S-") + random_tokens.token_hex(3)
    files = runs.save(cfg, run, changes)
    runs.transition(cfg, vaultio.root(cfg), run, files, "apply")
    return {"run": run, "undo": f"memsync consolidate --undo {run}", "_files": files}


def _finish(cfg: Config, result: dict, recovered: list[dict]) -> dict:
    """Bring the index in line with the run's files (after the lock: it may take a while)."""
    files = result.pop("_files", None)
    if files:
        result["indexed"] = runs.sync(cfg, files, "apply")
    if recovered:
        result["recovered"] = recovered
    return result


def undo(cfg: Config, run: str) -> dict:
    return runs.undo(cfg, run)
