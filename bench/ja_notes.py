"""The Japanese development set `ja-notes`: a hand-written vault with known-item queries.

`bench/japanese/` holds `vault/` (72 notes written for memsync: work, home server, recipes,
travel, study, daily life), `questions.tsv` (natural questions, each with the one note that
answers it) and the files the bench reads, in the Obsidian sets' shape: `queries.jsonl`
({"id", "text", "meta": {"kind"}}) and `qrels.json` ({query id: {note path: 1}}).

Those two files are derived from the vault by `python -m bench.ja_notes` (a test checks they are
up to date), so every judgement follows from a rule:

| kind | text | relevant |
|---|---|---|
| `title` | a note's title (frontmatter `title`, else its file name) | that note |
| `heading` | a heading that belongs to one note only and is no note's name | that note |
| `alias` | a frontmatter alias of one note that is no note's name | that note |
| `keyword` | a word of 2-4 characters from KEYWORDS | every note holding it (name or text) |
| `question` | a line of questions.tsv | the note it names |

Titles and headings are sampled with a fixed seed; the rest are taken whole.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from memsync import cjk
from memsync.notes import parse

ROOT = Path(__file__).resolve().parent / "japanese"
SEED, TITLES, HEADINGS = 11, 55, 40
# Words a user would type to find every note about them; each is held by a handful of notes at most.
KEYWORDS = (
    "証明書", "冷凍", "両替", "予約", "稟議", "停電", "味噌", "醤油", "冷蔵庫",
    "容量", "遅延", "匿名化", "予算", "寄附", "控除", "回線", "ワクチン", "タイヤ",
    "キャリー", "ルーター", "電池", "ごま油", "生姜", "写真", "学校", "子ども", "豆腐",
    "検索", "こんにゃく", "当番", "血圧", "敷金", "過学習", "泡盛", "夜市",
)


def notes(root: Path = ROOT) -> dict[str, bytes]:
    vault = root / "vault"
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


def build(root: Path = ROOT) -> list[tuple[str, str, dict[str, int]]]:
    """(kind, text, {note: 1}) for every query, in the order they are written."""
    files = notes(root)
    cards = {rel: parse(data, rel) for rel, data in files.items()}
    names = {cjk.normalize(n) for rel, c in cards.items() for n in (c.title, Path(rel).stem)}
    queries = []
    for rel in sorted(random.Random(SEED).sample(sorted(cards), TITLES)):
        queries.append(("title", cards[rel].title, {rel: 1}))

    owners: dict[str, dict[str, str]] = {}
    for rel, card in cards.items():
        for _level, text in card.headings:
            owners.setdefault(cjk.normalize(text), {})[rel] = text
    headings = sorted((text, rel) for key, held in owners.items() if len(held) == 1 and key not in names
                      and len(key) >= 2 for rel, text in held.items())
    for text, rel in sorted(random.Random(SEED).sample(headings, HEADINGS), key=lambda h: (h[1], h[0])):
        queries.append(("heading", text, {rel: 1}))

    aliases: dict[str, list[tuple[str, str]]] = {}
    for rel, card in cards.items():
        for alias in card.aliases:
            aliases.setdefault(cjk.normalize(alias), []).append((alias, rel))
    for key, held in aliases.items():
        if len(held) == 1 and key not in names:
            queries.append(("alias", held[0][0], {held[0][1]: 1}))

    texts = {rel: cjk.normalize(Path(rel).stem + "\n" + data.decode("utf-8")) for rel, data in files.items()}
    for word in KEYWORDS:
        queries.append(("keyword", word, {rel: 1 for rel, text in texts.items() if cjk.normalize(word) in text}))

    for line in (root / "questions.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip():
            text, rel = line.split("\t")
            queries.append(("question", text, {rel: 1}))
    return queries


def render(queries) -> tuple[str, str]:
    """The text of queries.jsonl and qrels.json."""
    counts: dict[str, int] = {}
    lines, qrels = [], {}
    for kind, text, relevant in queries:
        qid = f"{kind}-{counts.get(kind, 0):03d}"
        counts[kind] = counts.get(kind, 0) + 1
        lines.append(json.dumps({"id": qid, "text": text, "meta": {"kind": kind}}, ensure_ascii=False))
        qrels[qid] = relevant
    return "\n".join(lines) + "\n", json.dumps(qrels, ensure_ascii=False, indent=1) + "\n"


def main() -> int:
    queries_text, qrels_text = render(build())
    (ROOT / "queries.jsonl").write_text(queries_text, encoding="utf-8")
    (ROOT / "qrels.json").write_text(qrels_text, encoding="utf-8")
    kinds: dict[str, int] = {}
    for line in queries_text.splitlines():
        kind = json.loads(line)["meta"]["kind"]
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"{ROOT}: {sum(kinds.values())} queries {kinds}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
