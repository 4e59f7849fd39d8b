"""The retrieval sets as one shape: a folder of Markdown for memsync, documents for the floor.

An EvalSet is what every system is scored on: `vault` is indexed by memsync's own Indexer (the
files as they are), `floor_docs` feed the plain FTS5 variants, `queries` are judged by document
id, and `doc_id` turns a memsync hit path into that id.

Names: `scifact`, `cmrc-passage`, `cmrc-sentence`, `obsidian-zh-TW` … `obsidian-es`, `ja-notes`
(the hand-written Japanese vault in bench/japanese/, always present), and the groups `obsidian`
(the five Obsidian vaults), `cmrc` (both levels), `public` (SciFact and CMRC), `all` (every real
set). The golden set is separate (`golden`): it is scored by its own metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import datasets, engines, ja_notes, obsidian

PUBLIC = ("scifact", "cmrc-passage", "cmrc-sentence")
OBSIDIAN = tuple(f"obsidian-{lang}" for lang in obsidian.DEV_LANGS)
HAND = ("ja-notes",)  # written for memsync, kept in this repository
GROUPS = {"obsidian": OBSIDIAN, "cmrc": ("cmrc-passage", "cmrc-sentence"), "public": PUBLIC,
          "all": PUBLIC + OBSIDIAN + HAND + ("golden",)}


@dataclass
class EvalSet:
    name: str
    vault: Path
    queries: list[tuple[str, dict[str, int]]]
    floor_docs: list[tuple[str, str, str]]  # (doc id, title, body)
    doc_id: Callable[[str], str]  # memsync hit path -> doc id
    kinds: list[str] = field(default_factory=list)  # per query, when the set has kinds
    note: str = ""


def expand(spec: str) -> list[str]:
    """`obsidian,scifact` -> the set names, in a stable order; unknown names are an error."""
    known = PUBLIC + OBSIDIAN + HAND + ("golden",)
    names: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        chosen = GROUPS.get(part) or ((part,) if part in known else None)
        if chosen is None:
            raise SystemExit(f"unknown set {part!r}; use {', '.join([*GROUPS, *known])}")
        names += [n for n in chosen if n not in names]
    return [n for n in known if n in names]


def _public(name: str, work: Path, quick: int | None) -> EvalSet:
    corpus = datasets.scifact() if name == "scifact" else datasets.cmrc(name.split("-", 1)[1])
    queries = corpus.queries[:quick] if quick else corpus.queries
    stems = engines.write_vault(work / name, corpus.docs)
    return EvalSet(name, work / name, queries, corpus.docs, lambda path: stems[engines.stem(path)])


def _obsidian(s: obsidian.ObsidianSet, note: str | None = None) -> EvalSet:
    return EvalSet(s.name, s.vault, s.queries, s.floor_docs(), lambda path: path, s.kinds,
                   note=note or (f"commit {s.commit[:7]}" if s.commit else ""))


def japanese() -> EvalSet:
    """`ja-notes`, read like an Obsidian set: the floor gets each note's file stem and its text
    without the YAML block."""
    s = obsidian.load(ja_notes.ROOT, "ja", name="ja-notes")
    return _obsidian(s, note="hand-written dev set (bench/japanese)")


def prepare(names: list[str], work: Path, quick: int | None = None, obsidian_sets: str | None = None,
            obsidian_git: str | None = None) -> tuple[list[EvalSet], dict[str, str]]:
    """The named real sets, ready to score (public ones written as vaults under `work`), and
    {name: why it was skipped}. `quick` keeps only the first N queries of the public sets (the
    Obsidian sets are small enough to run whole)."""
    out, skipped = [], {}
    missing = datasets.available()
    for name in (n for n in names if n in PUBLIC):
        why = missing["scifact" if name == "scifact" else "cmrc2018"]
        if why:
            skipped[name] = why
        else:
            out.append(_public(name, work, quick))
    wanted = [n for n in names if n in OBSIDIAN]
    if wanted:
        root, why = obsidian.locate(obsidian_sets, obsidian_git)
        if root is None:
            skipped.update(dict.fromkeys(wanted, why))
        else:
            found = obsidian.sets(root, [n.removeprefix("obsidian-") for n in wanted])
            for name, s in found.items():
                if isinstance(s, str):
                    skipped[name] = s
                else:
                    out.append(_obsidian(s))
    if "ja-notes" in names:
        out.append(japanese())
    return out, skipped
