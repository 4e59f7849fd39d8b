"""`memsync consolidate`: the audit's plan (memsync.lifecycle.plan), shown, applied, undone.

A run changes many files, so it goes through a journal (memsync.write.journal) like supersede:
every file's bytes before and after are saved in `<home>/consolidate/<RUN>/` (private) before
the first file changes, and the journal names the run. A run killed midway is finished by the
next `memsync consolidate` (or rolled back, if a file it needs was changed meanwhile): the vault
is then as before the run or as after it, never between. `--undo RUN` puts every file the run
touched back, byte for byte, the same way; it refuses (changing nothing) when one of them was
edited after the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets as random_tokens
import time
from pathlib import Path

from memsync import private
from memsync.config import Config
from memsync.errors import BadArgument, MemsyncError, NotFound, Rejected
from memsync.lifecycle import audit, plan
from memsync.write import atomic, journal, vaultio

OP = "consolidate"


def _runs(cfg: Config) -> Path:
    return Path(cfg.home.path) / "consolidate"


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def dry_run(cfg: Config, threshold: float | None = None, save: bool = False) -> dict:
    """The plan, printed; nothing changes (with `save`, the plan is left in the home for review)."""
    recovered = recover(cfg)
    built = _plan(cfg, threshold)
    result = {"applied": False, **built.to_dict()}
    if recovered:
        result["recovered"] = recovered
    if save:
        folder = private.mkdir(_runs(cfg))
        path = folder / f"plan-{time.strftime('%Y%m%d')}.json"
        with atomic.Staged(folder, json.dumps(result, ensure_ascii=False, indent=1).encode(),
                           private.FILE_MODE) as staged:
            staged.replace(path)
        result["saved"] = str(path)
    return result


def _plan(cfg: Config, threshold: float | None) -> plan.Plan:
    from memsync.lifecycle.opening import index_of

    with index_of(cfg) as index:
        report = audit.run(cfg, index, threshold, listed=10**9)
    return plan.build(vaultio.root(cfg), report)


def apply(cfg: Config, threshold: float | None = None) -> dict:
    recovered = recover(cfg)
    vault = vaultio.root(cfg)
    with journal.writing(cfg.home.path):  # no update or supersede reads a file while we work
        built = _plan(cfg, threshold)
        result = {"applied": True, **built.to_dict()}
        if recovered:
            result["recovered"] = recovered
        if not built.changes:
            result["run"] = None
            return result
        run = time.strftime("%Y%m%d-%H%M%S-") + random_tokens.token_hex(3)
        files = _save_run(cfg, run, built)
        _transition(cfg, vault, run, files, "apply")
    result["run"] = run
    result["undo"] = f"memsync consolidate --undo {run}"
    result["indexed"] = _sync(cfg, files)
    return result


def _save_run(cfg: Config, run: str, built: plan.Plan) -> list[dict]:
    folder = private.mkdir(private.mkdir(_runs(cfg)) / run)
    files = []
    for n, change in enumerate(built.changes.values()):
        for side, data in (("before", change.before), ("after", change.after)):
            with atomic.Staged(folder, data, private.FILE_MODE) as staged:
                staged.replace(folder / f"{n}.{side}")
        files.append({"n": n, "rel": change.rel, "to": change.to or change.rel,
                      "before": _sha(change.before), "after": _sha(change.after)})
    manifest = {"run": run, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "files": files,
                "vault": str(vaultio.root(cfg))}
    with atomic.Staged(folder, json.dumps(manifest, ensure_ascii=False, indent=1).encode(),
                       private.FILE_MODE) as staged:
        staged.replace(folder / "manifest.json")
    return files


def _state(vault: Path, item: dict) -> str:
    """'before', 'after' or 'changed': where one file of a run stands now."""
    at_rel = vaultio.read_bytes(vaultio.inside(vault, item["rel"]))
    if item["to"] == item["rel"]:
        return {item["before"]: "before", item["after"]: "after"}.get(_sha(at_rel), "changed")
    at_to = vaultio.read_bytes(vaultio.inside(vault, item["to"]))
    if at_to is None and _sha(at_rel) == item["before"]:
        return "before"
    if at_rel is None and _sha(at_to) == item["after"]:
        return "after"
    return "changed"


def _put(cfg: Config, vault: Path, run: str, item: dict, side: str) -> None:
    """Bring one file to `side` ('before' or 'after')."""
    data = (_runs(cfg) / run / f"{item['n']}.{side}").read_bytes()
    if _sha(data) != item[side]:
        raise Rejected(f"the saved copy of {item['rel']} in run {run} is damaged; nothing more was changed")
    here, there = (item["rel"], item["to"]) if side == "after" else (item["to"], item["rel"])
    target = vaultio.inside(vault, there)
    if here == there:
        atomic.replace(target, data)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if not atomic.create(target, data):
        raise Rejected(f"{there} is taken; nothing more was changed")
    os.unlink(vaultio.inside(vault, here))


def _transition(cfg: Config, vault: Path, run: str, files: list[dict], direction: str) -> None:
    """Move every file of a run to its 'after' (apply) or 'before' (undo) side, journaled."""
    target, source = ("after", "before") if direction == "apply" else ("before", "after")
    entry = journal.Entry(cfg.home.path, {"op": OP, "run": run, "direction": direction,
                                          "vault": str(vault)})
    try:
        for item in files:
            if _state(vault, item) == source:
                _put(cfg, vault, run, item, target)
    except BaseException:
        try:
            _settle(cfg, vault, run, files, target, source)
        except (OSError, MemsyncError):
            entry.release()  # the next consolidate finishes it
            raise
        entry.finish()
        raise
    entry.finish()


def _settle(cfg: Config, vault: Path, run: str, files: list[dict], target: str, source: str) -> str:
    """After an interruption: finish when every file is at one of the two sides, else put the
    ones already moved back (a file edited meanwhile is left as it is)."""
    states = [_state(vault, item) for item in files]
    if "changed" not in states:
        for item, state in zip(files, states, strict=True):
            if state == source:
                _put(cfg, vault, run, item, target)
        return "finished"
    for item, state in zip(files, states, strict=True):
        if state == target:
            _put(cfg, vault, run, item, source)
    return "rolled back"


def _manifest(cfg: Config, run: str) -> dict:
    if not run or "/" in run or run.startswith("."):
        raise BadArgument(f"{run!r} is not a consolidate run; runs are listed in {_runs(cfg)}")
    try:
        return json.loads((_runs(cfg) / run / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound(f"no consolidate run {run!r} in {_runs(cfg)}") from None


def undo(cfg: Config, run: str) -> dict:
    recovered = recover(cfg)
    manifest = _manifest(cfg, run)
    vault = Path(manifest["vault"])
    files = manifest["files"]
    with journal.writing(cfg.home.path):
        states = [_state(vault, item) for item in files]
        changed = [item["to"] for item, state in zip(files, states, strict=True) if state == "changed"]
        if changed:
            raise Rejected(f"{len(changed)} file(s) of run {run} changed after it ({', '.join(changed[:5])}); "
                           "nothing was undone: put them back as the run left them, or edit by hand")
        if all(state == "before" for state in states):
            return {"status": "unchanged", "run": run, "note": "this run is already undone"}
        _transition(cfg, vault, run, files, "undo")
    result = {"status": "undone", "run": run, "files": len(files), "indexed": _sync(cfg, files)}
    if recovered:
        result["recovered"] = recovered
    return result


def _sync(cfg: Config, files: list[dict]) -> bool | None:
    warnings: list[str] = []
    rels = sorted({p for item in files for p in (item["rel"], item["to"])})
    with vaultio.index_or_none(cfg, warnings) as index:
        return vaultio.sync(cfg, index, rels, warnings)


def recover(cfg: Config) -> list[dict]:
    """Finish (or roll back) a run whose process died midway."""
    done: list[dict] = []

    def handle(entry: dict) -> bool:
        if entry.get("op") != OP:
            return False
        run = entry.get("run", "")
        try:
            manifest = _manifest(cfg, run)
            vault = Path(manifest["vault"])
            target, source = (("after", "before") if entry.get("direction") == "apply"
                              else ("before", "after"))
            with journal.writing(cfg.home.path):
                action = _settle(cfg, vault, run, manifest["files"], target, source)
            _sync(cfg, manifest["files"])
        except (MemsyncError, OSError, KeyError, ValueError) as exc:
            done.append({"op": OP, "run": run, "action": f"left for later ({getattr(exc, 'message', exc)})"})
            return False
        done.append({"op": OP, "run": run, "direction": entry.get("direction"), "action": action})
        return True

    journal.replay(cfg.home.path, handle)
    return done
