"""The checks behind `memsync doctor`, each a function that looks and returns findings.

Nothing here writes: the index is read through a connection that is never committed, files are
looked at the way the indexer looks at them (memsync.reading: stat signature first, hash only
when it differs) and the journal's plans are read, not replayed. memsync.doctor.exam runs them and,
with --fix, repairs what lives in the index.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import memsync.adapters as adapters
from memsync import private, reading
from memsync.config import Config
from memsync.doctor import leftovers
from memsync.model import TRASH
from memsync.output import plural
from memsync.pathnames import file_part
from memsync.store import backlinks, fts, health, migrations
from memsync.store.connection import failure_kind
from memsync.store.index import Index
from memsync.sync import MAX_FILE_BYTES, Indexer, mass_removal
from memsync.watch import lock
from memsync.write import journal, pairs, trashnames, vaultio

SHOWN = 5  # paths named in one message; the JSON lists them all
REINDEX = "run `memsync index` (or `memsync doctor --fix`)"
MASS_REMOVAL = ("if the folder is only unmounted or not synced yet, bring it back; if you removed "
                "those files, run `memsync index --allow-mass-removal` (--fix keeps their cards)")
REBUILD = "run `memsync doctor --fix` (it rebuilds the index from the files; ids and read counts are kept)"


@dataclass
class Finding:
    check: str  # integrity | busy | writable | schema | drift | load | supersede | journal | problem | id | source | config | semantic | lock | leftover | trash | permissions
    message: str
    fix: str  # what to do, in a sentence
    # `doctor --fix` repairs it without writing a note's byte (in the vault it touches only
    # memsync's own files: temp files of killed writers, the trash's name record)
    fixable: bool = False
    paths: list[str] = field(default_factory=list)
    source: str | None = None
    # what --fix does: sync | settle | finish | rebuild | migrate | retire | drop | set_aside | unlock | sweep | prune | tighten;
    # unpair is done by --fix-pairs only (it edits a vault card)
    action: str | None = None

    def to_dict(self) -> dict:
        data = {"check": self.check, "message": self.message, "fix": self.fix,
                "fixable": self.fixable}
        if self.paths:
            data["paths"] = self.paths
        if self.source:
            data["source"] = self.source
        return data


def named(paths: list[str]) -> str:
    shown = ", ".join(paths[:SHOWN])
    return shown + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")


# --- the index file ---------------------------------------------------------------------------

def schema(index: Index) -> list[Finding]:
    version, known = health.schema_version(index), len(migrations.MIGRATIONS)
    if version >= known:
        return []
    lost = health.lost_version(index) if version == 0 else None
    if lost and lost.ours:
        return [Finding("schema", "the index has lost its schema version (SQLite's user_version "
                        "is 0, yet it holds memsync's tables), so no memsync can migrate it",
                        REBUILD, fixable=True, action="rebuild")]
    if lost:
        return [Finding("schema", f"{index.path} is not a memsync index: it holds another "
                        f"program's tables ({named(lost.tables)})", "point --db / MEMSYNC_DB at "
                        "another file, or move this one away and run `memsync index`")]
    return [Finding("schema", f"the index has schema {version}, this memsync writes {known}",
                    "run `memsync doctor --fix` or any memsync command: it migrates the index",
                    fixable=True, action="migrate")]


def integrity(cfg: Config, index: Index, writable: bool = True) -> list[Finding]:
    """SQLite's and FTS5's own checks; FTS5's needs the write lock, so a read-only index gets
    SQLite's only (the writable check says why)."""
    found = []
    for problem in health.integrity(index, fts=writable):
        what = "the index file" if problem.startswith("SQLite") else "the full-text index"
        found.append(Finding("integrity", f"{what} is damaged ({problem})", REBUILD,
                             fixable=True, action="rebuild"))
    unpaired = health.unpaired(index)
    if any(unpaired):
        found.append(Finding(
            "integrity", f"{plural(unpaired[0], 'card')} without full-text rows and "
            f"{plural(unpaired[1], 'full-text row')} without a card", REBUILD,
            fixable=True, action="rebuild"))
    return found


# --- the index against the files --------------------------------------------------------------

