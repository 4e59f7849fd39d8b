"""The library calls behind every CLI command and MCP tool: one function per operation.

Each takes a Config, opens what it needs, and returns the plain dict that `--json` prints and the
MCP tools return. Nothing here formats for humans or knows about click or the MCP SDK.
Listing, adding and removing sources live beside them in memsync.sources.

Only the edges (memsync.cli, memsync.mcp, memsync.doctor) import this module; what the engine
needs to open the index or index files is in memsync.session, below it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from memsync.search.lexical import LexicalSearcher, Query, refuse_blank_filters
from memsync.session import indexer, open_index
from memsync.store.connection import DB_ERRORS, as_error
from memsync.store.index import Index

from . import dates, paging
from .config import Config
from .errors import BadEnvironment

__all__ = ["indexer", "open_index"]  # the edges open the index through api too (memsync.session)


def search(cfg: Config, q: Query, semantic: bool | None = None, client: str | None = None,
           explain: bool = False) -> dict:
    """`semantic` None follows config.json: where the extra is missing, that falls back to the
    keyword search with a warning. Asking for it outright without the extra is an error that
    says how to install it (before anything is read). Every search is written to the retrieval
    log (memsync.lifecycle.log), with the MCP `client` that asked when it says."""
    refuse_blank_filters(q)  # before a model loads or the index opens
    warnings: list[str] = []
    asked = semantic  # None: as config.json says
    if semantic is None and cfg.semantic:
        from .semantic import available, install_hint

        if not available():
            semantic = False
            warnings.append(f"{cfg.config_file} turns semantic search on, but memsync[semantic] "
                            f"is not installed: searched by keywords only; {install_hint()}")
    semantic = cfg.semantic if semantic is None else semantic
    if semantic:
        from .semantic import require

        require()
    with open_index(cfg) as index:
        if q.source:
            cfg.source(q.source)
        if semantic and asked is None:  # config.json's: a model that cannot load is a warning
            semantic = _semantic_or_words(cfg, warnings)
        result = searcher(index, semantic).search(q).to_dict(explain)
        from .lifecycle.opening import never_filled

        unfilled = None if result["hits"] else never_filled(cfg, index)
        if unfilled:  # says why better than "no match"
            result["notes"] = [unfilled]
        if cfg.lifecycle.use_prior:  # off unless config.json says "use_prior": true
            from .lifecycle import reranking

            result["hits"] = reranking.apply(index, q.text, result["hits"])
        if explain and result["hits"]:  # each hit's use and what the prior made of it
            from .lifecycle import reranking

            use = reranking.explain_use(index, [h["id"] for h in result["hits"]], cfg.lifecycle.use_prior)
            for hit in result["hits"]:
                hit.setdefault("explain", {})["use"] = use[hit["id"]]
        from .lifecycle import log

        log.record(cfg, index, q, result, bool(semantic), client)
        if not unfilled:  # stale hits need a word; an index never filled has its note
            warnings += staleness(cfg, [index.meta("last_sync"), index.meta("last_change")])
        warnings += unfinished(cfg, index.unfinished_since())
    if warnings:
        result["warnings"] = warnings
    return result


STALE_AFTER = 60  # seconds without a watcher before search says how old the index is


def staleness(cfg: Config, updates: list[str | None], now: float | None = None) -> list[str]:
    """Why the hits may not match the files: the vault folder is gone (an unmounted disk, a
    cloud folder not synced yet), or no watcher keeps the index live and it is not fresh."""
    import time

    said = []
    if not cfg.vault.path.is_dir():
        said.append(f"the vault folder {cfg.vault.path} is gone (an unmounted disk? a cloud "
                    "folder not synced yet?): the index is stale, these hits are from when it "
                    "was last seen")
    times = []
    for stamp in filter(None, updates):  # the last catch-up and the last change, whichever is later
        with suppress(ValueError):
            times.append(dates.stamp_seconds(stamp))
    if not times:
        return said
    age = (time.time() if now is None else now) - max(times)
    if age < STALE_AFTER:
        return said
    from memsync.watch import lock  # only for an old index

    if not lock.watching(cfg)["live"]:
        said.append(f"no watcher running; index last updated {_ago(age)} ago (`memsync watch` "
                    "keeps it live; `memsync index` catches it up)")
    return said


def unfinished(cfg: Config, since: str | None) -> list[str]:
    """A first index that stopped before its end (killed, say): the index holds only some of
    the files, which nothing else would tell."""
    if since is None:
        return []
    from memsync.watch import lock  # only for such an index

    doing = " (a watcher is running: it may be doing that now)" if lock.watching(cfg)["live"] else ""
    return [f"the first index, begun {since}, stopped before its end: only some of the files are "
            f"in the index; run `memsync index` to finish it{doing}"]


def _ago(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h" if hours < 48 else f"{hours // 24} days"


def _semantic_or_words(cfg: Config, warnings: list[str]) -> bool:
    """Whether the model loads (it is loaded once per process); if not, say why in a warning,
    as for an extra that is missing: a search asked for by config.json goes by words."""
    from .semantic import SemanticUnavailable
    from .semantic.encoder import shared

    try:
        shared()
    except SemanticUnavailable as exc:
        warnings.append(f"{cfg.config_file} turns semantic search on, but {exc.message}: searched "
                        "by keywords only")
        return False
    return True


def searcher(index: Index, semantic: bool = False):
    if not semantic:
        return LexicalSearcher(index)
    from .semantic.encoder import shared  # numpy and the model load only here
    from .semantic.hybrid import HybridSearcher

    return HybridSearcher(index, shared())


def show(cfg: Config, card_id: int, offset: int = 0, max_chars: int | None = None,
         full: bool = False, voice=lambda text: text) -> dict:
    """One card's text, with a first line saying when it stopped (or stops) being valid;
    `voice` rewords that line's advice for whoever reads it (the MCP server's model)."""
    with open_index(cfg) as index:
        row = index.card(card_id)
        text = row["body"]
        valid = not dates.invalid_by(row["invalid_at"], dates.today())
        if row["invalid_at"]:
            text = voice(invalid_banner(index, row, valid)) + "\n\n" + text
        page = paging.window(text, offset, max_chars, full)
        from memsync.store import lifelog

        with index.transaction():
            index.record_read(card_id, dates.now_iso())
            lifelog.mark_opened(index, card_id)
        use = lifelog.use(index, card_id)
        return {
            "id": row["id"],
            "path": row["path"],
            "source": row["source"],
            "title": row["title"],
            "kind": row["kind"],
            "tags": index.tags(card_id),  # inline #tags too: what tag= finds it by
            "created": row["created"],
            "updated": row["updated"],
            "valid": valid,
            "invalid_at": row["invalid_at"],
            "superseded_by": row["superseded_by"],
            "supersedes": row["supersedes"],
            "summary": row["summary"],
            "use": use,
            **page,
        }


def invalid_banner(index: Index, row, valid: bool) -> str:
    invalid_at = row["invalid_at"]
    if not dates.starts_with_day(invalid_at):
        return (f"⚠ This card is marked invalid_at: {invalid_at}, which is not a date, so it "
                "counts as no longer valid; write the day as YYYY-MM-DD in the file to fix it")
    day = dates.first_day(invalid_at)  # in this zone: a time written in another may fall a day earlier
    if valid:
        return f"⚠ This card stops being valid on {day}"
    line = f"⚠ This card stopped being valid on {invalid_at}"
    if row["superseded_by"]:
        newer = index.card_by_path(row["source"], row["superseded_by"])
        ref = f"{row['superseded_by']}" + (f" (id {newer['id']})" if newer else "")
        line += f"; it was superseded by {ref}"
    before = dates.day_before(day)
    created = dates.first_day(row["created"]) if row["created"] else None
    if created and before < created:  # valid for less than a day: no --as-of view holds it
        return line + ". It was valid only on the day it was written: search with --include-invalid to list it"
    return line + f". To see what was true then, search with --as-of {before}"


def _size(path: Path) -> int:
    """The bytes of the file at `path`; 0 when there is none (a WAL a checkpoint just removed)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def stats(cfg: Config) -> dict:
    # loaded here, not at the top: a `memsync search` process needs none of them
    from memsync import private
    from memsync.store import tally
    from memsync.watch import lock
    from memsync.write import trashsize

    with open_index(cfg) as index:
        counted = tally.tally(index, dates.today())
        last_change = index.meta("last_change")
        problems = index.problems()
        semantic = _semantic_status(index, cfg.semantic)
        since = index.unfinished_since()
    vault = cfg.vault.path
    trash = trashsize.usage(vault) if vault.exists() else trashsize.Usage(0, 0, ())
    index_bytes = sum(map(_size, private.sqlite_files(cfg.db.path)))
    result = {
        "cards": counted.cards,
        "valid": counted.valid,
        "invalid": counted.cards - counted.valid,
        "by_kind": counted.by_kind,
        "by_source": counted.by_source,
        "last_change": last_change,
        "problems": problems,
        "config_problems": [*cfg.folder_problems(), *cfg.key_problems(), *vault_warnings(cfg)],
        "reads": counted.reads,
        # the folders it could not count, only when there are any (the MCP tool's bytes)
        "trash": {"files": trash.files, "bytes": trash.bytes,
                  **({"unreadable_folders": list(trash.hidden)} if trash.hidden else {})},
        "index": {"path": str(cfg.db.path), "bytes": index_bytes},
        "watcher": lock.watching(cfg),
    }
    if semantic:
        result["semantic"] = semantic
    if since:
        result["unfinished"] = unfinished(cfg, since)[0]
    reminder = trashsize.reminder(vault) if vault.exists() else None
    if reminder:
        result["reminder"] = reminder
    return result


