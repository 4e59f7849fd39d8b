"""`memsync audit`: what keeps the memory from staying clean, reported and never changed.

Read-only: it opens the index, reads cards and their use, and changes no file and no row (a
test checksums the vault and the index before and after). Each section lists what it found;
`memsync consolidate` turns the fixable ones into a plan.
"""

from __future__ import annotations

import posixpath
import sys
import time
from dataclasses import dataclass
from datetime import date, timedelta

from memsync import dates
from memsync.config import Config
from memsync.lifecycle import duplicates
from memsync.store import lifelog
from memsync.store.index import Index

LISTED = 50  # entries shown per section (the counts are whole)
NEVER_OPENED_AFTER = 10  # returned this often and never opened: found but never wanted


@dataclass(slots=True)  # a third of a dict's size: 100,000 of them are held at once
class _Row:
    """What the sections read of a card. The body is not kept: at 100,000 cards the bodies
    alone are hundreds of megabytes; its length and its shingles are taken as the cards stream by."""

    id: int
    source: str
    path: str
    title: str
    kind: str | None
    created: str | None
    updated: str | None
    invalid_at: str | None
    superseded_by: str | None
    summary: str | None
    chars: int


def run(cfg: Config, index: Index, threshold: float | None = None, listed: int = LISTED) -> dict:
    started = time.perf_counter()
    settings = cfg.lifecycle
    today = dates.today()
    writable = {s.name for s in cfg.sources if s.writable}
    use = lifelog.use_all(index)
    rows, valid, packed = [], [], []
    for card in index.cards():
        # a source's name and a kind are a few strings, each read once per card: kept once
        row = _Row(card["id"], sys.intern(card["source"]), card["path"], card["title"],
                   card["kind"] and sys.intern(card["kind"]), card["created"], card["updated"],
                   card["invalid_at"], card["superseded_by"], card["summary"], len(card["body"]))
        rows.append(row)
        if not dates.invalid_by(row.invalid_at, today):
            valid.append(row)
            packed.append(duplicates.grams(card["title"], card["body"]))

    def entry(row: _Row, **extra) -> dict:
        return {"id": row.id, "source": row.source, "path": row.path, "title": row.title, **extra}

    candidates = [
        duplicates.Candidate(
            id=r.id, source=r.source, path=r.path, title=r.title, body="",
            updated=r.updated or r.created, writable=r.source in writable,
            opened=use.get(r.id, lifelog.EMPTY_USE)["opened"],
            helpful=use.get(r.id, lifelog.EMPTY_USE)["helpful"], chars=r.chars)
        for r in valid
    ]
    groups = duplicates.find(candidates, threshold or settings.duplicate_threshold, packed)
    del candidates, packed  # the shingles go before the other sections list every card

    long_cards = [entry(r, chars=r.chars) for r in valid
                  if r.chars > settings.summary_threshold and not r.summary]
    long_cards.sort(key=lambda e: -e["chars"])

    since = (date.fromisoformat(today) - timedelta(days=settings.stale_days)).isoformat()
    log_since = lifelog.started(index) if settings.log_searches else None
    # Not returned "in stale_days days" is only known once the log has watched that long: a log
    # begun last week (or turned off) would list every older card as never wanted.
    watched = dates.day_of(log_since) is not None and (dates.day_of(log_since) or "") <= since
    stale = []
    for r in valid if watched else ():
        u = use.get(r.id, lifelog.EMPTY_USE)
        last = u["last_returned"]
        born = dates.day_of(r.created) or ""
        if (last and last[:10] < since) or (not last and born and born < since):
            stale.append(entry(r, last_returned=last, created=r.created))
    unopened = [entry(r, **_counts(use[r.id])) for r in valid if r.id in use
                and use[r.id]["returned"] >= NEVER_OPENED_AFTER and use[r.id]["opened"] == 0]
    unhelpful = [entry(r, **_counts(use[r.id])) for r in valid if r.id in use
                 and use[r.id]["unhelpful"] > use[r.id]["helpful"]]
    unhelpful.sort(key=lambda e: -e["unhelpful"])

    misfiled = []
    rules = dict(settings.folder_rules)
    for r in valid:
        folder = rules.get(r.kind or "")
        if folder and r.source in writable and not r.path.startswith(folder + "/"):
            misfiled.append(entry(r, kind=r.kind, folder=folder, chars=r.chars,
                                  to=posixpath.join(folder, posixpath.basename(r.path))))

    from memsync.write import pairs  # the supersede-pointer check doctor runs too

    loose = [{"message": p.message, "fix": p.fix} for p in pairs.problems(index)]
    expired = [entry(r, invalid_at=r.invalid_at) for r in rows
               if r.invalid_at and not r.superseded_by and dates.starts_with_day(r.invalid_at)
               and dates.invalid_by(r.invalid_at, today)]

    sections = {
        "duplicates": groups,
        "long_without_summary": long_cards,
        "not_returned": stale,
        "returned_never_opened": unopened,
        "unhelpful": unhelpful,
        "misfiled": misfiled,
        "loose_chains": loose,
        "expired": expired,
    }
    return {
        "cards": len(rows),
        "valid": len(valid),
        "threshold": threshold or settings.duplicate_threshold,
        "stale_days": settings.stale_days,
        "logging": settings.log_searches,
        "log_since": log_since,  # None: nothing logged yet, or the log is off
        "not_returned_known": watched,  # False: `not_returned` is empty for want of a long enough log
        "counts": {name: len(items) for name, items in sections.items()},
        **{name: items[:listed] for name, items in sections.items()},
        "seconds": round(time.perf_counter() - started, 3),
    }


def _counts(u: dict) -> dict:
    return {k: u[k] for k in ("returned", "opened", "helpful", "unhelpful")}


def summary(report: dict) -> dict:
    """The short form agents get from memory_stats: counts, and the biggest duplicate groups."""
    return {
        "counts": {k: v for k, v in report["counts"].items() if v},
        "duplicates": [[c["id"] for c in g["cards"]] for g in report["duplicates"][:5]],
        "fix": "run `memsync consolidate` to see the plan (it changes nothing until --apply)",
    }


def audit(cfg: Config, threshold: float | None = None) -> dict:
    """`memsync audit`: open the index read as it is and report."""
    from memsync.lifecycle.opening import index_of, never_filled

    with index_of(cfg) as index:
        report = run(cfg, index, threshold)
        unfilled = None if report["cards"] else never_filled(cfg, index)
    if unfilled:
        report["notes"] = [unfilled]
    return report

