"""A run: many files of the vault changed as one write, saved before and after beside it.

memsync consolidate writes its plan as a run. Every file's bytes before and after go into
`<home>/consolidate/<RUN>/` (private) with a manifest, before the first file changes, and the
journal (memsync.write.journal) names the run while its files move. A run killed midway is
settled by the next write of any kind (memsync.write.supersede.recover): finished when every file
is at one of its two sides, else rolled back, so the vault is as before or as after, never
between. `undo` puts every file back, byte for byte, the same way, and refuses (changing
nothing) when one was edited after the run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import posixpath
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from memsync import dates, private
from memsync.config import Config
from memsync.errors import BadArgument, MemsyncError, NotFound, Rejected
from memsync.write import atomic, journal, vaultio

OP = "consolidate"  # the journal's name for a run (the command that makes them)


class Change(Protocol):
    rel: str
    to: str | None
    before: bytes
    after: bytes


def folder(cfg: Config) -> Path:
    """Where the runs are kept: one folder each, named by the run."""
    return Path(cfg.home.path) / "consolidate"


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def save(cfg: Config, run: str, changes: Iterable[Change]) -> list[dict]:
    """Keep both sides of every change and the manifest; returns the manifest's files. Called
    with the write lock held (journal.writing), so a folder without a manifest that another
    holder of the lock finds is a save its process did not live to finish (_unsaved)."""
    kept = private.mkdir(private.mkdir(folder(cfg)) / run)
    files = []
    for n, change in enumerate(changes):
        for side, data in (("before", change.before), ("after", change.after)):
            with atomic.Staged(kept, data, private.FILE_MODE) as staged:
                staged.replace(kept / f"{n}.{side}")
        item = {"n": n, "rel": change.rel, "to": change.to or change.rel,
                "before": _sha(change.before), "after": _sha(change.after)}
        if change.to and change.to != change.rel:
            item["made"] = _missing_folders(vaultio.root(cfg), change.to)
        files.append(item)
    manifest = {"run": run, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "files": files,
                "vault": str(vaultio.root(cfg))}
    with atomic.Staged(kept, json.dumps(manifest, ensure_ascii=False, indent=1).encode(),
                       private.FILE_MODE) as staged:
        staged.replace(kept / "manifest.json")
    return files


def _missing_folders(vault: Path, rel: str) -> list[str]:
    """The folders above `rel` that are not there yet, deepest first: the ones a move to `rel`
    makes, and the only ones its undo may take away again (when they are empty)."""
    made = []
    parent = posixpath.dirname(rel)
    while parent and not os.path.isdir(vaultio.inside(vault, parent)):
        made.append(parent)
        parent = posixpath.dirname(parent)
    return made


def _drop_made_folders(vault: Path, item: dict) -> None:
    """A moved card gone back: the folders its move made go too, if nothing else is in them."""
    for rel_dir in item.get("made", ()):
        try:
            os.rmdir(vaultio.inside(vault, rel_dir))
        except OSError:  # not empty (someone filed a card there since) or already gone
            return


def _state(vault: Path, item: dict) -> str:
    """'before', 'after', 'half' or 'changed': where one file of a run stands now. 'half' is a
    move killed between linking the new name and unlinking the old: both hold their side."""
    at_rel = vaultio.read_bytes(vaultio.inside(vault, item["rel"]))
    if item["to"] == item["rel"]:
        return {item["before"]: "before", item["after"]: "after"}.get(_sha(at_rel), "changed")
    at_to = vaultio.read_bytes(vaultio.inside(vault, item["to"]))
    if at_to is None and _sha(at_rel) == item["before"]:
        return "before"
    if at_rel is None and _sha(at_to) == item["after"]:
        return "after"
    if _sha(at_rel) == item["before"] and _sha(at_to) == item["after"]:
        return "half"
    return "changed"


def _blocker(vault: Path, item: dict) -> str:
    """The path that keeps a changed file of a run from going back: its old path when a moved
    card's old name was taken since (the card itself is as the run left it), else its path now."""
    if item["to"] != item["rel"] and os.path.lexists(vaultio.inside(vault, item["rel"])) \
            and _sha(vaultio.read_bytes(vaultio.inside(vault, item["to"]))) == item["after"]:
        return f"{item['rel']} (taken by another file; {item['to']} would move back there)"
    return item["to"]


def _bring(cfg: Config, vault: Path, run: str, item: dict, state: str, side: str) -> None:
    """Bring one file standing at `state` to `side`: write it when it stands at the other side;
    end a half move by unlinking the other side's name; leave a changed file as it is."""
    if state == "half":
        os.unlink(vaultio.inside(vault, item["rel"] if side == "after" else item["to"]))
        if side == "before":
            _drop_made_folders(vault, item)
    elif state in ("before", "after") and state != side:
        _put(cfg, vault, run, item, side)


