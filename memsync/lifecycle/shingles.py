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
passed over, so it cannot put thousands of cards in one bucket.

Memory stays bounded at 100,000 cards: a card's shingles are kept packed (a sorted array of
32-bit values, `packed`, 4 bytes a shingle instead of a set of Python ints), and the values two
sketches share are counted one card at a time against the cards before it, never as one table
of every pair that shares a value (at 100,000 cards of a small vocabulary: 110 million pairs).

The three loops that touch every shingle or every card met in a bucket run in C where the
package could build its extensions (memsync/_tokenstream.c: a card's values; memsync/_overlap.c:
the candidates, and the values two cards share): in Python each makes an object per shingle or
per count, and at 100,000 cards they took 27 s of an audit's 31 s. The Python functions here
are their reference, what runs without the extensions, and what tests compare them with.
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from memsync import cjk

try:  # a card's values in C: built with the package where a C compiler was at hand (setup.py)
    from memsync._tokenstream import shingle_values as _values_in_c
except ImportError:
    _values_in_c = None  # type: ignore[assignment]
try:  # ... and the counting of shared values
    from memsync._overlap import candidates as _candidates_in_c
    from memsync._overlap import common as _common_in_c
except ImportError:
    _candidates_in_c = _common_in_c = None  # type: ignore[assignment]

SKETCH = 24  # values kept per card
SHARED = 4  # values two sketches must share to be compared (pairs at J >= 0.5 share ~10)
COMMON_SHARE = 0.005  # a value in the sketches of more than this share of the cards is passed over
COMMON_MIN = 20  # ... when that is more cards than this


_ASCII_WORD = re.compile(r"[^\W_]+", re.ASCII)


@cache
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    return re.compile(cjk._word()), re.compile(rf"[{cjk._CJK_CLASS}]+")


def shingles(text: str) -> frozenset[int]:
    """The CRC-32 of each of the text's grams: small ints, so 10,000 cards' sets stay small,
    and the sketch needs no second hash (the same values on every run and machine)."""
    return frozenset(map(zlib.crc32, map(str.encode, grams(text))))


def packed(text: str) -> array:
    """The same values as `shingles`, sorted in an array of 32-bit ints: what a card keeps while
    the others are read (a set of Python ints costs about 60 bytes a shingle, this 4)."""
    if _values_in_c is None:
        return array("I", sorted(shingles(text)))
    # the copy: an array made from bytes keeps room to grow, a sixteenth (13 MiB at 100,000 cards)
    return array("I", _values_in_c(cjk.normalize(text)))[:]


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


Shingles = Collection[int]  # a frozenset from `shingles` or a sorted array from `packed`


def jaccard(a: Shingles, b: Shingles) -> float:
    if not a or not b:
        return 0.0
    if _common_in_c is not None and isinstance(a, array) and isinstance(b, array):
        common = _common_in_c(a, b)  # both sorted, values distinct: one merge, no set made
    else:
        common = len((a if isinstance(a, (set, frozenset)) else set(a)).intersection(b))
    return common / (len(a) + len(b) - common)


def sketch(items: Shingles) -> list[int]:
    """The SKETCH smallest shingle hashes (of a packed array, sorted already: its first ones)."""
    return items[:SKETCH].tolist() if isinstance(items, array) else sorted(items)[:SKETCH]


def earlier_candidates(sets: Sequence[Shingles]) -> Iterator[tuple[int, list[int]]]:
    """For each card j, the cards i < j whose sketches share at least SHARED values with its
    own. A value found in the sketches of very many cards (a boilerplate shingle) is no evidence
    and is passed over. A card with a sketch shorter than SHARED (a few words) needs only as many
    values in common as it has."""
    if _candidates_in_c is None:
        return _counted(sets)
    return _counted_in_c(sets)


def _common_limit(cards: int) -> int:
    """A value in the sketches of more cards than this is passed over."""
    return max(COMMON_MIN, int(COMMON_SHARE * cards))


