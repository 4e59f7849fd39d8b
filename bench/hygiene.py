"""Near-duplicate detection of `memsync audit`, on planted duplicates inside real text.

    python -m bench.hygiene [--cards 10000] [--sources 300] [--seed 7]

The vault: every SciFact train abstract and every CMRC 2018 trial passage (untouched), reworded
copies of some of them (the planted groups), and mosaic cards (three sentences of three other
cards, in English or Chinese) filling it up to --cards: they share sentences with real cards
without being duplicates, the case a careless threshold merges. Each copy is its source changed
by two or three rules: a sentence cut, two sentences swapped, a sentence of another card added,
words swapped (adjacent words in English, adjacent characters in Chinese).

Measured through the real CLI: `memsync index`, then `memsync audit --json` timed whole (wall
seconds, peak RSS of the process). Group precision = predicted groups that are exactly a planted
group / predicted groups; recall = planted groups found exactly / planted groups; false groups =
predicted groups holding no planted card (untouched cards only). The threshold sweep reuses the
audit's own functions on the same index. Results: bench/results/hygiene.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import datasets, machine

MEMSYNC = str(Path(sys.executable).with_name("memsync"))
THRESHOLDS = [round(0.30 + 0.05 * i, 2) for i in range(13)]  # 0.30 .. 0.90
_EN_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


def _scifact_docs() -> list[tuple[str, str, list[str]]]:
    folder = datasets.datasets_dir() / "scifact"
    csv.field_size_limit(1 << 24)
    with open(folder / "corpus_train.csv", encoding="utf-8", newline="") as handle:
        return [(f"sf-{row['doc_id']}", row["title"], datasets._sentences_literal(row["abstract"]))
                for row in csv.DictReader(handle)]


def _cmrc_docs() -> list[tuple[str, str, list[str]]]:
    path = datasets.datasets_dir() / "cmrc2018" / "cmrc2018_trial.json"
    out = []
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        for para in article["paragraphs"]:
            text = para["context"]
            sentences = [text[a:b].strip() for a, b in datasets.split_sentences(text)]
            out.append((f"cm-{para['id']}", article["title"], [s for s in sentences if s]))
    return out


def _swap_words(sentences: list[str], rng: random.Random, chinese: bool) -> list[str]:
    out = []
    for sentence in sentences:
        units = list(sentence) if chinese else sentence.split(" ")
        for _ in range(max(1, len(units) // 30)):
            if len(units) > 3:
                i = rng.randrange(len(units) - 1)
                units[i], units[i + 1] = units[i + 1], units[i]
        out.append(("" if chinese else " ").join(units))
    return out


def reword(sentences: list[str], rng: random.Random, other: list[str], chinese: bool) -> list[str]:
    """A copy changed by two or three of the four rules."""
    copy = list(sentences)
    for rule in rng.sample(["cut", "reorder", "add", "swap"], rng.choice([2, 3])):
        if rule == "cut" and len(copy) >= 3:
            del copy[rng.randrange(1, len(copy))]
        elif rule == "reorder" and len(copy) >= 2:
            i, j = rng.sample(range(len(copy)), 2)
            copy[i], copy[j] = copy[j], copy[i]
        elif rule == "add" and other:
            copy.insert(rng.randrange(len(copy) + 1), rng.choice(other))
        elif rule == "swap":
            copy = _swap_words(copy, rng, chinese)
    return copy


def build(cards: int, sources: int, seed: int) -> tuple[list[dict], list[set[str]]]:
    """The vault's cards (path, title, body) and the planted groups (sets of paths)."""
    rng = random.Random(seed)
    english, chinese = _scifact_docs(), _cmrc_docs()
    notes: list[dict] = []

    def add(doc_id: str, title: str, sentences: list[str], zh: bool) -> str:
        path = f"{'zh' if zh else 'en'}/{doc_id}.md"
        notes.append({"path": path, "title": title or sentences[0][:20],
                      "body": ("" if zh else " ").join(sentences)})
        return path

    for doc_id, title, sentences in english:
        if sentences:
            add(doc_id, title, sentences, False)
    for doc_id, title, sentences in chinese:
        if sentences:
            add(doc_id, title, sentences, True)
    planted: list[set[str]] = []
    pools = [(english, False), (chinese, True)]
    n_zh = min(len(chinese) // 2, sources // 3)
    for pool, zh, count in ((english, False, sources - n_zh), (chinese, True, n_zh)):
        usable = [d for d in pool if len(d[2]) >= 3]
        for doc_id, title, sentences in rng.sample(usable, count):
            group = {f"{'zh' if zh else 'en'}/{doc_id}.md"}
            for n in range(rng.choice([1, 1, 2])):
                other = rng.choice(pool)[2]
                copy = reword(sentences, rng, other, zh)
                group.add(add(f"{doc_id}-copy{n + 1}", title, copy, zh))
            planted.append(group)
    filler = 0
    while len(notes) < cards:
        pool, zh = pools[filler % 5 == 4]  # one Chinese mosaic in five
        picks = [rng.choice(rng.choice(pool)[2] or ["x"]) for _ in range(3)]
        add(f"mosaic-{filler}", f"mosaic {filler}", picks, zh)
        filler += 1
    return notes, planted


def write_vault(vault: Path, notes: list[dict]) -> None:
    for note in notes:
        path = vault / note["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: {json.dumps(note['title'], ensure_ascii=False)}\n---\n"
                        f"{note['body']}\n", encoding="utf-8")


def timed(args: list[str], env: dict) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS in MiB, stdout and CPU seconds of one memsync process."""
    started = time.perf_counter()
    proc = subprocess.Popen([MEMSYNC, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"memsync {' '.join(args)} failed")
    return wall, usage.ru_maxrss / 1024, out.decode("utf-8"), usage.ru_utime + usage.ru_stime


def score(predicted: list[set[str]], planted: list[set[str]]) -> dict:
    truth = {frozenset(g) for g in planted}
    in_planted = set().union(*planted)
    exact = sum(1 for g in predicted if frozenset(g) in truth)
    pred_pairs = {frozenset((a, b)) for g in predicted for a in g for b in g if a < b}
    true_pairs = {frozenset((a, b)) for g in planted for a in g for b in g if a < b}
    hit = len(pred_pairs & true_pairs)
    return {
        "groups": len(predicted),
        "precision": round(exact / len(predicted), 4) if predicted else 1.0,
        "recall": round(exact / len(truth), 4) if truth else 1.0,
        "false_groups_untouched": sum(1 for g in predicted if not g & in_planted),
        "pair_precision": round(hit / len(pred_pairs), 4) if pred_pairs else 1.0,
        "pair_recall": round(hit / len(true_pairs), 4) if true_pairs else 1.0,
    }


def sweep(db: Path, planted: list[set[str]]) -> list[dict]:
    """Every threshold, from one set of candidate pairs (the audit's own functions)."""
    from memsync.lifecycle import shingles
    from memsync.lifecycle.duplicates import Candidate, shingle_text
    from memsync.store.index import Index

    index = Index(db)
    try:
        cards = [Candidate(r["id"], r["source"], r["path"], r["title"], r["body"], None, True)
                 for r in index.cards()]
    finally:
        index.close()
    sets = [shingles.shingles(shingle_text(c)) for c in cards]
    edges = shingles.similar_pairs(sets, THRESHOLDS[0])
    out = []
    for threshold in THRESHOLDS:
        groups = shingles.connect(len(sets), edges, threshold)
        out.append({"threshold": threshold,
                    **score([{cards[i].path for i in g.members} for g in groups], planted)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.hygiene", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--sources", type=int, default=300, help="planted groups")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    notes, planted = build(args.cards, args.sources, args.seed)
    with tempfile.TemporaryDirectory(prefix="memsync-hygiene-") as tmp:
        home, vault = Path(tmp) / "home", Path(tmp) / "vault"
        write_vault(vault, notes)
        env = {**os.environ, "MEMSYNC_HOME": str(home), "MEMSYNC_VAULT": str(vault)}
        env.pop("MEMSYNC_DB", None)
        index_s, _, _, _ = timed(["index"], env)
        wall, rss, out, cpu = timed(["audit", "--json"], env)
        load = os.getloadavg()[0]
        report = json.loads(out)
        shipped = report["threshold"]
        predicted = [{c["path"] for c in g["cards"]} for g in report["duplicates"]]
        if report["counts"]["duplicates"] > len(predicted):  # the CLI lists the first LISTED
            from memsync import config
            from memsync.lifecycle import audit

            os.environ.update(MEMSYNC_HOME=str(home), MEMSYNC_VAULT=str(vault))
            full = audit.run(config.load(), _open(home), listed=10**9)
            predicted = [{c["path"] for c in g["cards"]} for g in full["duplicates"]]
        at_shipped = score(predicted, planted)
        curve = sweep(home / "memsync.db", planted)
    result = {
        **machine.info(),
        "vault": {"cards": len(notes), "planted_groups": len(planted),
                  "planted_cards": sum(len(g) for g in planted),
                  "chinese_groups": sum(1 for g in planted if next(iter(g)).startswith("zh/"))},
        "shipped_threshold": shipped,
        "at_shipped": at_shipped,
        "audit": {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "in_process_s": report["seconds"],
                  "peak_rss_mib": round(rss, 1), "load_average": round(load, 1)},
        "index_s": round(index_s, 1),
        "sweep": curve,
    }
    print(json.dumps({k: result[k] for k in ("vault", "shipped_threshold", "at_shipped", "audit")},
                     indent=1))
    for row in curve:
        print(f"  {row['threshold']:.2f}  P {row['precision']:.3f}  R {row['recall']:.3f}  "
              f"false {row['false_groups_untouched']}  groups {row['groups']}")
    if not args.no_save:
        print(f"saved {machine.save('hygiene', result)}")


def _open(home: Path):
    from memsync.store.index import Index

    return Index(home / "memsync.db")


if __name__ == "__main__":
    main()