def _semantic_status(index: Index, enabled: bool) -> dict | None:
    from .semantic import status

    return status.status(index, enabled) if status.shown(index, enabled) else None


def embed(cfg: Config, progress=None, threads: int | None = None) -> dict:
    """Embed, in the foreground, every card that lacks a vector for its current content, on
    `threads` cores (None: config.json's "threads", else every usable core): someone waits."""
    from .semantic import EMBED_INSTEAD, require

    require(EMBED_INSTEAD)
    from .semantic.worker import embed_foreground

    with open_index(cfg) as index:
        return embed_foreground(index, threads or cfg.threads, progress=progress)


def reindex(cfg: Config, rebuild: bool = False, progress=None, threads: int | None = None,
            allow_mass_removal: bool = False,
            waiting: Callable[[int | None], None] | None = None) -> dict:
    """`threads`: worker processes reading the files (None: config.json's, else every core).
    `rebuild` also replaces a damaged index file (memsync.store.salvage): the report's
    "recovered" says what was kept and what was lost. Reindexes of one index run one at a time,
    across processes too (memsync.reindexlock): a later one finds what an earlier one wrote
    (six MCP calls at once after 3,000 edits each read and wrote 2,637 files). `waiting` is
    told, once, when this one waits for another process's, with its pid where known; `progress`
    is told (0, 0) once the turn is this one's, then (done, total) as files are written."""
    from .reindexlock import turn

    problem = cfg.vault_problem()
    if problem:  # before the turn's lock file and the index are made for a vault not there
        raise BadEnvironment(problem)
    with turn(cfg.db.path, waiting):
        if progress is not None:
            progress(0, 0)  # begun: a progress bar's rate counts from here, not from the wait
        return _reindex(cfg, rebuild, progress, threads, allow_mass_removal)