def _put(cfg: Config, vault: Path, run: str, item: dict, side: str) -> None:
    """Bring one file to `side` ('before' or 'after')."""
    data = (folder(cfg) / run / f"{item['n']}.{side}").read_bytes()
    if _sha(data) != item[side]:
        raise Rejected(f"the saved copy of {item['rel']} in run {run} is damaged; nothing more was changed")
    here, there = (item["rel"], item["to"]) if side == "after" else (item["to"], item["rel"])
    target = vaultio.inside(vault, there)
    if here == there:
        atomic.replace(target, data)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    source = vaultio.inside(vault, here)
    if _sha(vaultio.read_bytes(source)) == item[side]:
        # A card only moving goes as `mv` moves it, the file itself, its old name dropped at
        # once: written anew, its two names stood side by side while the new one was fsynced,
        # and a watcher that looked then indexed a copy, the card's id lost with the old name.
        if not atomic.move_no_clobber(source, target):
            raise Rejected(f"{there} is taken; nothing more was changed")
    else:
        mode = os.stat(source).st_mode & 0o7777  # a private card stays private
        if not atomic.create(target, data, mode):
            raise Rejected(f"{there} is taken; nothing more was changed")
        os.unlink(source)
    if side == "before":
        _drop_made_folders(vault, item)


def transition(cfg: Config, vault: Path, run: str, files: list[dict], direction: str) -> None:
    """Move every file of a run to its 'after' (apply) or 'before' (undo) side, journaled."""
    target, source = ("after", "before") if direction == "apply" else ("before", "after")
    entry = journal.Entry(cfg.home.path, {"op": OP, "run": run, "direction": direction,
                                          "vault": str(vault)})
    try:
        for item in files:
            state = _state(vault, item)
            if state == "changed":  # edited since the plan was made: all of the run, or none
                raise Rejected(f"{item['to']} was edited while run {run} was being written; "
                               "nothing of it was kept: look at the plan again and rerun it")
            _bring(cfg, vault, run, item, state, target)
    except OSError as exc:
        # A file or folder we may not write (or a full disk): finishing would meet it again, so
        # the files already written go back, and the run is refused as a whole.
        try:
            for item in files:
                _bring(cfg, vault, run, item, _state(vault, item), source)
        except (OSError, MemsyncError):
            entry.release()  # the next consolidate settles it
            raise _refused(run, direction, exc, settled=False) from None
        entry.finish()
        raise _refused(run, direction, exc, settled=True) from None
    except BaseException:
        try:
            _settle(cfg, vault, run, files, target, source)
        except (OSError, MemsyncError):
            entry.release()  # the next consolidate finishes it
            raise
        entry.finish()
        raise
    entry.finish()


def _refused(run: str, direction: str, exc: OSError, settled: bool) -> Rejected:
    """A run stopped by a file it could not write, said with what to do."""
    what = f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc)
    if settled:
        return Rejected(f"run {run} could not {direction} ({what}); nothing of it was kept: fix that "
                        "(a folder memsync may not write, a file where a folder should be, a full "
                        "disk), then run it again")
    return Rejected(f"run {run} could not {direction} ({what}), nor put back what it had written; "
                    "once that is fixed, the next `memsync consolidate` settles it")


def _settle(cfg: Config, vault: Path, run: str, files: list[dict], target: str, source: str) -> str:
    """After an interruption: finish when every file is at one of the two sides, else put the
    ones already moved back (a file edited meanwhile is left as it is)."""
    states = [_state(vault, item) for item in files]
    if "changed" not in states:
        for item, state in zip(files, states, strict=True):
            _bring(cfg, vault, run, item, state, target)
        return "finished"
    for item, state in zip(files, states, strict=True):
        _bring(cfg, vault, run, item, state, source)
    return "rolled back"


