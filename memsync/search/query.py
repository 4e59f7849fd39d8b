"""Build the FTS5 MATCH expressions for the tiers. Pure: a query string in, SQL text out.

Every token is quoted, so nothing a user types can be read as FTS5 syntax (`-`, `NEAR`, `*`,
`:`, parentheses); the only operators are the ones written here.
"""

import os
from collections.abc import Mapping
from typing import NamedTuple

from memsync import cjk

# The last tier exists only when the query has weak tokens: any token at all, common ones
# included, so a question whose content words match few cards still gets a full page.
TIERS = ("all", "all-prefix", "any", "any-prefix", "any-common")
MIN_PREFIX = 2  # a one-character prefix matches nearly every card: pure noise
SHORT_WORD = 3  # a word of a Japanese sentence this short has one or two bigrams: outweighed by its particles
# The shortest head a word's prefix is cut back to (bridge): a shorter one (happ of happy, whose
# stem is happi) is mostly the start of other words (happen).
MIN_BRIDGE = 5
# In the prefix tiers a word longer than MIN_CUT also matches its heads of MIN_CUT characters or
# more as whole words, the longest MAX_CUTS of them: `postgresql` finds `postgres`, the reverse of
# `postgres` finding `postgresql` as a prefix. A head of 5 is too often a word of its own (under
# of understand, break of breakfast, water of watermelon); on the bench it found a few more
# run-together names (Obsidian de +1.49 points against +0.60) and moved more LoCoMo rankings.
MIN_CUT = 6
MAX_CUTS = 8


class Plan(NamedTuple):
    phrases: tuple[tuple[str, ...], ...]
    terms: tuple[str, ...]  # distinct tokens: coverage, and what snippets and highlights look for
    tiers: tuple[tuple[str, str], ...]  # (tier name, MATCH expression), in order
    words: frozenset[str] = frozenset()  # lone CJK characters typed as words of their own
    # tier name -> the query's phrases OR-ed: what scores the short-field tables, where a card
    # holding some of the phrases still earns part of the credit.
    short: tuple[tuple[str, str], ...] = ()
    content: tuple[str, ...] = ()  # the tokens the tiers match on (terms less the weak ones)
    # tier name -> what a card's names must hold for it to hold the query (the `all` tiers): every
    # phrase, the weak ones too. Weak is a share of whole cards; in a title the word still names
    # (`Obsidian Sync` holds the query `obsidian sync`, `Headless Sync` does not).
    held: tuple[tuple[str, str], ...] = ()
    # tier name -> the parts of its OR (the `any` tiers), for ranking a tier most cards match
    # (memsync.search.bound)
    alternatives: tuple[tuple[str, tuple[str, ...]], ...] = ()
    bridges: tuple[tuple[str, str], ...] = ()  # word -> what its prefix is matched on (bridge)

    def term_expr(self, token: str, prefix: bool) -> str:
        """One query token as a MATCH expression (used alone to measure coverage)."""
        return _token(token, prefix, self.words, dict(self.bridges))


def quote(token: str) -> str:
    return '"' + cjk.fts_fold(token).replace('"', '""') + '"'


def is_char(token: str) -> bool:
    return len(token) == 1 and cjk.is_cjk(token)


def _char(token: str) -> str:
    # Documents store every occurrence of a CJK character at the start of a token
    # (memsync.cjk), so the prefix form of a lone character is its exact match.
    return quote(token) + " *"


def bridge(word: str, stems: list[str]) -> str:
    """What `word` is matched on as a prefix, given its stem and that stem's own stem (`stems`).
    FTS5 stems a prefix too, and porter does not always give a word and its derivatives one stem:
    `deploy` (and deploys, deploying) becomes `deploi`, `deployment` becomes `deploy`, and
    neither prefix reaches the other. The head the stemmer left alone in all of them (`deplo`)
    reaches both; a word whose stems keep it whole (or too short a head) is matched as itself."""
    head = os.path.commonprefix([word, *stems])
    return head if len(head) >= MIN_BRIDGE and head != word else word


def cuts(word: str, prefix: str) -> list[str]:
    """The heads of `word` the prefix tiers also match as whole words, longest first (MIN_CUT):
    those shorter than `prefix`, what the word is matched on as a prefix (itself, or its bridge,
    whose prefix query reaches the longer heads already). A head never ends inside a number:
    `ticket1234` is not `ticket123`, though it may be `ticket`, as `python3` is `python`."""
    if len(word) <= MIN_CUT or word.isdigit() or cjk.is_cjk(word):
        return []
    longest = min(len(word) - 1, len(prefix) - 1)
    return [word[:end] for end in range(longest, max(MIN_CUT, len(word) - MAX_CUTS) - 1, -1)
            if not (word[end - 1].isdigit() and word[end].isdigit())]


def heads(terms) -> list[str]:
    """Every head of the query's words (cuts of each, as its own prefix), once each and longest
    first, so that at a place in a text the longest one it holds is the one found."""
    return sorted({h for t in terms for h in cuts(t, t)}, key=len, reverse=True)


