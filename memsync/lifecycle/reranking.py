"""Where the capped prior (memsync.lifecycle.prior) meets a search result: the page's hits,
their use, and the class each is in (its tier, and whether its title holds every query term)."""

from __future__ import annotations

from memsync import cjk
from memsync.lifecycle import prior
from memsync.search.query import plan
from memsync.store import lifelog
from memsync.store.index import Index


def title_class(query: str):
    terms = plan(query).terms

    def klass(hit: dict) -> tuple[str, bool]:
        title = cjk.normalize(hit["title"])
        return hit["matched"], all(term in title for term in terms)

    return klass


def apply(index: Index, query: str, hits: list[dict]) -> list[dict]:
    if not hits:
        return hits
    used = lifelog.uses(index, [h["id"] for h in hits])
    if not used:
        return hits
    return prior.reorder(hits, lambda h: h["score"], title_class(query), lambda h: used.get(h["id"]))


def explain_use(index: Index, card_ids: list[int], enabled: bool) -> dict[int, dict]:
    """What `--explain` shows of use per hit: the counts, and the prior's boost (0 when
    config.json leaves use_prior off). For the searcher's explain to merge in."""
    used = lifelog.uses(index, card_ids)
    return {i: {**{k: v for k, v in used.get(i, lifelog.EMPTY_USE).items()},
                "boost": round(prior.boost(used.get(i)), 4) if enabled else 0.0}
            for i in card_ids}
