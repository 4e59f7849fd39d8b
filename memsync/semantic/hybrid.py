"""The hybrid searcher: the lexical ranking blended with cosine similarity to the query.

It sits beside the lexical searcher behind the same `Searcher` seam (query + filters -> ranked
hits). Filters, validity, --as-of and "superseded ranks last" are the lexical searcher's own
SQL, applied to the dense candidates too. A card that has no vector yet is still found, and
ranked, lexically.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from memsync import dates
from memsync.search import codes
from memsync.search.codes import Note
from memsync.search.lexical import (
    MAX_LIMIT,
    LexicalSearcher,
    Query,
    Result,
    clamp_limit,
    filters,
)
from memsync.search.snippets import shown_text, shown_title
from memsync.store import searchsql as sql

from ..model import Hit
from . import fusion, store

SEMANTIC = "semantic"  # `matched` of a hit found by meaning alone


def _strong(matched: str | None) -> bool:
    return (matched or "").startswith("all")


@dataclass(frozen=True)
class Candidates:
    """What one query's fusion works on: the lexical top list; the dense top list, as cosines (what
    a hit reports) and as standings (what the fusion and the floor read: fusion.standing); which
    lexical hits have no vector yet; and whether an all* tier matched."""

    lexical: dict[int, float]
    dense: dict[int, float]
    unembedded: frozenset[int] = frozenset()
    standing: dict[int, float] = field(default_factory=dict)
    strong: bool = False


class HybridSearcher:
    def __init__(self, index, encoder, lexical: LexicalSearcher | None = None,
                 weight: float = fusion.WEIGHT, depth: int = fusion.DEPTH, method: str = "blend",
                 dense_when: str = fusion.DENSE_WHEN, floor: float | None = fusion.FLOOR,
                 spread: str = fusion.SPREAD, min_group: int = fusion.MIN_GROUP):
        self.index, self.encoder = index, encoder
        self.lexical = lexical or LexicalSearcher(index)
        self.weight, self.depth, self.method = weight, depth, method
        # "always"; "weak": lexical alone when an all* tier matched; "rerank": then the dense part
        # only reorders the lexical hits (no card found by meaning alone joins them)
        self.dense_when = dense_when
        # The dense ranking is by standing: how many standard deviations a card's cosine stands
        # above the mean of the cards written in its script ("script"; a script with fewer than
        # `min_group` cards is measured against the whole vault) or of all cards ("vault"). A card
        # found by meaning alone must stand `floor` sd up (None: no floor).
        self.floor, self.spread, self.min_group = floor, spread, min_group

    def search(self, q: Query) -> Result:
        # The model reads the query on a second thread while the lexical pass runs: the engine is
        # one C call that lets go of the GIL, so on two cores the SQL costs no extra time.
        with ThreadPoolExecutor(1, thread_name_prefix="memsync-query") as pool:
            has_vectors = len(store.load(self.index, self.encoder.model).cards) > 0
            vector = pool.submit(self.encoder.query, q.text) if has_vectors else None
            # One lexical pass, `depth` deep: the query is planned once, and the page asked for is
            # its top (its notes speak of the deep list; `_result` says them for the page).
            deep = self.lexical.search(q._replace(limit=self.depth), cap=self.depth, snippets=False)
            if self.wants_dense(deep.matched):
                lexical = deep.hits
                found = self.candidates(q, lexical, deep.matched, vector)
                order = self.order(found)
            else:  # lexical's page and order; the dense part is still reported
                lexical = deep.hits[: clamp_limit(q.limit)]
                found = self.candidates(q, lexical, deep.matched, vector)
                order = sorted(fusion.minmax(found.lexical).items(), key=lambda kv: -kv[1])
        result = self._result(q, deep, lexical, found.dense, order)
        if not has_vectors:  # asked for meaning, given words only: say so
            result.notes.append(Note(codes.NO_VECTORS))
        return result

    def wants_dense(self, matched: str | None) -> bool:
        return self.dense_when != "weak" or not _strong(matched)

    def order(self, c: Candidates) -> list[tuple[int, float]]:
        """(card id, fused score), best first. Pure: the bench replays it over stored candidates."""
        if c.strong and self.dense_when == "rerank":
            alone = float("inf")
        else:
            alone = float("-inf") if self.floor is None else self.floor
        dense = {k: v for k, v in c.standing.items() if k in c.lexical or v >= alone}
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
        terms = page.terms  # the lexical pass planned the query
        hits = []
        for card_id, score, valid in ranked[:limit]:  # snippets only for the page shown
            if card_id in by_id:
                hit = by_id[card_id]
                hits.append(hit._replace(score=score, lexical=hit.score, dense=dense.get(card_id),
                                         snippet=hit.snippet or shown_text(*self._body(card_id), terms)))
            else:
                row = rows[card_id]
                hits.append(Hit(
                    id=card_id, path=row["path"], title=shown_title(row["title"]), kind=row["kind"],
                    source=row["source"], score=score, matched=SEMANTIC, coverage=None,
                    snippet=shown_text(row["summary"], row["body"], terms), valid=valid,
                    dense=dense[card_id],
                ))
        more = page.more or len(page.hits) > limit or len(ranked) > limit  # page: the deep lexical pass
        notes = [n for n in page.notes if n.code not in (codes.MORE, codes.STRICT_PART)]
        if hits and not lexical:  # the lexical page's "nothing matched" does not hold any more
            notes = [Note(codes.MEANING_ONLY)]
        if more:
            notes.append(Note(codes.MORE, {"shown": limit, "max": MAX_LIMIT}))
        return Result(query=q.text, matched=page.matched or (SEMANTIC if hits else None), hits=hits,
                      notes=notes, more=more, terms=page.terms, tiers=page.tiers)

    def _body(self, card_id: int) -> tuple[str | None, str]:
        row = self.index.run(sql.body(card_id))[0]
        return row[0], row[1]

    def candidates(self, q: Query, lexical: list[Hit], matched: str | None,
                   vector: Future | None = None) -> Candidates:
        """The best `depth` cards passing the filters by cosine to the query (a card by its best
        passage), beside the lexical hits. `vector`: the query's embedding, when already asked for."""
        import numpy as np

        lex = fusion.page_scores([(h.id, h.score) for h in lexical])
        vectors = store.load(self.index, self.encoder.model)
        card_ids = vectors.cards
        unembedded = frozenset(lex.keys() - set(card_ids.tolist()))
        if not len(card_ids):
            return Candidates(lex, {}, unembedded, strong=_strong(matched))
        embedded = vector.result() if vector is not None else self.encoder.query(q.text)
        best = np.maximum.reduceat(vectors.matrix @ embedded, vectors.starts)
        standing = fusion.standing(best, vectors.scripts if self.spread == "script" else None,
                                   self.min_group)
        order = np.argsort(-standing)
        out: dict[int, int] = {}  # card id -> its position in `best`
        window, at = self.depth * 4, 0
        while len(out) < self.depth and at < len(order):
            chunk = [int(card_ids[i]) for i in order[at : at + window]]
            keep = self._passing(q, chunk)  # filters, validity, --as-of: the lexical SQL
            out.update({c: i for c, i in zip(chunk, order[at : at + window]) if c in keep})
            at += window
            window *= 4
        top = list(out.items())[: self.depth]
        return Candidates(lex, {c: float(best[i]) for c, i in top}, unembedded,
                          {c: float(standing[i]) for c, i in top}, _strong(matched))

    def _passing(self, q: Query, ids: list[int]) -> set[int]:
        where = filters(q)
        if not where.sql:
            return set(ids)
        return {r[0] for r in self.index.run(sql.passing(ids, where))}

    def _rows(self, q: Query, ids: list[int]) -> dict:
        return {r["id"]: r for r in self.index.run(sql.id_rows(ids, filters(q)))}
