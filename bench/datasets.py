"""Loaders for the retrieval sets. Each returns a Corpus: documents and judged queries.

SciFact and CMRC 2018 are under non-commercial / share-alike licences: they are read at run time
from the shared datasets folder and never copied into this repository.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "bench" / "golden"


@dataclass
class Corpus:
    name: str
    docs: list[tuple[str, str, str]]  # (doc id, title, body)
    queries: list[tuple[str, dict[str, int]]] = field(default_factory=list)  # (text, id -> grade)


def datasets_dir() -> Path:
    """MEMSYNC_DATASETS, else `shared/datasets` beside the checkout (as laid out in CI)."""
    env = os.environ.get("MEMSYNC_DATASETS")
    return Path(env) if env else REPO.parent / "shared" / "datasets"


def _sentences_literal(field_text: str) -> list[str]:
    """SciFact abstracts are numpy-style lists of Python string literals: read each literal
    with the tokenizer, never with eval."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(field_text).readline):
        if tok.type == tokenize.STRING:
            out.append(ast.literal_eval(tok.string))
    return out


def scifact(root: Path | None = None) -> Corpus:
    folder = (root or datasets_dir()) / "scifact"
    csv.field_size_limit(1 << 24)
    with open(folder / "corpus_train.csv", encoding="utf-8", newline="") as handle:
        docs = [
            (row["doc_id"], row["title"], " ".join(_sentences_literal(row["abstract"])))
            for row in csv.DictReader(handle)
        ]
    claims: dict[str, str] = {}
    with open(folder / "claims_train.csv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            claims.setdefault(row["id"], row["claim"])
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels_train.tsv", encoding="utf-8") as handle:
        next(handle)  # header
        for line in handle:
            qid, doc_id, grade = line.rstrip("\n").split("\t")
            qrels.setdefault(qid, {})[doc_id] = int(grade)
    queries = [(claims[qid], rel) for qid, rel in qrels.items()]
    return Corpus("scifact", docs, queries)


_SENTENCE_END = re.compile(r"[^。！？;\n]*(?:[。！？;\n]|$)")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of `text`, cut after 。！？; and newlines."""
    spans = []
    for match in _SENTENCE_END.finditer(text):
        if match.group().strip():
            spans.append((match.start(), match.end()))
    return spans


def cmrc(level: str, root: Path | None = None) -> Corpus:
    """CMRC 2018 trial recast as retrieval: one card per passage, or per sentence."""
    path = (root or datasets_dir()) / "cmrc2018" / "cmrc2018_trial.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    corpus = Corpus(f"cmrc-{level}", [])
    for article in data["data"]:
        for para in article["paragraphs"]:
            context, pid = para["context"], para["id"]
            spans = split_sentences(context) if level == "sentence" else [(0, len(context))]
            ids = [pid if level == "passage" else f"{pid}-{n}" for n in range(len(spans))]
            corpus.docs += [(i, "", context[a:b]) for i, (a, b) in zip(ids, spans)]
            for qa in para["qas"]:
                if not qa["question"].strip():  # the trial split has a blank question
                    continue
                relevant = {}
                for answer in qa["answers"]:
                    start = answer["answer_start"]
                    end = start + len(answer["text"])
                    for doc_id, (a, b) in zip(ids, spans):
                        if a < end and start < b:  # the sentence holds part of the answer
                            relevant[doc_id] = 1
                if relevant:
                    corpus.queries.append((qa["question"], relevant))
    return corpus


def available() -> dict[str, str | None]:
    """Which real sets can run here; the value is why not, when not."""
    root = datasets_dir()
    need = {"scifact": root / "scifact" / "corpus_train.csv",
            "cmrc2018": root / "cmrc2018" / "cmrc2018_trial.json"}
    return {name: None if p.exists() else f"{p} not found (set MEMSYNC_DATASETS)" for name, p in need.items()}
