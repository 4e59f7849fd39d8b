"""Helpful / unhelpful: what a reader says a card did for it (DESIGN §12). Per card, beside the
read counts: times returned, opened, helpful, unhelpful, last returned."""

from __future__ import annotations

from memsync import dates
from memsync.config import Config
from memsync.errors import BadArgument
from memsync.lifecycle.redact import kept_query
from memsync.store import lifelog
from memsync.store.index import Index

VERDICTS = ("helpful", "unhelpful")


def give_cfg(cfg: Config, card_id: int, verdict: str, query: str | None = None) -> dict:
    """`memsync feedback`, memory_get's feedback argument."""
    from memsync.lifecycle.opening import index_of

    with index_of(cfg) as index:
        return give(index, card_id, verdict, query, cfg.lifecycle.log_cap)


def give(index: Index, card_id: int, verdict: str, query: str | None, cap: int) -> dict:
    """Record a verdict on an indexed card; the query it answered defaults to the latest logged
    search that returned it. A query given here is kept redacted and cut, as a logged one is. The
    verdicts themselves are capped as the log is (`log_cap`, the oldest go first); the card's
    helpful / unhelpful counts keep every one."""
    if verdict not in VERDICTS:
        raise BadArgument(f"feedback is 'helpful' or 'unhelpful', not {verdict!r}")
    row = index.card(card_id)  # NotFound for an id that is not indexed
    query = kept_query(query) if query else lifelog.last_query_for(index, card_id)
    lifelog.record_feedback(index, card_id, verdict == "helpful", query, dates.now_iso(), cap)
    return {"status": "recorded", "id": card_id, "path": row["path"], "feedback": verdict,
            "query": query, "use": lifelog.use(index, card_id)}


def use(index: Index, card_id: int) -> dict:
    return lifelog.use(index, card_id)
