"""A plan saved for review (`consolidate --save`), and the part of it that can still be applied.

A saved plan holds what was shown (merges, summaries, moves, what was left alone) and, per file,
the digest of its bytes when the plan was made and its text after. `--apply --plan` carries out
exactly that, never a plan built anew: a file whose bytes differ from the digest was edited
since, so the steps that touch it are left out (with every step sharing a file with them: one
file's new text may hold two steps) and said so; the rest is applied as it was reviewed.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import time
from pathlib import Path

from memsync import dates, notes, private
from memsync.adapters import hidden
from memsync.config import Config
from memsync.errors import NotFound, PathOutsideVault, Rejected
from memsync.lifecycle import access
from memsync.lifecycle.plan import FileChange, Plan, emptied_why
from memsync.write import atomic, runs, vaultio
from memsync.write import frontmatter_edit as fe

STEPS = (("merges", "merge"), ("summaries", "summary"), ("moves", "move"))
MAX_A_DAY = 1000  # plans saved in one day


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


# plan-YYYYMMDD.json, then plan-YYYYMMDD-2.json, -3, ... for more saves the same day
_NAME = re.compile(r"plan-(\d{8})(?:-([1-9]\d*))?\.json")


def _order(path: Path) -> tuple:
    """Saved plans oldest first: by day, then by number (`-10` after `-9`, both after the day's
    first); a plan-*.json of another name goes before them all."""
    named = _NAME.fullmatch(path.name)
    return (named.group(1), int(named.group(2) or 1), "") if named else ("", 0, path.name)


def _saved_plans(folder: Path) -> list[Path]:
    """The plans saved in `folder`, oldest first (_order)."""
    return sorted(folder.glob("plan-*.json"), key=_order) if folder.is_dir() else []


def _plan_path(folder: Path, day: str, n: int) -> Path:
    return folder / (f"plan-{day}.json" if n == 1 else f"plan-{day}-{n}.json")


def _last_of_day(folder: Path, day: str) -> int:
    """The number of the day's newest saved plan (1: plan-YYYYMMDD.json), 0 when there is none."""
    numbers = [int(named.group(2) or 1) for path in folder.glob(f"plan-{day}*.json")
               if (named := _NAME.fullmatch(path.name)) and named.group(1) == day]
    return max(numbers, default=0)


def save(cfg: Config, shown: dict, built: Plan) -> tuple[Path, Path | None]:
    """Leave the plan in the home as plan-YYYYMMDD.json (private), file contents included; a
    plan saved earlier the same day is kept, this one is numbered after it (plan-YYYYMMDD-2.json):
    a plan under review, or the timer's, must not be replaced by a second save. Returns its path
    and that of the day's plan saved before it (None for the first)."""
    changes = [{"rel": c.rel, "to": c.to or c.rel, "before": _sha(c.before), "after_sha": _sha(c.after),
                "after": None if c.after == c.before else c.after.decode("utf-8"), "had_text": c.had_text}
               for c in built.changes.values()]
    record = {**shown, "vault": str(vaultio.root(cfg)), "saved_at": dates.now_iso(),
              "stamped": built.now, "changes": changes}
    folder = private.mkdir(runs.folder(cfg))
    day = time.strftime("%Y%m%d")
    # after the day's last plan, not in a gap one removed left (plan-YYYYMMDD.json reviewed and
    # deleted): the newest plan must be the one a plain --apply and a listing take as newest
    last = _last_of_day(folder, day)
    with atomic.Staged(folder, json.dumps(record, ensure_ascii=False, indent=1).encode(),
                       private.FILE_MODE) as staged:
        earlier = _plan_path(folder, day, last) if last else None
        for n in range(last + 1, MAX_A_DAY + 1):
            path = _plan_path(folder, day, n)
            if staged.link(path):  # never over a plan saved before (two saves at once included)
                return path, earlier
            earlier = path
    raise Rejected(f"{MAX_A_DAY} plans were saved today in {folder}; remove the ones reviewed, then save again")


LISTED = 5  # saved plans a not-found message names, the newest


def _listed(folder: Path) -> str:
    """The newest saved plans by name, for a --plan that names none of them (the day's second
    save is -2: which numbers exist is not guessable)."""
    plans = _saved_plans(folder)
    names = [p.name for p in plans[-LISTED:]]
    older = f"; {len(plans) - len(names)} older" if len(plans) > len(names) else ""
    return f"{', '.join(names)} (newest last{older}), in {folder}" if names else ""