def _counted(sets: Sequence[Shingles]) -> Iterator[tuple[int, list[int]]]:
    """The shared values are counted for one card at a time, against the cards before it: memory
    holds one card's counts, not every pair of every bucket."""
    sketches = [s[:SKETCH] if isinstance(s, array) else array("I", sketch(s)) for s in sets]
    in_sketches: Counter = Counter()
    for values in sketches:
        in_sketches.update(values)
    limit = _common_limit(len(sets))
    evidence = {value for value, n in in_sketches.items() if 1 < n <= limit}
    del in_sketches
    # a card with a one-value sketch (a few words) needs only that value in common
    short = {i for i, values in enumerate(sketches) if len(values) < SHARED}
    before: dict[int, list[int]] = defaultdict(list)  # value -> the cards so far with it
    for j, values in enumerate(sketches):
        shared: Counter = Counter()
        for value in values:
            if value in evidence:
                cards = before[value]
                shared.update(cards)
                cards.append(j)
        need = min(SHARED, len(values))
        found = [i for i, n in shared.items() if n >= need]  # most counts are 1: kept cheap
        found += [i for i in shared.keys() & short if len(sketches[i]) <= shared[i] < need]
        if found:
            yield j, sorted(found)


def _counted_in_c(sets: Sequence[Shingles]) -> Iterator[tuple[int, list[int]]]:
    """`_counted` in C (memsync/_overlap.c), given the sketches end to end in one array (an array
    a card, with the values renumbered in Python, took 22 MiB more at 100,000 cards); it answers
    j, how many, and the cards found, for each card that found any."""
    heads, starts = array("I"), array("I", [0])
    for s in sets:
        heads.extend(s[:SKETCH] if isinstance(s, array) else sketch(s))
        starts.append(len(heads))
    found = memoryview(_candidates_in_c(heads, starts, SHARED, _common_limit(len(sets)))).cast("I")
    del heads, starts
    at = 0
    while at < len(found):
        j, count = found[at], found[at + 1]
        yield j, found[at + 2 : at + 2 + count].tolist()
        at += 2 + count


def candidate_pairs(sets: Sequence[Shingles]) -> set[tuple[int, int]]:
    """Index pairs (i < j) whose sketches share at least SHARED values."""
    return {(i, j) for j, earlier in earlier_candidates(sets) for i in earlier}


@dataclass(frozen=True)
class Group:
    members: tuple[int, ...]  # indexes into the input, in input order
    pairs: tuple[tuple[int, int, float], ...]  # the similar pairs that joined them (i, j, J)

    @property
    def similarity(self) -> float:
        """The weakest link that holds the group together."""
        return min(j for _, _, j in self.pairs)


def similar_pairs(sets: Sequence[Shingles], floor: float,
                  allowed: Callable[[int, int], bool] = lambda i, j: True,
                  ) -> list[tuple[int, int, float]]:
    """(i, j, similarity) of the candidate pairs whose similarity reaches `floor`, i < j, sorted."""
    edges = []
    merged = _common_in_c is not None  # two packed arrays are compared by a merge in C
    for j, earlier in earlier_candidates(sets):
        later = sets[j]
        if not (merged and isinstance(later, array)):
            later = frozenset(later)  # made once for all of j's candidates
        for i in earlier:
            if allowed(i, j):
                similarity = jaccard(later, sets[i])
                if similarity >= floor:
                    edges.append((i, j, similarity))
    return sorted(edges)


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


def groups(sets: Sequence[Shingles], threshold: float,
           allowed: Callable[[int, int], bool] = lambda i, j: True) -> list[Group]:
    """Groups of near-duplicates: connected cards whose similarity reaches `threshold`.
    `allowed(i, j)` may keep some pairs apart."""
    return connect(len(sets), similar_pairs(sets, threshold, allowed), threshold)