def _prefix_or_cuts(before: list[str], word: str, prefix: str) -> str:
    """A phrase ending in `word` as the prefix tiers match it: `prefix` (the word or its bridge)
    as a prefix, or a cut of the word as a whole word."""
    heads = [quote(" ".join([*before, cut])) for cut in cuts(word, prefix)]
    expr = quote(" ".join([*before, prefix])) + " *"
    return f"({' OR '.join([expr, *heads])})" if heads else expr


def _phrase(tokens, prefix: bool, bridges: Mapping[str, str] | None = None) -> str:
    if len(tokens) == 1 and is_char(tokens[0]):
        return _char(tokens[0])
    if not (prefix and len(tokens[-1]) >= MIN_PREFIX):
        return quote(" ".join(tokens))
    last = tokens[-1]
    return _prefix_or_cuts(tokens[:-1], last, (bridges or {}).get(last, last))


def _token(token: str, prefix: bool, words: frozenset[str], bridges: Mapping[str, str] | None = None) -> str:
    if token in words:
        return _char(token)
    # Otherwise a lone CJK character stays exact in the `any*` tiers: one left between
    # punctuation, digits or Latin (`1990年，`, `的`) is mostly a particle in a question, and
    # matching it everywhere only adds noise (measured on CMRC, bench/RESULTS.md).
    if prefix and len(token) >= MIN_PREFIX:
        return _prefix_or_cuts([], token, (bridges or {}).get(token, token))
    return quote(token)


def _any_phrase(tokens, prefix: bool, words: frozenset[str], weak: frozenset[str] = frozenset(),
                bridges: Mapping[str, str] | None = None) -> str:
    """A phrase as the `any` tiers credit it in the short fields: a CJK run whole (its bigrams
    are fragments of words), words of other scripts each alone (each is a word), written as
    the tier writes a lone token (a lone CJK character stays exact)."""
    if len(tokens) > 1 and cjk.is_cjk(tokens[0]):
        # A Japanese sentence's words stand between its hiragana: a title holding one of them
        # (金沢 of 金沢で朝に…) is credited for it, never for a particle pair (に行).
        return " OR ".join([_phrase(tokens, prefix), *_word_phrases(tokens, prefix)])
    return " OR ".join(_token(t, prefix, words, bridges) for t in tokens
                       if t not in weak or set(tokens) <= weak)


def _run_words(tokens) -> list[str]:
    """A CJK phrase's words between its hiragana (memsync.cjk.content_runs), from its bigrams."""
    if len(tokens) < 2 or not cjk.is_cjk(tokens[0]):
        return []
    return cjk.content_runs(tokens[0] + "".join(t[-1] for t in tokens[1:]))


def _word_phrases(tokens, prefix: bool, longest: int | None = None) -> list[str]:
    """Those words (`longest` characters at most), each as a phrase of its bigrams."""
    return [_phrase(cjk.bigrams(part), prefix) for part in _run_words(tokens)
            if longest is None or len(part) <= longest]


def _japanese_words(phrases, prefix: bool) -> list[str]:
    """The short words of a Japanese sentence's runs (SHORT_WORD characters at most), each as a
    phrase, for the `any` tiers to count once more. Every card they match already matches the
    tier, but bm25 sums over phrases: a two-kanji word is one bigram beside the dozen particle
    pairs (に行, を食) a long card holds, while a long word (パスワード) already weighs by its own
    bigrams (bench: ja-notes)."""
    return [word for p in phrases for word in _word_phrases(p, prefix, SHORT_WORD)]


def _adjacent(every) -> list[tuple[int, str]]:
    """(position, the two words joined) of each two adjacent one-word phrases of other scripts
    than CJK (`back up`: backup)."""
    return [(i, a[0] + b[0]) for i, (a, b) in enumerate(zip(every, every[1:]))
            if len(a) == len(b) == 1 and not (cjk.is_cjk(a[0]) or cjk.is_cjk(b[0]))]


def _pairs(every, held: frozenset[str]) -> dict[int, str]:
    """The adjacent pairs whose joined word the index holds, left to right, each phrase in one
    pair at most."""
    out: dict[int, str] = {}
    for i, word in _adjacent(every):
        if word in held and i - 1 not in out:
            out[i] = word
    return out


def compounds(query: str) -> list[str]:
    """The words the query's adjacent words make joined: `plan` wants those the index holds."""
    return [word for _, word in _adjacent(tuple(tuple(p) for p in cjk.phrases(query)))]