def _reindex(cfg: Config, rebuild: bool, progress, threads: int | None,
             allow_mass_removal: bool) -> dict:
    from memsync.watch import lock

    from .sources import drop_unconfigured

    recovered = None
    if rebuild:
        from memsync.store import salvage

        try:
            recovered = salvage.recover(cfg.db.path, before_set_aside=lambda: _not_watched_elsewhere(cfg))
        except DB_ERRORS as exc:  # busy or unreadable, not damaged: nothing was touched
            raise as_error(exc, cfg.db.path) from None
    with open_index(cfg) as index:
        if not lock.watching(cfg).get("live"):
            # No watcher runs, so none of an older memsync is left to write: schema 18's triggers
            # for one go before the load, which they would slow (Index.end_upgrade_window).
            index.end_upgrade_window()
        work = indexer(cfg, index)
        if threads:
            work.workers = threads
        work.allow_mass_removal = allow_mass_removal
        report = work.rebuild(progress) if rebuild else work.reconcile(progress=progress)
        # A source removed from config.json while a watcher still read it: its cards go too.
        report.merge(drop_unconfigured(cfg, index))
        result = report.to_dict()
    if recovered:
        result["recovered"] = recovered
    return result


def _not_watched_elsewhere(cfg: Config) -> None:
    """A damaged index is replaced in steps (salvage.recover): its ids and read counts read, a
    new file built beside it with them, the damaged one set aside and the new one moved in. A
    watcher in another process knows nothing of those steps: what it writes to the damaged file
    through the connection it holds after the last reading of the ids is lost (the reading is
    done again while they change, but its connection outlives the setting aside). The watcher
    inside this process (`memsync mcp`) is let through: its server's `memory_reindex` is how an
    agent repairs the index, and it finds the new file holding the saved ids from the first."""
    from memsync.watch import lock

    holder = lock.watching(cfg)
    if holder.get("live") and holder.get("pid") != os.getpid():
        raise BadEnvironment(
            f"the index at {cfg.db.path} is damaged and a watcher (pid {holder.get('pid')}) is "
            "writing to it, which would give cards new ids while the repair moves the saved ones "
            "into a new file: stop the watcher (Ctrl-C where it runs, or `memsync service "
            "uninstall`), then run this again")