def load(cfg: Config, name: str) -> tuple[Path, dict]:
    """A saved plan by its file name in the home's consolidate folder, or by its path."""
    path = Path(name).expanduser()
    if not path.is_file():
        path = runs.folder(cfg) / name
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        there = _listed(runs.folder(cfg))
        raise NotFound(f"no saved plan {name!r}; " + (
            f"the saved plans are {there}" if there else
            f"`memsync consolidate --save` leaves one in {runs.folder(cfg)} (plan-YYYYMMDD.json, "
            "plan-YYYYMMDD-2.json for a second save that day)")) from None
    except (OSError, ValueError) as exc:
        raise Rejected(f"the saved plan {path} cannot be read ({exc}); save a new one with "
                       "`memsync consolidate --save`") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("changes"), list):
        raise Rejected(f"{path} holds no file contents (a plan saved by an older memsync, or no "
                       "plan): save a new one with `memsync consolidate --save` and review it")
    if saved.get("vault") != str(vaultio.root(cfg)):
        raise Rejected(f"{path} was saved for the vault {saved.get('vault')}, not this one "
                       f"({vaultio.root(cfg)}); nothing was changed")
    wrong = _malformed(vaultio.root(cfg), saved)
    if wrong:
        raise Rejected(f"{path} is damaged ({wrong}; edited by hand?): nothing was changed; save a "
                       "new plan with `memsync consolidate --save`")
    return path, saved


def _malformed(vault: Path, saved: dict) -> str | None:
    """What in a plan read back is not as `save` writes it, or None: a plan edited by hand must
    not move or write a file outside the cards of the vault, nor end in a traceback."""
    for item in saved["changes"]:
        if not isinstance(item, dict) or not isinstance(item.get("after"), str | None) \
                or not all(isinstance(item.get(key), str) for key in ("rel", "to", "before", "after_sha")):
            return f"a file change is not as memsync writes it: {str(item)[:80]}"
        for rel in (item["rel"], item["to"]):
            try:
                vaultio.inside(vault, rel)
            except PathOutsideVault:
                return f"{rel!r} is not a path inside the vault"
            if hidden(rel) or not rel.endswith(".md"):
                return f"{rel!r} is not a card of the vault"
            if posixpath.normpath(rel) != rel:  # `a//b.md` is a/b.md: the check of two at one name would miss it
                return f"{rel!r} is not a path as memsync writes it"
    names = [rel for item in saved["changes"] for rel in {item["rel"], item["to"]}]
    if len(names) != len(set(names)):  # one file's change holds all its steps; no two end at one name
        return f"two of its file changes name {next(n for n in names if names.count(n) > 1)}"
    for key in [key for key, _kind in STEPS] + ["skipped"]:
        steps = saved.get(key) or []
        if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps) or (
                key != "skipped" and not all(isinstance(step.get("touches"), list)
                                             and all(isinstance(rel, str) for rel in step["touches"])
                                             for step in steps)):
            return f"its {key} are not as memsync writes them"
    return _steps_disagree(saved)


def _steps_disagree(saved: dict) -> str | None:
    """Where a plan's file changes and the steps it shows part ways, or None. Each file a step
    touches has its change and each change is a step's, so a change dropped by hand cannot
    leave half a merge (a keeper saying it supersedes a card never marked), and a file moves
    only where a move step says."""
    touched = {rel for key, _kind in STEPS for step in saved.get(key) or [] for rel in step["touches"]}
    moves = {step.get("from"): step.get("to") for step in saved.get("moves") or []}
    changed = {item["rel"]: item["to"] for item in saved["changes"]}
    for rel in sorted(touched - changed.keys()):
        return f"a step touches {rel}, and no file change is there for it"
    for rel, to in changed.items():
        if rel not in touched:
            return f"the file change of {rel} belongs to no step"
        if to != moves.get(rel, rel):
            return f"the file change of {rel} ends at {to}, where no move step of the plan takes it"
    return None


# The keys a merge sets to the time it is made (memsync.lifecycle.plan._merge).
_STAMPED = ("updated", "invalid_at")


def _restamp(after: bytes, rel: str, stamped: str | None, when: str) -> bytes:
    """A file's text as saved, with the time its merge wrote (the plan's making) moved to
    `when`: a card superseded by an apply days after the review was the current fact until
    then, and a brief had since the review must still hear of the merge."""
    if not stamped or when == stamped:
        return after
    card = notes.parse(after, rel)
    keys: dict[str, str | None] = {key: when for key in _STAMPED if getattr(card, key) == dates.normalize(stamped)}
    return fe.set_keys(after.decode("utf-8"), keys).encode("utf-8") if keys else after


def _applied(at_end: bytes | None, item: dict, stamped: str | None) -> bool:
    """Whether a file is as the plan left it when it was applied, at whatever time that was."""
    if _sha(at_end) == item["after_sha"]:
        return True
    if at_end is None or item["after"] is None or not stamped:
        return False
    written = dict(fe.key_blocks(at_end.decode("utf-8", errors="replace")))
    for key in _STAMPED:
        when = written.get(key, "").partition(":")[2].strip()
        if when and _restamp(item["after"].encode("utf-8"), item["to"], stamped, when) == at_end:
            return True
    return False