def _all_clauses(every, kept, joined: Mapping[int, str], prefix: bool, bridges: Mapping[str, str]) -> str:
    """What the `all` tiers AND: each kept phrase, but a pair of adjacent words that the index
    also holds as one word (back up, backup) is one clause that either form satisfies."""
    out, skip = [], False
    for i, p in enumerate(every):
        if skip:
            skip = False
        elif i in joined:
            split = [_phrase(q, prefix, bridges) for q in every[i : i + 2] if q in kept]
            if split:  # both words weak: the pair is left out, as each would be
                out.append(f"(({' AND '.join(split)}) OR {_token(joined[i], prefix, frozenset())})")
            skip = True
        elif p in kept:
            out.append(_phrase(p, prefix, bridges))
    return " AND ".join(out)


def latin_words(query: str) -> list[str]:
    """The query's words that a stemmer may change: what `plan` wants the stems of."""
    return [t for p in cjk.phrases(query) for t in p if not cjk.is_cjk(t) and not t.isdigit()]


def plan(query: str, weak: frozenset[str] = frozenset(), stems: Mapping[str, str] | None = None,
         held_joined: frozenset[str] = frozenset(), weak_in_all: bool = False) -> Plan:
    """The tiers of `query`. `weak`: tokens too common to decide anything (question words and
    particles, found by their document frequency: memsync.search.lexical). A phrase made only
    of weak tokens is left out of the tiers, and a weak token out of the `any` tiers' OR, so a
    question is matched on its content words and never pays for scanning its common ones;
    when every token is weak, the query is taken as written. Only a page the content words
    left short reaches the last tier, `any-common`, where the weak tokens count too. `stems`:
    FTS5's stem of each of the query's latin_words and of each of those stems, for the prefix
    tiers to bridge a word to its derivatives (bridge). `held_joined`: which of the query's
    compounds the index holds as words; in the `all` tiers each may stand for its two words (a
    card saying backup and database holds `back up database`). The `any` tiers leave them out:
    an extra alternative there ranked run-together words of other cards (breastcancer,
    associatedwith in SciFact's text) above the answers, and lost on SciFact and LoCoMo.
    `weak_in_all`: the weak tokens stay required in the `all` tiers and are left out of the `any`
    tiers only (a small vault: memsync.search.lexical.MIN_CARDS_FOR_WEAK)."""
    every = tuple(tuple(p) for p in cjk.phrases(query))
    terms = tuple(dict.fromkeys(t for p in every for t in p))
    if not terms:
        return Plan((), (), ())
    phrases = tuple(p for p in every if not set(p) <= weak) or every
    content = tuple(t for t in terms if t not in weak) or terms
    words = frozenset(w for w in cjk.normalize(query).split() if is_char(w))
    stems = stems or {}
    bridges = {t: b for t in terms if (b := bridge(t, _stems_of(t, stems))) != t}
    joined = _pairs(every, held_joined)
    extra = tuple(dict.fromkeys(joined.values()))
    alternatives = {
        "any": (*(_token(t, False, words) for t in content), *_japanese_words(phrases, False)),
        "any-prefix": (*(_token(t, True, words, bridges) for t in content), *_japanese_words(phrases, True)),
        "any-common": tuple(_token(t, False, words) for t in terms),
    }
    kept_in_order = every if weak_in_all else phrases
    kept = set(kept_in_order)
    candidates = [
        ("all", _all_clauses(every, kept, joined, False, bridges)),
        ("all-prefix", _all_clauses(every, kept, joined, True, bridges)),
        ("any", " OR ".join(alternatives["any"])),
        ("any-prefix", " OR ".join(alternatives["any-prefix"])),
    ]
    if content != terms:
        candidates.append(("any-common", " OR ".join(alternatives["any-common"])))
    # In the `any` tiers the short fields are credited for a CJK run only whole: its lone
    # bigrams would let a heading or tag that shares two characters of a question (a particle
    # pair such as に行) outrank the note that answers it (bench: ja-notes).
    short = {
        "all": " OR ".join([*(_phrase(p, False) for p in kept_in_order), *(_token(t, False, words) for t in extra)]),
        "all-prefix": " OR ".join([*(_phrase(p, True, bridges) for p in kept_in_order),
                                   *(_token(t, True, words) for t in extra)]),
        "any": " OR ".join(_any_phrase(p, False, words, weak) for p in phrases),
        "any-prefix": " OR ".join(_any_phrase(p, True, words, weak, bridges) for p in phrases),
        "any-common": " OR ".join(_any_phrase(p, False, words) for p in every),
    }
    held = (("all", _all_clauses(every, set(every), joined, False, bridges)),
            ("all-prefix", _all_clauses(every, set(every), joined, True, bridges)))
    tiers, seen = [], set()
    for name, expr in candidates:
        if expr not in seen:  # a one-word query has no distinct `any` tier
            seen.add(expr)
            tiers.append((name, expr))
    return Plan(phrases, terms, tuple(tiers), words, tuple(short.items()), content, held,
                tuple(alternatives.items()), tuple(bridges.items()))


def _stems_of(word: str, stems: Mapping[str, str]) -> list[str]:
    """The word's stem and that stem's stem (porter is not idempotent: deploy -> deploi)."""
    first = stems.get(word, word)
    return [first, stems.get(first, first)]
