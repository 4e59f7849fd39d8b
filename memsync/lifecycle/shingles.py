"""Near-duplicate detection by shingles. Pure: texts in, groups out.

A card becomes a set of shingles: for Latin text overlapping word pairs, for CJK runs (Han, Kana,
Hangul) overlapping character trigrams, both after NFKC and lowercasing (memsync.cjk). Two cards
are near-duplicates when the Jaccard similarity of their sets reaches the threshold.

Comparing every pair would be quadratic (10,000 cards: 50 million pairs), so candidates come
from a bottom-k MinHash sketch: each card keeps the SKETCH smallest CRC-32 values of its
shingles, and cards whose sketches share at least SHARED values are compared exactly. Of two
cards of similarity J, the smallest values of their union lie in both with probability J each,
so at the thresholds used (J >= 0.5) a pair is all but certainly a candidate, while cards that
merely share a sentence rarely are. A value in the sketches of very many cards (boilerplate) is
passed over, so it cannot put thousands of cards in one bucket. Everything heavy runs in C
(set operations, map, heapq): 10,000 cards take a few seconds.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from itertools import combinations

from memsync import cjk

SKETCH = 24  # values kept per card
SHARED = 4  # values two sketches must share to be compared (pairs at J >= 0.5 share ~10)
COMMON_SHARE = 0.005  # a value in the sketches of more than this share of the cards is passed over
COMMON_MIN = 20  # ... when that is more cards than this


_ASCII_WORD = re.compile(r"[^\W_]+", re.ASCII)


@cache
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    cjk_class = cjk._CJK_CLASS
    return re.compile(rf"[^\W_{cjk_class}]+"), re.compile(rf"[{cjk_class}]+")


def shingles(text: str) -> frozenset[int]:
    """The CRC-32 of each of the text's grams: small ints, so 10,000 cards' sets stay small,
    and the sketch needs no second hash (the same values on every run and machine)."""
    return frozenset(map(zlib.crc32, map(str.encode, grams(text))))


def grams(text: str) -> set[str]:
    """Word pairs of the Latin text and character trigrams of the CJK runs of `text`."""
    text = cjk.normalize(text)
    if text.isascii():  # the small pattern, same result (as memsync.cjk splits)
        words, runs = _ASCII_WORD.findall(text), []
    else:
        words_re, runs_re = _patterns()
        words, runs = words_re.findall(text), runs_re.findall(text)
    out = set(map(" ".join, zip(words, words[1:])))
    if len(words) == 1:
        out.add(words[0])
    for run in runs:
        if len(run) < 3:
            out.add(run)
        else:
            out.update(map("".join, zip(run, run[1:], run[2:])))
    return out


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not a or not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def sketch(items: frozenset[int]) -> list[int]:
    """The SKETCH smallest shingle hashes."""
    return sorted(items)[:SKETCH]


def candidate_pairs(sets: list[frozenset[int]]) -> set[tuple[int, int]]:
    """Index pairs (i < j) whose sketches share at least SHARED values. A value found in the
    sketches of very many cards (a boilerplate shingle) is no evidence and is passed over."""
    buckets: dict[int, list[int]] = defaultdict(list)
    sizes = []
    for i, s in enumerate(sets):
        values = sketch(s)
        sizes.append(len(values))
        for value in values:
            buckets[value].append(i)
    limit = max(COMMON_MIN, int(COMMON_SHARE * len(sets)))
    shared: Counter = Counter()
    for members in buckets.values():
        if 1 < len(members) <= limit:
            shared.update(combinations(members, 2))
    # a card with a one-value sketch (a few words) needs only that value in common
    return {(i, j) for (i, j), n in shared.items() if n >= min(SHARED, sizes[i], sizes[j])}


@dataclass(frozen=True)
class Group:
    members: tuple[int, ...]  # indexes into the input, in input order
    pairs: tuple[tuple[int, int, float], ...]  # the similar pairs that joined them (i, j, J)

    @property
    def similarity(self) -> float:
        """The weakest link that holds the group together."""
        return min(j for _, _, j in self.pairs)


def similar_pairs(sets: list[frozenset[int]], floor: float,
                  allowed=lambda i, j: True) -> list[tuple[int, int, float]]:
    """(i, j, similarity) of the candidate pairs whose similarity reaches `floor`."""
    edges = []
    for i, j in sorted(candidate_pairs(sets)):
        if allowed(i, j):
            similarity = jaccard(sets[i], sets[j])
            if similarity >= floor:
                edges.append((i, j, similarity))
    return edges


def connect(count: int, edges: list[tuple[int, int, float]], threshold: float) -> list[Group]:
    """Groups of cards joined by pairs at or above `threshold` (connected components)."""
    parent = list(range(count))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    kept = [e for e in edges if e[2] >= threshold]
    for i, j, _ in kept:
        parent[find(i)] = find(j)
    joined: dict[int, list[int]] = defaultdict(list)
    for i in sorted({x for e in kept for x in e[:2]}):
        joined[find(i)].append(i)
    by_root: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
    for edge in kept:
        by_root[find(edge[0])].append(edge)
    return [Group(tuple(members), tuple(by_root[root])) for root, members in
            sorted(joined.items(), key=lambda kv: kv[1][0])]


def groups(sets: list[frozenset[int]], threshold: float,
           allowed=lambda i, j: True) -> list[Group]:
    """Groups of near-duplicates: connected cards whose similarity reaches `threshold`.
    `allowed(i, j)` may keep some pairs apart."""
    return connect(len(sets), similar_pairs(sets, threshold, allowed), threshold)
