"""The hybrid searcher: the lexical ranking blended with cosine similarity to the query.

It sits beside the lexical searcher behind the same `Searcher` seam (query + filters -> ranked
hits). Filters, validity, --as-of and "superseded ranks last" are the lexical searcher's own
SQL, applied to the dense candidates too. A card that has no vector yet is still found, and
ranked, lexically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from .. import dates, query
from ..model import Hit
from ..search import LexicalSearcher, Query, Result, _filters, clamp_limit, snippet
from . import fusion, store

SEMANTIC = "semantic"  # `matched` of a hit found by meaning alone
ROW_SQL = ("SELECT c.id, c.source, c.path, c.title, c.kind, c.body, c.invalid_at FROM cards c "
           "WHERE c.id IN (SELECT value FROM json_each(?)){where}")


def _strong(matched: str | None) -> bool:
    return (matched or "").startswith("all")


@dataclass(frozen=True)
class Candidates:
    """What one query's fusion works on: the lexical and dense top lists, which lexical hits have
    no vector yet, the spread of the cosines over every card (to tell a card that stands out
    from the vault's bulk), and whether an all* tier matched."""

    lexical: dict[int, float]
    dense: dict[int, float]
    unembedded: frozenset[int] = frozenset()
    mean: float = 0.0
    sd: float = 0.0
    strong: bool = False


class HybridSearcher:
    def __init__(self, index, encoder, lexical: LexicalSearcher | None = None,
                 weight: float = fusion.WEIGHT, depth: int = fusion.DEPTH, method: str = "blend",
                 dense_when: str = fusion.DENSE_WHEN, floor: float | None = fusion.FLOOR):
        self.index, self.encoder = index, encoder
        self.lexical = lexical or LexicalSearcher(index)
        self.weight, self.depth, self.method = weight, depth, method
        # "always"; "weak": lexical alone when an all* tier matched; "rerank": then the dense part
        # only reorders the lexical hits (no card found by meaning alone joins them)
        self.dense_when = dense_when
        # a card found by meaning alone must stand `floor` standard deviations above the mean
        # cosine of all cards (None: no floor)
        self.floor = floor

    def search(self, q: Query) -> Result:
        page = self.lexical.search(q)  # its notes and `more` speak of the page asked for
        if self.wants_dense(page.matched):
            deep = replace(q, limit=self.depth)
            lexical = self.lexical.search(deep, cap=self.depth, snippets=False).hits
            found = self.candidates(q, lexical, page.matched)
            order = self.order(found)
        else:  # lexical's page and order; the dense part is still reported
            lexical = page.hits
            found = self.candidates(q, lexical, page.matched)
            order = sorted(fusion.minmax(found.lexical).items(), key=lambda kv: -kv[1])
        return self._result(q, page, lexical, found.dense, order)

    def wants_dense(self, matched: str | None) -> bool:
        return self.dense_when != "weak" or not _strong(matched)

    def order(self, c: Candidates) -> list[tuple[int, float]]:
        """(card id, fused score), best first. Pure: the bench replays it over stored candidates."""
        if c.strong and self.dense_when == "rerank":
            alone = float("inf")
        else:
            alone = float("-inf") if self.floor is None else c.mean + self.floor * c.sd
        dense = {k: v for k, v in c.dense.items() if k in c.lexical or v >= alone}
        if self.method == "rrf":
            fused = fusion.rrf(c.lexical, dense, weight=self.weight)
        else:
            fused = fusion.blend(c.lexical, dense, self.weight, c.unembedded)
        return sorted(fused.items(), key=lambda kv: -kv[1])

    def _result(self, q: Query, page: Result, lexical: list[Hit], dense: dict[int, float],
                order: list[tuple[int, float]]) -> Result:
        limit = clamp_limit(q.limit)
        by_id = {h.id: h for h in lexical}
        rows = self._rows(q, [i for i, _ in order if i not in by_id])
        day = q.as_of or dates.today()
        ranked = [(i, s, by_id[i].valid if i in by_id else not dates.invalid_by(rows[i]["invalid_at"], day))
                  for i, s in order if i in by_id or i in rows]
        if q.include_invalid and not q.as_of:
            ranked.sort(key=lambda r: not r[2])  # stable: fused order otherwise
        terms = query.plan(q.text).terms
        shown = {h.id: h.snippet for h in page.hits if h.snippet}  # lexical's page made these
        hits = []
        for card_id, score, valid in ranked[:limit]:  # snippets only for the page shown
            if card_id in by_id:
                hit = by_id[card_id]
                made = hit.snippet or shown.get(card_id)
                hits.append(replace(hit, score=score, lexical=hit.score, dense=dense.get(card_id),
                                    snippet=made or snippet(self._body(card_id), terms)))
            else:
                row = rows[card_id]
                hits.append(Hit(
                    id=card_id, path=row["path"], title=row["title"], kind=row["kind"],
                    source=row["source"], score=score, matched=SEMANTIC, coverage=None,
                    snippet=snippet(row["body"], terms), valid=valid, dense=dense[card_id],
                ))
        result = Result(query=q.text, matched=page.matched or (SEMANTIC if hits else None),
                        hits=hits, note=page.note,
                        more=page.more or len(ranked) > limit)  # page: lexical alone knows
        if hits and not lexical:
            result.note = ("no card contains these words; these hits were found by meaning alone "
                           "(matched: semantic): check that they are about what you meant")
        return result

    def _body(self, card_id: int) -> str:
        return self.index.conn.execute("SELECT body FROM cards WHERE id = ?", (card_id,)).fetchone()[0]

    def candidates(self, q: Query, lexical: list[Hit], matched: str | None) -> Candidates:
        """The best `depth` cards passing the filters by cosine to the query (a card by its best
        passage), beside the lexical hits."""
        import numpy as np

        lex = {h.id: h.score for h in lexical}
        ids, matrix = store.load(self.index.conn, self.encoder.model)
        unembedded = frozenset(lex.keys() - set(ids.tolist()))
        if not len(ids):
            return Candidates(lex, {}, unembedded, strong=_strong(matched))
        scores = matrix @ self.encoder.query(q.text)
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        best = np.maximum.reduceat(scores, starts)
        card_ids = ids[starts]
        order = np.argsort(-best)
        out: dict[int, float] = {}
        window, at = self.depth * 4, 0
        while len(out) < self.depth and at < len(order):
            chunk = [int(card_ids[i]) for i in order[at : at + window]]
            keep = self._passing(q, chunk)  # filters, validity, --as-of: the lexical SQL
            out.update({c: float(best[i]) for c, i in zip(chunk, order[at : at + window]) if c in keep})
            at += window
            window *= 4
        dense = dict(list(out.items())[: self.depth])
        return Candidates(lex, dense, unembedded, float(best.mean()), float(best.std()), _strong(matched))

    def _passing(self, q: Query, ids: list[int]) -> set[int]:
        where, args = _filters(q)
        if not where:
            return set(ids)
        sql = f"SELECT c.id FROM cards c WHERE c.id IN (SELECT value FROM json_each(?)){where}"
        return {r[0] for r in self.index.conn.execute(sql, [json.dumps(ids), *args])}

    def _rows(self, q: Query, ids: list[int]) -> dict:
        where, args = _filters(q)
        sql = ROW_SQL.format(where=where)
        return {r["id"]: r for r in self.index.conn.execute(sql, [json.dumps(ids), *args])}
