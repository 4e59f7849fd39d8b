"""Search: the `Searcher` seam and the lexical searcher behind it.

Tiers are tried in order (all → all-prefix → any → any-prefix → any-common); a lower tier fills
the page a higher one left short, its hits ranked below and labelled with their tier (the
`strict_part` note says where the strict part ends). Tokens most cards hold (question words,
particles) are weak: left out of every tier but the last, which only a page the others left
short reaches. Ranking is memsync.search.ranking (per-field BM25, saturated, in Obsidian's
order of a note's parts); invalid cards, when asked for, always rank below valid ones. A tier
most cards match ranks a bounded set of them (memsync.search.bound). What a hit shows comes from
memsync.search.snippets.
"""

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from memsync import dates
from memsync.errors import BadArgument, refuse_blank
from memsync.model import Hit
from memsync.search import bound, codes, query, ranking
from memsync.search.codes import Note
from memsync.search.ranking import FIELD_PARTS, WEIGHTS, Weights, score_parts
from memsync.search.snippets import shown_text, shown_title
from memsync.store import searchsql as sql
from memsync.store import stems
from memsync.store.fields import key
from memsync.store.index import Index

MAX_LIMIT = 20
# A token held by this share of the cards or more is weak: a question word or particle. Chosen on
# the retrieval bench (every dev set and kind together, bench/RESULTS.md).
WEAK_SHARE = 0.5
# In fewer cards a share of them says too little to take a word out of the `all` tiers (a keyword
# of a 5-card nginx vault is in most of them): a weak word there stays required, and is left out
# of the `any` tiers only, so that cards holding nothing else rank last, as `any-common`.
MIN_CARDS_FOR_WEAK = 50


# Per index file: which tokens were found weak, valid while FTS5's averages record (card and
# token counts, rewritten by every change to the index) stays the same.
_WEAK_MEMO: dict[str, tuple[object, dict[str, bool]]] = {}
WEAK_MEMO_TERMS = 10_000


def _weak_memo(path: str, state: object) -> dict[str, bool]:
    held = _WEAK_MEMO.get(path)
    if held is None or held[0] != state or len(held[1]) > WEAK_MEMO_TERMS:
        held = _WEAK_MEMO[path] = (state, {})
    return held[1]


class Query(NamedTuple):
    text: str
    limit: int = 10
    kind: str | None = None
    source: str | None = None
    tag: str | None = None
    as_of: str | None = None
    include_invalid: bool = False


def refuse_blank_filters(q: Query) -> None:
    """A filter given as "" read as no filter at all: a search silently widened to every card,
    where an empty query is refused. Refused the same way, naming the filter."""
    for name, value in (("kind", q.kind), ("tag", q.tag), ("source", q.source)):
        refuse_blank(name, value, f"leave it out to search every {name}, or name one")


@dataclass
class Result:
    """One search's page: its hits, the tier they matched, notes for the caller, and the plan."""

    query: str
    matched: str | None
    hits: list[Hit] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # coded (memsync.search.codes); edges word them
    more: bool = False  # more cards matched than the page holds
    terms: tuple[str, ...] = ()  # the plan's tokens: what snippets and highlights look for
    tiers: list[dict] = field(default_factory=list)  # each tier that ran: name, MATCH, hits

    def note(self, code: str) -> Note | None:
        return next((n for n in self.notes if n.code == code), None)

    def to_dict(self, explain: bool = False) -> dict:
        out: dict[str, Any] = {
            "query": self.query,
            "matched": self.matched,
            "hits": [h.to_dict(explain) for h in self.hits],
            "more": self.more,
            "terms": list(self.terms),
            "notes": [n.to_dict() for n in self.notes],
        }
        if explain:
            out["explain"] = {"tiers": self.tiers}
        return out


class Searcher(Protocol):
    def search(self, q: Query) -> Result: ...


def clamp_limit(limit: int | None, cap: int | None = None) -> int:
    # An unclamped limit of -1 would mean "no limit" to SQLite and dump the whole table.
    return max(1, min(cap or MAX_LIMIT, int(limit if limit is not None else 10)))


def filters(q: Query) -> sql.Where:
    """The filter clauses of a query (memsync.store.searchsql.filters): the lexical searcher's,
    and the hybrid's for the cards it finds by meaning."""
    return sql.filters(today=dates.today(), kind=q.kind, source=q.source, tag=q.tag,
                       as_of=q.as_of, include_invalid=q.include_invalid)


def _filters(q: Query) -> tuple[str, list]:
    where = filters(q)
    return where.sql, list(where.params)