def drift(cfg: Config, index: Index) -> list[Finding]:
    """Files that changed, vanished or appeared without the index knowing."""
    found = []
    live = lock.watching(cfg)["live"]
    for source in cfg.sources:
        if not Path(source.root).is_dir():
            continue  # said by the sources check
        changed, appeared, vanished, stored = source_drift(index, source)
        for paths, what in ((changed, "changed"), (appeared, "appeared"), (vanished, "vanished")):
            if not paths:
                continue
            note = " (a watcher is running: it may not have caught up yet)" if live else ""
            message = (f"{plural(len(paths), 'file')} of {source.name} {what} without the "
                       f"index knowing: {named(paths)}{note}")
            if what == "vanished" and mass_removal(len(paths), stored):
                # an unmounted disk looks like this: --fix keeps the cards, as `memsync index` does
                found.append(Finding("drift", message, MASS_REMOVAL, paths=paths, source=source.name))
                continue
            found.append(Finding("drift", message, REINDEX, fixable=True, paths=paths,
                                 source=source.name, action="sync"))
    return found


def unfinished_load(cfg: Config, index: Index) -> list[Finding]:
    """What a bulk index of many transactions (a first index of a large vault, a big change)
    that ended early, killed or failed, left for its end (memsync.store.index.Index.carrying_links):
    the links fields of the cards it wrote before their linkers, and one merge of the full-text
    index, without which every search reads a segment for each transaction it committed."""
    left = [what for key, what in (
        (backlinks.UNSETTLED, "the links fields of cards written before the notes linking them"),
        (fts.DEFERRED, "the merge of the full-text index (searches are slower until it is done)"),
    ) if index.meta(key) is not None]
    since = index.unfinished_since()
    if not left and since is None:
        return []
    live = lock.watching(cfg)["live"]
    note = " (a watcher is running: it may be doing that index now)" if live else ""
    if since is not None:  # the files it never reached are missing: a reconcile finishes it
        return [Finding("load", f"the first index, begun {since}, stopped before its end: only "
                        f"some of the files are in the index{note}", REINDEX, fixable=True,
                        action="finish")]
    return [Finding("load", f"an index of many files stopped before its end and left {' and '.join(left)}"
                    f" to do{note}", REINDEX, fixable=True, action="settle")]


def source_drift(index: Index, source) -> tuple[list[str], list[str], list[str], int]:
    """Files changed, appeared and vanished, and how many files of the source the index holds."""
    adapter = adapters.get(source.adapter, source.root)
    stored = index.file_states(source.name)
    on_disk = Indexer(index, [source]).files_on_disk(source.name)  # what a reconcile reads
    changed: list[str] = []
    appeared: list[str] = []
    for rel in sorted(on_disk):
        state = reading.look(source.root, adapter, MAX_FILE_BYTES, rel, stored.get(rel)).state
        if state in ("content", "unstable") or (rel in stored and state in ("too_large", "bad_name", "unreadable")):
            (changed if rel in stored else appeared).append(rel)
    vanished = sorted(rel for rel in stored if rel not in on_disk)
    return changed, appeared, vanished, len(stored)


def supersede_pointers(index: Index) -> list[Finding]:
    """superseded_by / supersedes naming a missing card, or a pair that does not agree."""
    return [Finding("supersede", p.message, p.fix, paths=list(p.paths), source=p.source,
                    action="unpair" if p.unpairable else None) for p in pairs.problems(index)]


def card_problems(index: Index) -> list[Finding]:
    return [Finding("problem", f"{p['source']}:{p['path']}: {p['message']}",
                    f"fix the {'folder' if p['path'].endswith('/') else 'file'} (the index takes "
                    "it up at the next sync)",
                    paths=[p["path"]], source=p["source"]) for p in index.problems()]


def stray_ids(cfg: Config, index: Index) -> list[Finding]:
    """Ids still bound to a trash path whose file is gone (the trash emptied by hand, not by
    `delete --purge`). An id bound to an ordinary path that is gone is kept on purpose: the card
    gets it back if the file returns (an undo, a git checkout)."""
    vault = cfg.vault.path
    rows = health.ids_under(index, "vault", TRASH)
    def missing(rel: str) -> bool:  # in a folder memsync may not look into: there
        return trashnames.gone(Path(vault, *file_part(rel).split("/")))

    # Back at its place (a restore the index has not seen yet): the drift check says so, and
    # the sync that fixes it gives the card its id back.
    gone = sorted(p for p in rows if missing(p) and missing(p[len(TRASH) + 1:]))
    if not gone:
        return []
    return [Finding(
        "id", f"{plural(len(gone), 'id')} still bound to trash paths that are gone (the trash "
        f"was emptied by hand): {named(gone)}", "run `memsync doctor --fix` to retire them and "
        "drop their read counts, as `memsync delete --purge` would", fixable=True, paths=gone,
        source="vault", action="retire")]