def _why_not(vault: Path, item: dict, at: str, stamped: str | None = None) -> tuple[str | None, bytes | None]:
    """(why the file cannot take its change now, or None; its bytes now)."""
    try:
        now = access.read(vault, item["rel"])
    except Rejected as exc:
        return exc.message, None
    moved = item["to"] != item["rel"]
    if _sha(now) == item["before"]:
        if moved and os.path.lexists(vaultio.inside(vault, item["to"])):
            return f"{item['to']} was taken after the plan was saved ({at})", now
        return access.unwritable(vault, item["rel"], item["to"]), now
    at_end = vaultio.read_bytes(vaultio.inside(vault, item["to"])) if moved else now
    if _applied(at_end, item, stamped) and (not moved or now is None):
        return f"{item['to']} is already as the plan leaves it", now
    if now is None:
        return f"{item['rel']} is gone since the plan was saved ({at})", now
    # emptied, as a plan made now says it (a plan saved by an older memsync keeps no had_text:
    # edited, as it always said)
    if item.get("had_text") and not notes.parse(now, item["rel"]).body.strip():
        return emptied_why(item["rel"], f"the plan was saved ({at})"), now
    return f"{item['rel']} was edited after the plan was saved ({at})", now


def _when(saved_at: object) -> str:
    """When a plan was saved, on this machine's clock (a plan saved in another zone, or before a
    clock change, reads in order with the files' times)."""
    return dates.here(saved_at) if isinstance(saved_at, str) and saved_at else "?"


def applicable(cfg: Config, saved: dict) -> tuple[list[FileChange], dict]:
    """The changes of a saved plan that still apply, and the plan's steps that go with them
    (the rest in `skipped`, each saying which file changed)."""
    vault = vaultio.root(cfg)
    steps = [(kind, key, step) for key, kind in STEPS for step in saved.get(key) or []]
    owner = {rel: rel for item in saved["changes"] for rel in (item["rel"],)}

    def root(rel: str) -> str:
        while owner.setdefault(rel, rel) != rel:
            rel = owner[rel]
        return rel

    for _kind, _key, step in steps:  # steps that share a file are applied together or not at all
        first, *rest = step.get("touches") or [None]
        for rel in rest:
            owner[root(rel)] = root(first)
    problems: dict[str, str] = {}
    changes: dict[str, FileChange] = {}
    stamped, when = saved.get("stamped"), dates.now_iso()
    for item in saved["changes"]:
        why, now = _why_not(vault, item, _when(saved.get("saved_at")), stamped)
        if why:
            problems[root(item["rel"])] = why
            continue
        assert now is not None  # its digest matched
        after = now if item["after"] is None else item["after"].encode("utf-8")
        if _sha(after) != item["after_sha"]:
            raise Rejected(f"the saved plan's text for {item['rel']} does not match its digest (edited "
                           "by hand?); nothing was changed: save a new plan with `memsync consolidate --save`")
        changes[item["rel"]] = FileChange(item["rel"], now, _restamp(after, item["to"], stamped, when),
                                          None if item["to"] == item["rel"] else item["to"])
    kept: dict = {key: [] for key, _kind in STEPS}
    skipped = list(saved.get("skipped") or [])
    for kind, key, step in steps:
        blocked = problems.get(root((step.get("touches") or [""])[0]))
        if blocked:
            skipped.append({"step": kind, "path": step.get("path") or step.get("from"),
                            "why": f"{blocked}: this step is left out"})
        else:
            kept[key].append(step)
    return [c for rel, c in changes.items() if root(rel) not in problems], {**kept, "skipped": skipped}


def newest_unapplied(cfg: Config) -> tuple[Path, dict] | None:
    """The newest saved plan, when it was saved after the latest run (one before it is stale)."""
    folder = runs.folder(cfg)
    plans = _saved_plans(folder)
    if not plans:
        return None
    try:
        path, saved = load(cfg, str(plans[-1]))
    except (NotFound, Rejected):
        return None
    saved_at = saved.get("saved_at")
    if not isinstance(saved_at, str) or not saved_at:
        return None
    # with its zone; one an older memsync wrote without is this machine's time (dates.seconds)
    return None if runs.made_since(cfg, dates.seconds(saved_at)) else (path, saved)


def same_plan(shown: dict, built: Plan) -> bool:
    """Whether a plan made now does what a saved one does: the same steps over the same files,
    as they were. Not by the files' new texts: a merge writes the time it is made (`updated`,
    `invalid_at`), so those differ from any plan made a second apart."""
    def steps(plan: dict) -> list[str]:
        return sorted(json.dumps(step, sort_keys=True, ensure_ascii=False)
                      for key, _kind in STEPS for step in plan.get(key) or [])

    files_then = {(c["rel"], c["to"], c["before"]) for c in shown["changes"]}
    files_now = {(c.rel, c.to or c.rel, _sha(c.before)) for c in built.changes.values()}
    return files_then == files_now and steps(shown) == steps(built.to_dict())