def _low_confidence(hits: list[Hit]) -> Note:
    """Only loose tiers matched: the lowest coverage among the hits, and whether every word was
    there but a CJK run only apart (东京都 vs 东京 … 京都)."""
    low = min(h.coverage for h in hits if h.coverage is not None)
    return Note(codes.LOW_CONFIDENCE, {"coverage": round(low, 3), "apart": low >= 1})


# What a query with nothing to search for should be instead.
NO_LIST_ALL = ("pass keywords or identifiers, e.g. nginx or ecs-prod (there is no list-all; "
               "`memsync stats` counts the cards by kind)")


class LexicalSearcher:
    def __init__(self, index: Index, weights: Weights = WEIGHTS, fill: bool = True,
                 weak_share: float = WEAK_SHARE, rank_budget: int = bound.RANK_BUDGET):
        self.index = index
        index.map_for_search()
        self.weights = weights
        self.fill = fill  # let lower tiers fill a page a higher tier left short
        self.weak_share = weak_share  # a token in this share of the cards or more is weak (1: none)
        self.rank_budget = rank_budget  # a tier matching more cards ranks a bounded set of them

    def search(self, q: Query, cap: int | None = None, snippets: bool = True) -> Result:
        """`cap` lifts the page limit for a caller that ranks further (the hybrid searcher), which
        may also skip the snippets (`snippets=False`: empty) of candidates it will not show."""
        if not q.text or not q.text.strip():
            raise BadArgument(f"the query is empty; {NO_LIST_ALL}")
        limit = clamp_limit(q.limit, cap)
        where, args = _filters(q)
        plan = self.plan(q.text)
        if not plan.tiers:  # `*`, `?`: as empty as "", and answered the same (never "0 hits")
            raise BadArgument(f"the query {q.text!r} has no searchable words (punctuation and * are "
                              f"not searched); {NO_LIST_ALL}")
        result = Result(query=q.text, matched=None, terms=plan.terms)
        # Invalid cards rank below valid ones, except in an --as-of view, where every card shown
        # was the current fact on that day.
        valid_first = q.include_invalid and not q.as_of
        seen: set[int] = set()
        unmatched: set[str] = set()  # tiers no card matches, valid or not
        short, held, alternatives = dict(plan.short), dict(plan.held), dict(plan.alternatives)
        exact = self._exact(q.text)
        for tier, expr in plan.tiers:
            rows, result.more, matched = self._ranked(
                expr, short[tier], exact if tier == "all" else {}, where, args,
                limit - len(result.hits), seen, valid_first, checked=tier.startswith("any"),
                prefix=tier.endswith("prefix"), held=held.get(tier), terms=len(plan.content),
                alternatives=alternatives.get(tier, ()))
            result.tiers.append({"tier": tier, "match": expr, "fields_match": short[tier], "hits": len(rows)})
            if not matched:
                unmatched.add(tier)
            if not rows:
                continue
            result.matched = result.matched or tier
            coverage = self._coverage(rows, plan, tier) if tier.startswith("any") else {}
            day = q.as_of or dates.today()  # `valid` means valid on the day looked at
            # a hit shows its summary, or a window of its body: bodies only for those without one
            unsummed = [r["seq"] for r, _, _ in rows if not r["summary"]] if snippets else []
            bodies = dict(self.index.run(sql.bodies(unsummed))) if unsummed else {}
            result.hits += [self._hit(r, rank, parts, tier, plan if snippets else None,
                                      coverage.get(r["seq"]), day, bodies.get(r["seq"], ""))
                            for r, rank, parts in rows]
            seen.update(r["id"] for r, _, _ in rows)
            if not self.fill or len(result.hits) >= limit:
                break
        if not result.hits:
            result.notes.append(self._empty_note(q))
        elif (closer := self._hidden_closer(q, plan, result.matched, unmatched)) is not None:
            result.notes.append(closer)
        if result.hits and result.matched and result.matched.startswith("any"):
            result.notes.append(_low_confidence(result.hits))
        strict = sum(1 for h in result.hits if h.matched == result.matched)
        if result.hits and strict < len(result.hits):
            # every tier below the strict part, in page order: a page filled by `any` and then
            # by `any-common` says both, not only the first
            rests = [{"tier": t, "count": sum(1 for h in result.hits[strict:] if h.matched == t)}
                     for t in dict.fromkeys(h.matched for h in result.hits[strict:])]
            result.notes.append(Note(codes.STRICT_PART, {"strict": strict, "tier": result.matched,
                                                         "rest": len(result.hits) - strict,
                                                         "rest_tier": rests[0]["tier"], "rests": rests}))
        if result.more:
            result.notes.append(Note(codes.MORE, {"shown": limit, "max": MAX_LIMIT}))
        return result

    def plan(self, text: str) -> query.Plan:
        """The query's tiers, its weak tokens left out (memsync.search.query.plan)."""
        words = query.latin_words(text)
        found = stems.stems(words)
        found.update(stems.stems(set(found.values()) - found.keys()))
        held = frozenset(w for w in query.compounds(text)
                         if self.index.run(sql.matches_upto(query.quote(w), 1))[0][0])
        first = query.plan(text, stems=found, held_joined=held)
        weak, few = self._weak(first) if self.weak_share < 1 and len(first.terms) > 1 else (frozenset(), False)
        return query.plan(text, weak, found, held, weak_in_all=few) if weak else first

    def _weak(self, plan: query.Plan) -> tuple[frozenset[str], bool]:
        """The tokens held by at least `weak_share` of the cards: question words and particles
        (what, did, the, 的, は), decided by their document frequency, never by a list. Each is
        counted only up to that share, so a common word costs a bounded count, not a scan, and
        the answer is kept until the index changes (question words come back in every question).
        And whether the index has fewer than MIN_CARDS_FOR_WEAK cards."""
        rows = self.index.run(sql.averages())
        cards = sql.row_count(rows)
        bar = int(self.weak_share * cards) + 1
        known = _weak_memo(str(self.index.path), (rows[0][0], self.weak_share))
        for t in plan.terms:
            if t not in known and not query.is_char(t):
                known[t] = self.index.run(sql.matches_upto(query.quote(t), bar))[0][0] >= bar
        return frozenset(t for t in plan.terms if known.get(t)), cards < MIN_CARDS_FOR_WEAK

    def _empty_note(self, q: Query) -> Note:
        run = self.index.run
        if q.kind and not run(sql.has_kind(q.kind)):
            kinds = [k for (k,) in run(sql.kinds())]
            return Note(codes.NO_KIND, {"kind": q.kind, "kinds": kinds})
        if q.tag and not run(sql.has_tag(q.tag)):
            return Note(codes.NO_TAG, {"tag": q.tag})
        if not q.include_invalid and not q.as_of:
            hidden = self.search(q._replace(include_invalid=True, limit=MAX_LIMIT))
            if hidden.hits:
                return Note(codes.HIDDEN_INVALID, {"count": len(hidden.hits), "more": hidden.more})
        filters = {name: value for name, value in
                   (("kind", q.kind), ("tag", q.tag), ("source", q.source), ("as_of", q.as_of)) if value}
        return Note(codes.EMPTY, {"filters": filters})

    def _hidden_closer(self, q: Query, plan: query.Plan, matched: str | None,
                       unmatched: set[str]) -> Note | None:
        """The hits came from a weaker tier, and invalid cards match the query more strictly
        (all its words, as written): say so, or the fact looks lost (its successor deleted, say)
        while unrelated prefix or partial hits stand in for it. The stricter tiers matched no
        valid card, so a bounded count of their matches with invalid cards let in is enough; a
        tier that matched no card at all (`unmatched`) need not be counted again."""
        if q.include_invalid or q.as_of or matched is None or matched == query.TIERS[0]:
            return None
        where = sql.filters(today=dates.today(), kind=q.kind, source=q.source, tag=q.tag,
                            include_invalid=True)
        for tier, expr in plan.tiers:
            if query.TIERS.index(tier) >= query.TIERS.index(matched):
                return None
            if tier in unmatched:
                continue
            found = self.index.run(sql.count_matching(expr, where, MAX_LIMIT + 1))[0][0]
            if found:
                return Note(codes.HIDDEN_CLOSER, {"count": min(found, MAX_LIMIT), "more": found > MAX_LIMIT,
                                                  "tier": tier, "hits_tier": matched})
        return None

    def _exact(self, text: str) -> dict[int, int]:
        """Cards with a title, alias, file name or heading equal to the whole query (folded),
        and how strong that field is (memsync.store.fields)."""
        folded = key(text)
        if not folded:
            return {}
        return dict(self.index.run(sql.exact(folded)))

    def _columns(self, table: str, columns: tuple[str, ...], expr: str, window: int) -> dict:
        """seq -> the bm25 of each column alone, for the `window` cards best by their sum."""
        return {seq: tuple(scores) for seq, *scores in self.index.run(sql.bm25_columns(table, columns, expr, window))}

    def _ranked(self, expr, short_expr, exact, where, args, want, exclude,
                valid_first, checked: bool = False, prefix: bool = False, held: str | None = None,
                terms: int = 1, alternatives: tuple[str, ...] = ()) -> tuple[list[tuple], bool, bool]:
        """The best `want` cards for one tier, as (row, score, parts), whether more cards than
        that matched, and whether any card (valid or not) matches the tier at all.

        Candidates: the top of the whole-card bm25 (cards_fts, which also decides what matches
        the tier), plus the top of each short-field table and the exact matches, once checked
        against the tier. Each is scored by memsync.search.ranking.score_parts. Scores come from FTS5
        over the FTS tables alone; only the candidates are joined to `cards` for filters and
        display. The window widens when filters leave it short. `checked`: every short-field
        match already matches the tier (the `any` tiers: each phrase holds a word of the OR).
        `held`: what a card's names must match to hold the query (the `all` tiers; None: no
        card holds it in this tier);
        `terms`: how many query tokens the tier matches on (memsync.search.ranking.score_parts).
        `prefix`: the tier matches prefixes; `alternatives`: the parts of its OR. Above
        `rank_budget` matches, the whole-card score ranks a bounded set (memsync.search.bound).
        """
        w = self.weights
        filters = sql.Where(where, tuple(args))
        window = max(40, 4 * (want + len(exclude)))
        run = self.index.run
        none_names, none_fields = (0.0,) * len(ranking.NAMES), (0.0,) * len(ranking.FIELDS)
        budget = self.rank_budget
        while True:
            whole, bounded = bound.whole_scores(run, w.whole, expr, alternatives, window, budget)
            if not whole:  # nothing matches the tier: the short fields cannot either
                return [], False, False
            names = self._columns("names_fts", ranking.NAMES, short_expr, window)
            fields = self._columns("fields_fts", ranking.FIELDS, short_expr, window)
            extra = (names.keys() | fields.keys() | exact.keys()) - whole.keys()
            if extra and len(whole) >= window and short_expr != expr and not checked:
                # Not every match is in `whole`, and a short-field match may lack some words
                # the tier asks for: check these.
                extra = {seq for (seq,) in run(sql.matching(expr, extra, prefix))}
            elif len(whole) < window and not bounded:
                extra = set()  # `whole` holds every card that matches the tier
            seqs = list(whole.keys() | extra)
            holding = {s for (s,) in run(sql.names_hold(held, seqs))} if held and w.held else set()
            parts = {seq: score_parts(w, whole.get(seq, 0.0), names.get(seq, none_names),
                                      fields.get(seq, none_fields), exact.get(seq, 0), seq in holding,
                                      terms) for seq in seqs}
            scores = {seq: sum(p.values()) for seq, p in parts.items()}
            rows = run(sql.hit_rows(seqs, filters))
            rows = [r for r in rows if r["id"] not in exclude]
            today = dates.today()
            rows.sort(key=lambda r: (valid_first and dates.invalid_by(r["invalid_at"], today),
                                     -scores[r["seq"]], r["path"]))
            complete = sum(
                1 for r in rows if not (valid_first and dates.invalid_by(r["invalid_at"], today))
            ) > want  # one more than asked for, to know whether the page is all there is
            if complete or (len(whole) < window and not bounded):
                return [(r, scores[r["seq"]], parts[r["seq"]]) for r in rows[:want]], len(rows) > want, True
            window *= 8
            budget = max(budget, 8 * window)  # filters left the page short: score further back

    def _coverage(self, rows, plan: query.Plan, tier: str) -> dict[int, float]:
        """Share of the query's tokens each hit contains, asked of FTS5 itself so that it agrees
        with matching (stemming, prefixes). Shown to the caller, never used to rank."""
        seqs = [r["seq"] for r, _, _ in rows]
        found = dict.fromkeys(seqs, 0)
        prefix = tier.endswith("prefix")
        for term in plan.content:
            for (seq,) in self.index.run(sql.matching(plan.term_expr(term, prefix), seqs, prefix)):
                found[seq] += 1
        return {seq: n / len(plan.content) for seq, n in found.items()}

    def _hit(self, row, rank: float, parts: dict[str, float], tier: str, plan: query.Plan | None,
             coverage: float | None, day: str, body: str) -> Hit:
        return Hit(
            id=row["id"], path=row["path"], title=shown_title(row["title"]), kind=row["kind"],
            source=row["source"], score=rank, matched=tier, coverage=coverage,
            snippet=shown_text(row["summary"], body, plan.terms) if plan else row["summary"] or "",
            valid=not dates.invalid_by(row["invalid_at"], day), inlinks=row["inlinks"],
            explain={"tier": tier, "fields": [k for k, v in parts.items() if v and k in FIELD_PARTS],
                     "parts": {k: round(v, 4) for k, v in parts.items() if v},
                     "coverage": None if coverage is None else round(coverage, 3)},
        )
