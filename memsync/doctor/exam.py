"""`memsync doctor`: is this index sound? Read-only unless asked to repair.

`diagnose` runs every check of memsync.doctor.checks over the index (opened as it is: not
created, not migrated) and the data home. `run` adds the repairs of `--fix`, which touch only
what lives in the index and the home: drifted files go through the one indexer path again, a
damaged full-text index is rebuilt, stray ids are retired, settled journal entries dropped, a
stale lock removed, loose modes tightened. No note's or source's byte is written (in the vault,
only memsync's own files: temp files of killed writers and the trash's name record, whose stale
entries are dropped), except by the two flags that say so: `--finish-writes` completes an interrupted supersede exactly as the next
write command would, and `--fix-pairs` edits the vault cards whose supersede partner is gone
(through the write side: the card left behind is made valid again), naming each file changed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from memsync import api, private
from memsync.config import Config
from memsync.doctor import checks, leftovers
from memsync.doctor.checks import Finding, home_checks, index_checks, supersede_state
from memsync.errors import BadEnvironment
from memsync.model import TRASH
from memsync.output import plural
from memsync.pathnames import file_part
from memsync.store import health, migrations, tally
from memsync.store.connection import DB_ERRORS
from memsync.store.index import Index
from memsync.write import journal, trashnames

BUSY_WAIT = 5.0  # seconds a check waits for another process's write lock before it says busy


def diagnose(cfg: Config, wait: float = BUSY_WAIT) -> tuple[list[Finding], dict]:
    """(findings, what was looked at). BadEnvironment when there is nothing to check. A busy,
    read-only or damaged index is a finding saying so, never an exception."""
    db = cfg.db.path
    if db.is_dir():
        raise BadEnvironment(f"{db} is a folder, not an index file: move it away (or point --db / "
                             "MEMSYNC_DB at a file) and run `memsync index`")
    if not db.is_file():
        raise BadEnvironment(cfg.no_index())
    checked = {"cards": 0, "files": 0, "sources": len(cfg.sources)}
    found = checks.writable(cfg)
    try:
        index = Index.existing(db, wait)
    except DB_ERRORS as exc:
        return _without_repeats(found + [checks.db_failure(cfg, exc, wait)]) + home_checks(cfg), checked
    try:
        version = health.schema_version(index)
        if version > len(migrations.MIGRATIONS):
            raise BadEnvironment(
                f"the index at {db} was written by a newer memsync (schema {version}); "
                "upgrade memsync to check it")
        found += index_checks(cfg, index, writable=not found)
        if not any(f.check == "schema" and not f.fixable for f in found):  # no cards table
            checked["cards"], checked["files"] = tally.rows(index, "cards"), tally.rows(index, "files")
    except DB_ERRORS as exc:
        found = _without_repeats(found + [checks.db_failure(cfg, exc, wait)])
    finally:
        index.close()
    return found + home_checks(cfg), checked


def _write_named(report: dict) -> str:
    """An interrupted write, as --finish-writes names what it did to it."""
    if report.get("op") == "move":
        return f"move of {report['src']} to {report['dst']}"
    if report.get("op") == "consolidate":
        return f"consolidate run {report.get('run')}"
    return f"supersede of {report.get('old')}"


def _without_repeats(found: list[Finding]) -> list[Finding]:
    """A read-only index said once: the writable check names it better than the error does."""
    if any(f.check == "writable" for f in found[:-1]) and found[-1].check == "writable":
        return found[:-1]
    return found


def run(cfg: Config, fix: bool = False, finish_writes: bool = False, fix_pairs: bool = False,
        wait: float = BUSY_WAIT, waiting: Callable[[int | None], None] | None = None) -> dict:
    """The checks, and the repairs asked for. `waiting` is told, once, when a repair that reads
    every file again waits for another process's reindex (api.reindex)."""
    findings, checked = diagnose(cfg, wait)
    fixed: list[str] = []
    blocked = [f for f in findings if f.check in ("writable", "busy")]
    if blocked and (fix or finish_writes):
        not_fixed = ("nothing was repaired: " + ("the index is not writable" if blocked[0].check
                     == "writable" else "the index is busy") + f"; {blocked[0].fix}")
        return {"sound": False, "findings": [f.to_dict() for f in findings], "checked": checked,
                "fixed": [], "not_fixed": not_fixed}
    if finish_writes:
        from memsync.write.supersede import recover

        fixed += [f"{_write_named(r)}: {r['action']}" for r in recover(cfg)]
    if fix_pairs:
        from memsync.write.pairs import unpair

        for rel in sorted({p for f in findings if f.action == "unpair" for p in f.paths}):
            fixed += unpair(cfg, rel)
    if fix and any(f.fixable for f in findings):
        try:
            fixed += repair(cfg, findings, waiting)
        except OSError as exc:  # a folder of the home that cannot be written, a full disk
            raise BadEnvironment(f"doctor --fix could not repair: {exc}; make the home "
                                 f"{cfg.home.path} writable (or free space) and run it again") from None
    if fixed:
        findings, checked = diagnose(cfg, wait)
    result = {"sound": not findings, "findings": [f.to_dict() for f in findings],
              "checked": checked}
    if fix or finish_writes or fix_pairs:
        result["fixed"] = fixed
    return result


