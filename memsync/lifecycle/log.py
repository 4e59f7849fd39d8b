"""The retrieval log (DESIGN §12): every search written down in the data home, so that which
cards help can be told from which are merely found. Kept across rebuilds, capped, private (it
lives in the index file, 0600), a flagged secret in a query redacted, off with
`"log_searches": false`. Writing an entry never fails a search (memsync.store.lifelog)."""

from __future__ import annotations

from memsync import dates
from memsync.config import Config
from memsync.lifecycle.redact import kept_query, redacted
from memsync.search.lexical import Query
from memsync.store import lifelog
from memsync.store.index import Index


def filters_of(q: Query, semantic: bool) -> dict:
    """The filters and options a search ran with, only those that were set. A filter is free
    text as much as the query is (a token pasted as `--tag` is still a token), so it is kept
    redacted the same way."""
    given = {"kind": q.kind, "source": q.source, "tag": q.tag, "as_of": q.as_of,
             "include_invalid": q.include_invalid or None, "limit": q.limit,
             "semantic": semantic or None}
    return {k: redacted(v) if isinstance(v, str) else v for k, v in given.items() if v is not None}


def record(cfg: Config, index: Index, q: Query, result: dict, semantic: bool = False,
           client: str | None = None) -> bool:
    """Write one search down (unless config.json turns the log off); False when it was not."""
    settings = cfg.lifecycle
    if not settings.log_searches:
        return False
    tiers = sorted({h["matched"] for h in result["hits"]}, key=_tier_order)
    return lifelog.record_search(
        index, dates.now_iso(), kept_query(q.text), filters_of(q, semantic),
        ",".join(tiers) or result.get("matched"),
        [(h["id"], h["score"]) for h in result["hits"]], client, settings.log_cap)


_TIERS = ("all", "all-prefix", "any", "any-prefix", "any-common", "semantic")


def _tier_order(tier: str) -> int:
    return _TIERS.index(tier) if tier in _TIERS else len(_TIERS)


def read(cfg: Config, limit: int = 20, query: str | None = None,
         card_id: int | None = None) -> dict:
    """`memsync log`: the newest entries first, and how many the log holds."""
    from memsync.lifecycle.opening import index_of

    with index_of(cfg) as index:
        found = {"entries": lifelog.entries(index, max(1, limit), query, card_id),
                 "total": lifelog.count(index), "logging": cfg.lifecycle.log_searches}
        if card_id is not None and not found["entries"] and not index.id_given(card_id):
            found["unknown_card"] = True  # a mistyped id, not a card no search returned
        return found
