"""The near-duplicate candidates miss nothing the exact comparison of every pair finds, and the
audit holds a vault's cards compactly, not all their bodies at once (memsync.lifecycle.shingles)."""

from __future__ import annotations

import random
import tracemalloc
from collections import Counter, defaultdict
from itertools import combinations

import pytest

from memsync import config
from memsync.lifecycle import audit, duplicates, shingles
from memsync.lifecycle.opening import index_of
from memsync.store.index import Index

from .conftest import write_card

WORDS = [f"w{n}" for n in range(400)]
HAN = "部署脚本静态文件复制站点根目录重新加载生效失败保持不变数据库备份恢复监控告警日志磁盘内存网络"
THRESHOLD = 0.55


def _sentence(rng: random.Random, chinese: bool) -> str:
    if chinese:
        return "".join(rng.choices(HAN, k=rng.randint(8, 20))) + "。"
    # a skewed vocabulary, as real text: a few words are everywhere
    words = rng.choices(WORDS, weights=[1 / (r + 1) for r in range(len(WORDS))], k=rng.randint(6, 14))
    return " ".join(words) + "."


def _edited(rng: random.Random, sentences: list[str], others: list[str], edits: int) -> list[str]:
    copy = list(sentences)
    for _ in range(edits):
        rule = rng.choice(["cut", "add", "swap", "reorder"])
        if rule == "cut" and len(copy) > 2:
            del copy[rng.randrange(len(copy))]
        elif rule == "add":
            copy.insert(rng.randrange(len(copy) + 1), rng.choice(others))
        elif rule == "swap":
            at = rng.randrange(len(copy))
            words = copy[at].split(" ")
            if len(words) > 2:
                i = rng.randrange(len(words) - 1)
                words[i], words[i + 1] = words[i + 1], words[i]
            copy[at] = " ".join(words)
        elif len(copy) > 1:
            i, j = rng.sample(range(len(copy)), 2)
            copy[i], copy[j] = copy[j], copy[i]
    return copy


def varied_cards(seed: int) -> dict[str, str]:
    """Path -> body: originals, copies edited lightly to heavily (similarities on both sides of
    the threshold), mosaics of other cards' sentences, a shared footer, and cards of a few words."""
    rng = random.Random(seed)
    cards: dict[str, str] = {}
    pool: list[str] = []
    for n in range(60):
        chinese = n % 4 == 3
        sentences = [_sentence(rng, chinese) for _ in range(rng.randint(3, 8))]
        pool += sentences
        joiner = "" if chinese else " "
        footer = [] if n % 3 else ["Reviewed by the platform team, see the runbook for details."]
        cards[f"base-{n}.md"] = joiner.join(sentences + footer)
        for copy in range(rng.choice([0, 1, 2])):
            edited = _edited(rng, sentences, pool, rng.randint(1, 5))
            cards[f"base-{n}-copy{copy}.md"] = joiner.join(edited + footer)
    for n in range(40):
        cards[f"mosaic-{n}.md"] = " ".join(rng.sample(pool, 3))
    for n in range(20):
        cards[f"tiny-{n}.md"] = " ".join(rng.sample(WORDS[:6], rng.randint(1, 3)))
    return cards