# --- the home ---------------------------------------------------------------------------------

def half_done_writes(cfg: Config) -> list[Finding]:
    found = []
    vault = cfg.vault.path
    for path, plan in journal.orphans(cfg.home.path):
        if plan is None:
            found.append(Finding(
                "journal", f"journal entry {path.name} cannot be read (truncated or damaged)",
                "run `memsync doctor --fix` to set it aside; then run `memsync doctor` again to "
                "see whether the supersede it described left its two cards disagreeing",
                fixable=True, paths=[str(path)], action="set_aside"))
            continue
        if plan.get("op") == "consolidate" and plan.get("vault") == str(vault):
            found.append(Finding(
                "journal", f"consolidate run {plan.get('run')} was interrupted",
                "run `memsync consolidate` (or any write command): it finishes the run, or rolls "
                "it back when one of its files changed meanwhile", paths=[str(path)]))
            continue
        if plan.get("op") == "move" and plan.get("vault") == str(vault):
            found.append(Finding(
                "journal", f"a move of {plan.get('src')} to {plan.get('dst')} was interrupted",
                "run `memsync doctor --finish-writes` (or any write command): it ends the move, "
                f"removing {plan.get('src')} if it is still the same file as {plan.get('dst')}",
                paths=[str(path)]))
            continue
        if plan.get("op") != "supersede" or plan.get("vault") != str(vault):
            continue
        state = supersede_state(vault, plan)
        old, new = plan.get("old"), plan.get("new")
        if state == "half done":
            found.append(Finding(
                "journal", f"a supersede of {old} by {new} was interrupted: {new} is written, "
                f"{old} is not marked yet", "run `memsync doctor --fix --finish-writes` (it "
                f"marks {old} as superseded, or removes {new} if it cannot), or any write "
                "command, which does the same first", paths=[str(path)]))
        else:
            found.append(Finding(
                "journal", f"a supersede of {old} was interrupted after its files were settled "
                f"({state}); its journal entry is left", "run `memsync doctor --fix` to drop it",
                fixable=True, paths=[str(path)], action="drop"))
    return found


def supersede_state(vault: Path, plan: dict) -> str:
    """What recovery (memsync.write.supersede) would find, read only."""
    old_rel, new_rel = plan.get("old") or "", plan.get("new") or ""
    new_card = vaultio.read_card(vault, new_rel) if new_rel and old_rel else None
    if new_card is None or new_card.supersedes != old_rel:
        return "nothing to undo"
    old = vaultio.read_card(vault, old_rel)
    if old is not None and old.superseded_by == new_rel:
        return "already complete"
    return "half done"


def sources(cfg: Config) -> list[Finding]:
    return [Finding("source", problem, "fix the path in config.json (see `memsync paths`)")
            for problem in cfg.folder_problems()]


def config_keys(cfg: Config) -> list[Finding]:
    return [Finding("config", what, fix) for what, fix in cfg.ignored_keys]


def semantic_extra(cfg: Config) -> list[Finding]:
    from memsync.semantic import install_hint

    problem = cfg.semantic_problem()
    return [Finding("semantic", problem, f"{install_hint()}; or set \"semantic\": false")] if problem else []


def stale_lock(cfg: Config) -> list[Finding]:
    status = lock.status(cfg.lock_file)
    if status["live"] or not cfg.lock_file.exists():
        return []
    return [Finding("lock", f"{cfg.lock_file} names watcher pid {status.get('stale_pid')}, which "
                    "is gone", "run `memsync doctor --fix` to remove it (a new watcher also "
                    "takes it over)", fixable=True, paths=[str(cfg.lock_file)], action="unlock")]


def temp_files(cfg: Config) -> list[Finding]:
    """Temp files whose writer was killed mid-write (memsync.doctor.leftovers)."""
    left = [str(p) for p in leftovers.find(cfg)]
    if not left:
        return []
    return [Finding("leftover", f"{plural(len(left), 'temp file')} left by memsync processes "
                    f"that were killed mid-write: {named(left)}", "run `memsync doctor --fix` to "
                    "remove them (only those whose process is still gone)", fixable=True,
                    paths=left, action="sweep")]


