"""The hybrid searcher: the lexical ranking blended with cosine similarity to the query.

It sits beside the lexical searcher behind the same `Searcher` seam (query + filters -> ranked
hits). Filters, validity, --as-of and "superseded ranks last" are the lexical searcher's own
SQL, applied to the dense candidates too. A card that has no vector yet is still found, and
ranked, lexically.
"""

from __future__ import annotations

from dataclasses import replace

from .. import dates, query
from ..model import Hit
from ..search import LexicalSearcher, Query, Result, _filters, clamp_limit, snippet
from . import fusion, store

SEMANTIC = "semantic"  # `matched` of a hit found by meaning alone
ROW_SQL = ("SELECT c.id, c.source, c.path, c.title, c.kind, c.body, c.invalid_at FROM cards c "
           "WHERE c.id IN (SELECT value FROM json_each(?)){where}")


def _strong(matched: str | None) -> bool:
    return (matched or "").startswith("all")


class HybridSearcher:
    def __init__(self, index, encoder, lexical: LexicalSearcher | None = None,
                 weight: float = fusion.WEIGHT, depth: int = fusion.DEPTH, method: str = "blend",
                 dense_when: str = "always", floor: float = fusion.FLOOR):
        self.index, self.encoder = index, encoder
        self.lexical = lexical or LexicalSearcher(index)
        self.weight, self.depth, self.method = weight, depth, method
        # "always"; "weak": lexical alone when an all* tier matched; "rerank": then the dense part
        # only reorders the lexical hits (no card found by meaning alone joins them)
        self.dense_when = dense_when
        self.floor = floor  # a card found by meaning alone needs at least this cosine

    def search(self, q: Query) -> Result:
        page = self.lexical.search(q)  # its notes and `more` speak of the page asked for
        if not self.wants_dense(page.matched):
            return page
        lexical = self.lexical.search(replace(q, limit=self.depth), cap=self.depth).hits
        dense, unembedded = self._dense(q, {h.id for h in lexical})
        order = self.order({h.id: h.score for h in lexical}, dense, unembedded, _strong(page.matched))
        return self._result(q, page, lexical, dense, order)

    def wants_dense(self, matched: str | None) -> bool:
        return self.dense_when != "weak" or not _strong(matched)

    def order(self, lexical: dict[int, float], dense: dict[int, float],
              unembedded: frozenset[int] = frozenset(), strong: bool = False) -> list[tuple[int, float]]:
        """(card id, fused score), best first. Pure: the bench replays it over stored candidates.
        `strong`: an all* tier matched."""
        alone = self.floor if not (strong and self.dense_when == "rerank") else float("inf")
        dense = {k: v for k, v in dense.items() if k in lexical or v >= alone}
        if self.method == "rrf":
            fused = fusion.rrf(lexical, dense, weight=self.weight)
        else:
            fused = fusion.blend(lexical, dense, self.weight, unembedded)
        return sorted(fused.items(), key=lambda kv: -kv[1])

    def _result(self, q: Query, page: Result, lexical: list[Hit], dense: dict[int, float],
                order: list[tuple[int, float]]) -> Result:
        limit = clamp_limit(q.limit)
        by_id = {h.id: h for h in lexical}
        rows = self._rows(q, [i for i, _ in order if i not in by_id])
        day = q.as_of or dates.today()
        terms = query.plan(q.text).terms
        hits = []
        for card_id, score in order:
            if card_id in by_id:
                hits.append(replace(by_id[card_id], score=score, lexical=by_id[card_id].score,
                                    dense=dense.get(card_id)))
            elif card_id in rows:
                row = rows[card_id]
                hits.append(Hit(
                    id=card_id, path=row["path"], title=row["title"], kind=row["kind"],
                    source=row["source"], score=score, matched=SEMANTIC, coverage=None,
                    snippet=snippet(row["body"], terms),
                    valid=not dates.invalid_by(row["invalid_at"], day), dense=dense[card_id],
                ))
        valid_first = q.include_invalid and not q.as_of
        hits.sort(key=lambda h: valid_first and not h.valid)  # stable: fused order otherwise
        result = Result(query=q.text, matched=page.matched or (SEMANTIC if hits else None),
                        hits=hits[:limit], note=page.note, more=len(hits) > limit)
        if hits and not lexical:
            result.note = ("no card contains these words; these hits were found by meaning alone "
                           "(matched: semantic): check that they are about what you meant")
        return result

    def _dense(self, q: Query, lexical_ids: set[int]) -> tuple[dict[int, float], frozenset[int]]:
        """The best `depth` cards passing the filters by cosine to the query (a card by its best
        passage), and which of the lexical hits have no current vector."""
        import numpy as np

        ids, matrix = store.load(self.index.conn, self.encoder.model)
        unembedded = frozenset(lexical_ids - set(ids.tolist()))
        if not len(ids):
            return {}, unembedded
        scores = matrix @ self.encoder.query(q.text)
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        best = np.maximum.reduceat(scores, starts)
        card_ids = ids[starts]
        order = np.argsort(-best)
        where, args = _filters(q)
        if not where:  # nothing to filter: the top of the list is the answer
            top = order[: self.depth]
            return {int(card_ids[i]): float(best[i]) for i in top}, unembedded
        out: dict[int, float] = {}
        window = self.depth * 4
        at = 0
        while len(out) < self.depth and at < len(order):
            chunk = order[at : at + window]
            keep = set(self._passing(q, [int(card_ids[i]) for i in chunk]))
            out.update({int(card_ids[i]): float(best[i]) for i in chunk if int(card_ids[i]) in keep})
            at += window
            window *= 4
        return dict(list(out.items())[: self.depth]), unembedded

    def _passing(self, q: Query, ids: list[int]) -> list[int]:
        return list(self._rows(q, ids))

    def _rows(self, q: Query, ids: list[int]) -> dict:
        import json

        where, args = _filters(q)
        sql = ROW_SQL.format(where=where)
        return {r["id"]: r for r in self.index.conn.execute(sql, [json.dumps(ids), *args])}