def exact_groups(texts: dict[str, str], threshold: float) -> set[frozenset[str]]:
    """Every pair compared: the groups the candidates must all reach."""
    paths = sorted(texts)
    sets = [shingles.shingles(texts[p]) for p in paths]
    parent = list(range(len(paths)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    joined = set()
    for i, j in combinations(range(len(paths)), 2):
        if shingles.jaccard(sets[i], sets[j]) >= threshold:
            parent[root(i)] = root(j)
            joined |= {i, j}
    out = defaultdict(set)
    for i in joined:
        out[root(i)].add(paths[i])
    return {frozenset(g) for g in out.values()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_audit_finds_the_groups_every_pair_compared_finds(seed, cli, vault, home):
    for path, body in varied_cards(seed).items():
        write_card(vault, path, path.removesuffix(".md"), body)
    cli("index")
    code, data = cli("audit", "--json", "--threshold", str(THRESHOLD))
    assert code == 0 and data["counts"]["duplicates"] == len(data["duplicates"])  # all listed
    found = {frozenset(c["path"] for c in g["cards"]) for g in data["duplicates"]}

    index = Index(config.load().db.path)
    try:  # the texts as the index holds them, title and body
        texts = {r["path"]: f"{r['title']}\n{r['body']}" for r in index.cards()}
    finally:
        index.close()
    expected = exact_groups(texts, THRESHOLD)
    assert len(expected) >= 10 and any(len(g) > 2 for g in expected)
    assert found == expected


def counted_the_old_way(sets: list[frozenset[int]]) -> set[tuple[int, int]]:
    """The candidate rule as first written: every pair of every bucket counted in one table."""
    sketches = [shingles.sketch(s) for s in sets]
    buckets = defaultdict(list)
    for i, values in enumerate(sketches):
        for value in values:
            buckets[value].append(i)
    limit = max(shingles.COMMON_MIN, int(shingles.COMMON_SHARE * len(sets)))
    shared: Counter = Counter()
    for members in buckets.values():
        if 1 < len(members) <= limit:
            shared.update(combinations(members, 2))
    return {(i, j) for (i, j), n in shared.items()
            if n >= min(shingles.SHARED, len(sketches[i]), len(sketches[j]))}


@pytest.mark.parametrize("seed", range(5))
def test_candidates_counted_card_by_card_are_the_candidates_of_the_rule(seed):
    """Sets drawn from small, overlapping ranges share many sketch values, some in more sketches
    than the common limit, and some sets are smaller than SHARED."""
    rng = random.Random(seed)
    sets = []
    for _ in range(300):
        low = rng.choice([0, 0, 100, 400])
        values = range(low, low + rng.choice([80, 200]))
        sets.append(frozenset(rng.sample(values, rng.choice([1, 2, 3, 10, 30, 60]))))
    expected = counted_the_old_way(sets)
    sketches = [shingles.sketch(s) for s in sets]
    in_sketches = Counter(v for values in sketches for v in values)
    assert len(expected) > 1000 and max(in_sketches.values()) > shingles.COMMON_MIN
    assert any(min(len(sketches[i]), len(sketches[j])) < shingles.SHARED for i, j in expected)
    assert shingles.candidate_pairs(sets) == expected
    packed = [shingles.packed(" ".join(f"x{v}" for v in sorted(s))) for s in sets]
    assert shingles.candidate_pairs(packed) == counted_the_old_way([frozenset(p) for p in packed])


def test_the_audit_does_not_hold_every_body_at_once(vault, cli):
    """Cards of long bodies of distinct words: the audit's peak memory stays below the bodies'
    own size (it keeps each card's length and packed shingles, 4 bytes a shingle)."""
    rng = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    total = 0
    for n in range(120):
        body = " ".join("".join(rng.choices(alphabet, k=14)) for _ in range(3000))
        total += len(body)
        write_card(vault, f"long-{n}.md", f"long {n}", body)
    cli("index")
    cfg = config.load()
    with index_of(cfg) as index:
        tracemalloc.start()
        try:
            report = audit.run(cfg, index)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert report["counts"]["long_without_summary"] == 120
    assert peak < total


def test_a_packed_sketch_is_its_first_values_and_each_card_is_held_in_slots():
    """At 100,000 cards the audit holds a record or two per card beside its shingles: in slots,
    a third of a dict's size; and a packed card's sketch is the head of its sorted values."""
    rng = random.Random(3)
    for chinese in (False, True, False):
        text = "".join(_sentence(rng, chinese) for _ in range(40))
        assert shingles.sketch(shingles.packed(text)) == shingles.sketch(shingles.shingles(text))
    assert shingles.sketch(shingles.packed("one")) == sorted(shingles.shingles("one"))
    card = duplicates.Candidate(1, "vault", "a.md", "a", "", None, True, chars=10)
    assert not hasattr(card, "__dict__") and card.chars == 10
    assert not hasattr(audit._Row(1, "vault", "a.md", "a", None, None, None, None, None, None, 10), "__dict__")