def check_removal(cfg: Config) -> None:
    """What `memsync watch` asks before it starts: would catching up remove most of a source?
    (MassRemoval if so; a watcher started anyway would keep those cards, saying why in its log.)"""
    with open_index(cfg) as index:
        work = indexer(cfg, index)
        for source in cfg.sources:
            if os.path.isdir(source.root):
                work.guard_source(source.name)


def vault_warnings(cfg: Config) -> list[str]:
    """An empty vault served while another vault of this home has cards (memsync.store.vaults)."""
    from memsync.store.vaults import empty_vault_warning

    warning = empty_vault_warning(cfg)
    return [warning] if warning else []


def paths(cfg: Config) -> dict:
    return {
        "home": {"path": str(cfg.home.path), "from": cfg.home.origin},
        "db": {"path": str(cfg.db.path), "from": cfg.db.origin},
        "vault": {"path": str(cfg.vault.path), "from": cfg.vault.origin},
        "config": {"path": str(cfg.config_file), "exists": cfg.config_file.exists()},
        "set_up": not cfg.not_set_up(),
        "sources": [
            {"name": s.name, "adapter": s.adapter, "path": s.root, "writable": s.writable}
            for s in cfg.sources
        ],
        "problems": [*cfg.folder_problems(), *cfg.key_problems()],
    }


def require_index(cfg: Config) -> None:
    if not cfg.db.path.exists():
        warnings = vault_warnings(cfg)
        if warnings and cfg.vault_problem():  # it says the vault is not there, and where cards are
            raise BadEnvironment(f"no index at {cfg.db.path}: {warnings[0]}")
        hint = "".join(f"; note: {warning}" for warning in warnings)
        raise BadEnvironment(cfg.no_index() + hint)