def summary(cfg: Config) -> dict:
    """The short form memory_stats gives when asked to check."""
    try:
        findings, _checked = diagnose(cfg)
    except BadEnvironment as err:
        return {"sound": False, "findings": [{"check": "index", "message": err.message}]}
    return {"sound": not findings,
            "findings": [{"check": f.check, "message": f.message, "fix": f.fix} for f in findings]}


# --- repairs ----------------------------------------------------------------------------------

def repair(cfg: Config, findings: list[Finding],
           waiting: Callable[[int | None], None] | None = None) -> list[str]:
    """Fix what can be fixed without writing a note's or source's byte; returns what was done."""
    from memsync.watch.lock import (  # the watcher's own probe; imports watchdog, so late
        index_lock_file,
        remove_stale,
    )

    todo = [f for f in findings if f.fixable]
    done: list[str] = []
    loose = [p for f in todo if f.action == "tighten" for p in f.paths]
    if loose:
        changed = private.tighten([Path(p) for p in loose])
        done.append(f"made {len(changed)} paths private")
    if any(f.action == "unlock" for f in todo):
        for stale in (cfg.lock_file, index_lock_file(cfg.db.path)):  # a killed watcher left both
            if remove_stale(stale):
                done.append(f"removed the stale watcher lock {stale}")
    swept = leftovers.sweep([p for f in todo if f.action == "sweep" for p in f.paths])
    if swept:
        done.append(f"removed {plural(len(swept), 'temp file')} of killed memsync processes")
    if any(f.action == "prune" for f in todo):
        done += _prune_trash_names(cfg)
    for f in todo:
        if f.action == "set_aside":
            done += _set_aside(Path(f.paths[0]))
    if any(f.action == "drop" for f in todo):
        done += _drop_settled_journal(cfg)
    rebuild = any(f.action == "rebuild" for f in todo)
    finish = any(f.action == "finish" for f in todo)
    if rebuild or finish or any(f.action == "migrate" for f in todo):
        # Opening the index migrates it; then every file is looked at again (a rebuild re-reads
        # them all), which also settles any drift and stray id the checks could not see.
        report = api.reindex(cfg, rebuild=rebuild, waiting=waiting)
        if report.get("recovered"):
            from memsync.output import recovery_lines

            done.append("; ".join(line.strip() for line in recovery_lines(report["recovered"])))
        return done + ["rebuilt the index from the files" if rebuild else "finished the first index"
                       if finish else "migrated the index"]
    syncs = [f for f in todo if f.action == "sync"]
    retires = [f for f in todo if f.action == "retire"]
    settle = any(f.action == "settle" for f in todo)
    if syncs or retires or settle:
        with api.open_index(cfg) as index:
            if settle and index.settle_links():
                done.append("finished what an index stopped early left to do")
            work = api.indexer(cfg, index)
            for f in syncs:
                assert f.source is not None  # a drift finding names its source
                work.sync_paths(f.source, f.paths)
                done.append(f"re-synced {len(f.paths)} files of {f.source}")
            for f in retires:
                done.append(f"retired {_retire(cfg, index, f)} ids of {f.source}")
    return done


def _retire(cfg: Config, index: Index, finding: Finding) -> int:
    """Retire ids (and their read counts) bound to trash paths still gone: a purge's work."""
    count = 0
    with index.transaction():
        for path in finding.paths:
            if not os.path.lexists(os.path.join(cfg.vault.path, *file_part(path).split("/"))):
                index.clear_stats_for_path("vault", path)
                count += 1
    return count


def _prune_trash_names(cfg: Config) -> list[str]:
    """Drop the name record's entries of copies gone from the trash: memsync's own file beside
    the copies, not a card, so no note's byte changes."""
    try:
        with journal.writing(cfg.home.path):  # as every write of the record
            gone = trashnames.prune(cfg.vault.path)
    except OSError as exc:
        raise BadEnvironment(f"doctor --fix could not rewrite {cfg.vault.path / trashnames.RECORD_REL} "
                             f"({exc}); make {cfg.vault.path / TRASH} writable and run it again") from None
    if not gone:
        return []
    entries = "1 entry" if len(gone) == 1 else f"{len(gone):,} entries"
    return [f"dropped {entries} of copies no longer in the trash from {trashnames.RECORD_REL}"]


def _set_aside(path: Path) -> list[str]:
    """An unreadable plan cannot be replayed: rename it out of the journal's way (kept for a
    person to read) and drop its lock."""
    if not path.exists():
        return []
    os.replace(path, path.with_name(path.name + ".unreadable"))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path.with_suffix(".lock"))
    return [f"set aside the unreadable journal entry {path.name} as {path.name}.unreadable"]


def _drop_settled_journal(cfg: Config) -> list[str]:
    """Drop the plans of dead supersedes whose files need nothing more (re-syncing both)."""
    vault, dropped = cfg.vault.path, []

    def settled(plan: dict) -> bool:
        if plan.get("op") != "supersede" or plan.get("vault") != str(vault):
            return False
        if supersede_state(vault, plan) == "half done":
            return False
        with api.open_index(cfg) as index:
            api.indexer(cfg, index).sync_paths("vault", [p for p in (plan["old"], plan.get("new")) if p])
        dropped.append(plan["old"])
        return True

    journal.replay(cfg.home.path, settled)
    return [f"dropped the settled journal entry of {old}" for old in dropped]