def _manifest(cfg: Config, run: str) -> dict:
    if not run or "/" in run or run.startswith("."):
        raise BadArgument(f"{run!r} is not a consolidate run; runs are listed in {folder(cfg)}")
    try:
        manifest = json.loads((folder(cfg) / run / "manifest.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):  # a saved plan's name is no run either
        raise NotFound(f"no consolidate run {run!r} in {folder(cfg)}; a run is the name "
                       "`consolidate --apply` printed (a folder there)") from None
    except (OSError, ValueError) as exc:
        raise Rejected(f"the record of run {run!r} cannot be read ({exc}); undo it by hand from "
                       f"the copies in {folder(cfg) / run}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list) or "vault" not in manifest:
        raise Rejected(f"the record of run {run!r} is damaged; undo it by hand from the copies in "
                       f"{folder(cfg) / run}")
    return manifest


# How far apart the name of a run and its moment can be: its name is the local time of the
# process that made it, which may be in another zone (UTC-12 to +14) or a clock change away.
_NAME_SLACK = 2 * 86400


def made_since(cfg: Config, moment: float) -> bool:
    """Whether a run was made at or after `moment` (seconds since the epoch). Runs are named by
    local time without a zone, so their names order them only when they are days apart; nearer
    than that, the time with its zone in each manifest decides."""
    runs = sorted((p for p in folder(cfg).glob("[0-9]*") if (p / "manifest.json").is_file()),
                  key=lambda p: p.name, reverse=True)
    for path in runs:
        named = _named_seconds(path.name)
        if named is not None and named < moment - _NAME_SLACK:
            return False  # this one and every older name: made well before
        at = _made_at(path / "manifest.json")
        if (at if at is not None else named or 0.0) >= moment:
            return True
    return False


def _named_seconds(name: str) -> float | None:
    """The moment a run's name (YYYYMMDD-HHMMSS-xxxxxx) gives, read as this machine's time."""
    try:
        return dt.datetime.strptime(name[:15], "%Y%m%d-%H%M%S").timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def _made_at(manifest: Path) -> float | None:
    """The moment a run's manifest was written (its `at`, with the zone), None if unreadable."""
    try:
        return dates.stamp_seconds(json.loads(manifest.read_text(encoding="utf-8"))["at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def undo(cfg: Config, run: str) -> dict:
    recovered = recover(cfg)
    unsaved = next((r for r in recovered if r.get("run") == run and r.get("unsaved")), None)
    if unsaved:
        raise NotFound(f"run {run} was {unsaved['action']}")
    manifest = _manifest(cfg, run)
    vault = Path(manifest["vault"])
    files = manifest["files"]
    with journal.writing(cfg.home.path):
        states = [_state(vault, item) for item in files]
        changed = [_blocker(vault, item) for item, state in zip(files, states, strict=True) if state == "changed"]
        if changed:
            raise Rejected(f"{len(changed)} file(s) of run {run} changed after it ({', '.join(changed[:5])}); "
                           "nothing was undone: put them back as the run left them, or edit by hand")
        if all(state == "before" for state in states):
            return {"status": "unchanged", "run": run, "note": "this run is already undone"}
        transition(cfg, vault, run, files, "undo")
    result = {"status": "undone", "run": run, "files": len(files), "indexed": sync(cfg, files, "undo")}
    if recovered:
        result["recovered"] = recovered
    return result


def sync(cfg: Config, files: list[dict], direction: str | None) -> bool | None:
    """Bring the index in line with a run's files; `direction` ('apply', 'undo'; None for a run
    rolled back) says which way its moves went, so each moved card keeps its id."""
    warnings: list[str] = []
    rels = sorted({p for item in files for p in (item["rel"], item["to"])})
    with vaultio.index_or_none(cfg, warnings) as index:
        return vaultio.sync(cfg, index, rels, warnings, _moved(vaultio.root(cfg), files, direction))


def _moved(vault: Path, files: list[dict], direction: str | None) -> list[tuple[str, str]]:
    """The moves `direction` made, (old name, new name), those that stand on disk now."""
    moved = []
    for item in files if direction else []:
        src, dst = (item["rel"], item["to"]) if direction == "apply" else (item["to"], item["rel"])
        if src != dst and os.path.lexists(vaultio.inside(vault, dst)) \
                and not os.path.lexists(vaultio.inside(vault, src)):
            moved.append((src, dst))
    return moved


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
            sync(cfg, manifest["files"], entry.get("direction") if action == "finished" else None)
        except (MemsyncError, OSError, KeyError, ValueError) as exc:
            done.append({"op": OP, "run": run, "action": f"left for later ({getattr(exc, 'message', exc)})"})
            return False
        done.append({"op": OP, "run": run, "direction": entry.get("direction"), "action": action})
        return True

    journal.replay(cfg.home.path, handle)
    return done + _drop_unsaved(cfg)


def _unsaved(cfg: Config) -> list[Path]:
    """Run folders with no manifest: their process was killed while it saved the copies, before
    any file of the vault changed (the manifest is written last, the journal after it)."""
    try:
        found = [p for p in folder(cfg).iterdir() if not p.name.startswith(".")
                 and p.is_dir() and not p.is_symlink() and not (p / "manifest.json").exists()]
    except FileNotFoundError:
        return []
    return sorted(found)


def _drop_unsaved(cfg: Config) -> list[dict]:
    """Remove the folders of runs killed while they saved: they changed nothing, and undo
    cannot use them. Looked at under the write lock, which a save in progress holds."""
    if not _unsaved(cfg):  # every write comes by here: no lock taken when there is nothing
        return []
    done = []
    with journal.writing(cfg.home.path):
        for path in _unsaved(cfg):
            try:
                shutil.rmtree(path)
            except OSError as exc:
                done.append({"op": OP, "run": path.name, "unsaved": True,
                         "action": f"killed while its copies were saved; remove {path} by hand ({exc.strerror or exc})"})
                continue
            done.append({"op": OP, "run": path.name, "unsaved": True,
                         "action": "killed while its copies were saved, before any file changed: nothing to undo, its folder removed"})
    return done