def trash_names(cfg: Config) -> list[Finding]:
    """Entries of the trash's name record (memsync.write.trashnames) whose copy left the trash
    without memsync: a file put at that path later would be restored under the recorded name."""
    gone = trashnames.stale(cfg.vault.path)
    if not gone:
        return []
    return [Finding("trash", f"the trash's name record {trashnames.RECORD_REL} still names "
                    f"{len(gone):,} {'copy' if len(gone) == 1 else 'copies'} no longer in the trash (emptied by hand or by "
                    f"another tool): {named(gone)}", "run `memsync doctor --fix` to drop those "
                    "entries (the next delete, restore or purge drops them too)", fixable=True,
                    paths=gone, source="vault", action="prune")]


def permissions(cfg: Config) -> list[Finding]:
    mine = (cfg.vault.path, *(Path(s.root) for s in cfg.sources))
    loose = private.open_paths(cfg.home.path, cfg.db.path, skip=mine)
    if not loose:
        return []
    tighten = "`memsync doctor --fix` (folders become 0700, files 0600)"
    fix = f"run {tighten}"
    shut = [p for p in loose if not private.writable_by_owner(p)]
    if shut:  # `doctor --fix` would be refused as long as the home cannot be written (writable)
        fix = (f"run `{private.chmod_command(shut)}` (writable by you, private to you)"
               + (f", then {tighten}" if len(shut) < len(loose) else ""))
    return [Finding("permissions", f"other users can read {named([str(p) for p in loose])}",
                    fix, fixable=True, paths=[str(p) for p in loose], action="tighten")]


def index_checks(cfg: Config, index: Index, writable: bool = True) -> list[Finding]:
    """Every check that reads the index; a schema behind ours stops them (columns may differ)."""
    behind = schema(index)
    if behind and not behind[0].fixable:
        return behind  # another program's database: none of the checks below applies
    if behind:
        return behind + integrity(cfg, index, writable)
    found = integrity(cfg, index, writable)
    if any(f.check == "integrity" and "index file" in f.message for f in found):
        return found  # a damaged file: what else it says cannot be trusted
    return (found + drift(cfg, index) + unfinished_load(cfg, index) + supersede_pointers(index)
            + card_problems(index) + stray_ids(cfg, index))


def home_checks(cfg: Config) -> list[Finding]:
    return (half_done_writes(cfg) + sources(cfg) + config_keys(cfg) + semantic_extra(cfg)
            + stale_lock(cfg) + temp_files(cfg) + trash_names(cfg) + permissions(cfg))


def writable(cfg: Config) -> list[Finding]:
    """The index, its sidecars and its folder must be writable by us, or nothing can update it
    (the watcher, the write commands, `doctor --fix`)."""
    db = cfg.db.path
    places = [db, db.parent, *(p for p in (db.with_name(db.name + t) for t in ("-wal", "-shm"))
                               if p.exists())]
    blocked = [p for p in places if p.exists() and not os.access(p, os.W_OK)]
    if not blocked:
        return []
    return [Finding("writable", f"the index cannot be written: {named([str(p) for p in blocked])} "
                    "not writable by you, so no command can update it and `doctor --fix` cannot "
                    f"repair it", f"make it writable ({_chmod(cfg, blocked)}), then run `memsync "
                    "doctor` again", paths=[str(p) for p in blocked])]


def _chmod(cfg: Config, paths: list[Path]) -> str:
    # the home's own paths get its private modes: `chmod u+w` would leave a home at 555 open
    return private.writable_command(paths, cfg.home.path)


def db_failure(cfg: Config, exc: Exception, wait: float) -> Finding:
    """A database error met while checking, as what it means: busy is no damage."""
    kind = failure_kind(exc)
    if kind == "busy":
        return Finding("busy", f"the index is busy (another process is writing): it stayed locked "
                       f"for {wait:g} s, so it was not checked", "run `memsync doctor` again in "
                       "a moment (a watcher or an MCP server writes in short bursts; one holding "
                       "the lock for long is shown by `memsync stats`)")
    if kind == "damaged":
        return Finding("integrity", f"the index file is damaged ({exc})", REBUILD, fixable=True,
                       action="rebuild")
    if kind in ("read_only", "cannot_open"):
        return Finding("writable", f"the index at {cfg.db.path} cannot be opened for writing "
                       f"({exc})", f"make it and its folder writable by you "
                       f"({_chmod(cfg, [cfg.db.path, cfg.db.path.parent])}), then run `memsync doctor` again")
    return unreadable(cfg, exc)


def unreadable(cfg: Config, exc: Exception) -> Finding:
    return Finding("integrity", f"the index at {cfg.db.path} cannot be read ({exc})",
                   f"run `memsync doctor --fix`: it keeps {cfg.db.path} beside a new index built "
                   "from the files", fixable=True, action="rebuild")
