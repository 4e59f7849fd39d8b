"""The session brief (DESIGN §13): what an agent should know when it starts work in a project.

The wing's door is `make`: it reads the index (memsync.store.brief), picks and fits the cards
(select, pure), renders them (render, pure) and moves this agent's last-brief mark (state).
The CLI's `memsync brief`, the MCP resource and prompt, and the session-start hooks all call it.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

from memsync.brief import project as project_mod
from memsync.brief import render, state
from memsync.brief.select import CANDIDATES, is_file, last_change, priority_rank, ranked, select
from memsync.config import Config
from memsync.errors import BadArgument, BadEnvironment
from memsync.store import brief as store
from memsync.store.connection import DB_ERRORS
from memsync.store.index import Index

DEFAULT_BUDGET = 1200
MIN_BUDGET = 200  # the fixed lines take about 110 tokens
# Rows read for the sections that can hold most of the index (every card read once, a bulk
# import since the last brief): past them a section says "N of M+".
ROWS = {"changed": 4 * CANDIDATES["changed"], "used": 4 * CANDIDATES["used"]}


def make(cfg: Config, directory: str | Path | None = None, *, name: str | None = None,
         budget: int = DEFAULT_BUDGET, agent: str = "cli", record: bool = True,
         now: dt.datetime | None = None, user_home: Path | None = None) -> dict:
    """The brief for the project at `directory` (default: the current one), or for a project
    known by `name` only. Returns the `--json` object; its "text" is the Markdown."""
    if budget < MIN_BUDGET:
        raise BadArgument(f"--budget {budget} is too small: the brief's fixed lines need about "
                          f"{MIN_BUDGET} tokens; give {MIN_BUDGET} or more")
    if not cfg.db.path.exists():
        raise BadEnvironment(cfg.no_index())
    project = project_mod.named(name) if name else project_mod.find(directory or Path.cwd())
    user_home = user_home or Path.home()
    now = (now or dt.datetime.now()).astimezone().replace(microsecond=0)
    mark = state.key(agent, project.root, project.name)
    since_iso = state.last(cfg.home.path, mark)
    since = _timestamp(since_iso)
    since_text = _local(since_iso) if since is not None else None
    scope = project_mod.scope(project, list(cfg.sources), user_home)
    today = now.date().isoformat()
    index = Index(cfg.db.path)
    try:
        found = _read(store.connection(index), scope, today, since_iso)
    except DB_ERRORS as exc:
        raise BadEnvironment(f"cannot read the index at {cfg.db.path} ({exc}); `memsync doctor` "
                             "says what is wrong") from None
    finally:
        index.close()
    # a changed file's item may hold back each card it would name (store.NAMED), not one
    most_held_back = sum(CANDIDATES.values()) + (store.NAMED - 1) * CANDIDATES["changed"]
    room = budget - render.fixed_cost(project, most_held_back)
    capped = frozenset(key for key in ROWS if len(found[key]) >= ROWS[key])
    others = found["others"]
    selection = select(found["project"], found["changed"], found["used"], found["texts"],
                       found["helpful"], since, lambda source, path: others.get((source, path)),
                       room, since_text, capped)
    text = render.markdown(project, selection, since_text)
    if record:
        try:
            state.record(cfg.home.path, mark, now.isoformat())
        except OSError as exc:  # the brief stands; only its next one cannot say what changed since
            print(f"memsync: could not note this brief's time in {cfg.home.path / state.FILE_NAME} "
                  f"({exc}); the next brief will not list what changed since this one. "
                  "Check that the data home is writable (`memsync doctor`).", file=sys.stderr)
    return render.as_dict(project, selection, since_iso, budget, text)


def _days_before(iso: str) -> str:
    """Two days before an ISO time's own day: cards are stamped in the zone of whoever wrote
    them, up to 26 hours from another zone (+14 to -12), so their day may be two days earlier
    than the mark's for a later moment (select.change_note compares the instants)."""
    try:
        return (dt.date.fromisoformat(iso[:10]) - dt.timedelta(days=2)).isoformat()
    except ValueError:
        return ""


def _read(conn, scope: store.Scope, today: str, since_iso: str | None) -> dict:
    """Everything a brief reads from the index, in one open connection."""
    project_rows = store.project_cards(conn, scope, today)
    changed_rows = _changed(conn, since_iso) if since_iso else []
    by_rank: dict[int, list[str]] = {}
    for value in store.priorities(conn):  # low, P3 and values it does not know count as none
        if priority_rank(value):
            by_rank.setdefault(priority_rank(value), []).append(value)
    used_rows = store.used_cards(conn, today, ROWS["used"], by_rank)
    ids = [r["id"] for rows in (project_rows, changed_rows, used_rows) for r in rows]
    helpful = store.feedback(conn, ids)
    # bodies of the cards a brief may show: the project's first few by rank, and the rest
    shortlist = _shortlist(project_rows, helpful) + [r["id"] for r in changed_rows + used_rows
                                                     if not is_file(r)]
    pairs = [(r["source"], p) for r in changed_rows for p in (r["superseded_by"], r["supersedes"]) if p]
    return {"project": project_rows, "changed": changed_rows, "used": used_rows, "helpful": helpful,
            "texts": store.texts(conn, shortlist), "others": store.titles_by_path(conn, pairs)}


def _changed(conn, since_iso: str) -> list:
    """The cards that may have changed since the mark, the latest change first: by their dates,
    and (cards without an `updated` date, most of the other sources') by their file's time; and
    by that time too the files of several cards (a memory graph), each told as one row."""
    since = _timestamp(since_iso)
    if since is None:
        return []
    rows = store.changed_cards(conn, _days_before(since_iso), int(since), ROWS["changed"])
    seen = {r["id"] for r in rows}
    rows += [r for r in store.changed_files(conn, int(since) * 10**9, ROWS["changed"]) if r["id"] not in seen]
    rows += store.changed_files_of_many(conn, int(since) * 10**9, ROWS["changed"])
    rows.sort(key=lambda r: r["id"])
    rows.sort(key=last_change, reverse=True)
    return rows[:ROWS["changed"]]


def _shortlist(rows, helpful) -> list[int]:
    return [r["id"] for r in ranked(rows, helpful, newest=True)[:CANDIDATES["project"]]]


def _timestamp(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return dt.datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


def _local(iso: str | None) -> str | None:
    if not iso:
        return None
    return dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
