"""The retrieval sets as one shape: a folder of Markdown for memsync, documents for the floor.

An EvalSet is what every system is scored on: `vault` is indexed by memsync's own Indexer (the
files as they are), `floor_docs` feed the plain FTS5 variants, `queries` are judged by document
id, and `doc_id` turns a memsync hit path into that id.

Names: `scifact`, `cmrc-passage`, `cmrc-sentence`, `obsidian-zh-TW` … `obsidian-es`, `ja-notes`
(the hand-written Japanese vault in bench/japanese/, always present), `locomo-session` and
`locomo-turn` (LoCoMo conversations, each query scoped to its conversation: bench/locomo.py), and
the groups `obsidian` (the five Obsidian vaults), `cmrc` (both levels), `public` (SciFact and
CMRC), `locomo` (both LoCoMo sets), `all` (every real set). The golden set is separate (`golden`): it is scored by its own metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import datasets, engines, ja_notes, locomo, obsidian

PUBLIC = ("scifact", "cmrc-passage", "cmrc-sentence")
OBSIDIAN = tuple(f"obsidian-{lang}" for lang in obsidian.DEV_LANGS)
HAND = ("ja-notes",)  # written for memsync, kept in this repository
LOCOMO = tuple(f"locomo-{g}" for g in locomo.GRANULARITIES)
KNOWN = PUBLIC + OBSIDIAN + LOCOMO + HAND + ("golden",)
GROUPS = {"obsidian": OBSIDIAN, "cmrc": ("cmrc-passage", "cmrc-sentence"), "public": PUBLIC,
          "locomo": LOCOMO, "all": KNOWN}


@dataclass
class EvalSet:
    name: str
    vault: Path
    queries: list[tuple[str, dict[str, int]]]
    floor_docs: list[tuple[str, str, str]]  # (doc id, title, body)
    doc_id: Callable[[str], str]  # memsync hit path -> doc id
    kinds: list[str] = field(default_factory=list)  # per query, when the set has kinds
    note: str = ""
    # per query, the scope it is searched in (memsync: that tag; the floor: the documents whose
    # `scope_of` is it), when the set has scopes
    scopes: list[str] = field(default_factory=list)
    scope_of: Callable[[str], str] | None = None

    def scoped(self) -> list[tuple[str, list[tuple[str, str, str]], list[int]]]:
        """(scope, its floor documents, the positions of its queries), one per scope; one
        unnamed scope holding everything when the set has none."""
        if not self.scopes or self.scope_of is None:
            return [("", self.floor_docs, list(range(len(self.queries))))]
        out = []
        for scope in sorted(set(self.scopes)):
            docs = [d for d in self.floor_docs if self.scope_of(d[0]) == scope]
            out.append((scope, docs, [i for i, s in enumerate(self.scopes) if s == scope]))
        return out


def expand(spec: str) -> list[str]:
    """`obsidian,scifact` -> the set names, in a stable order; unknown names are an error."""
    known = KNOWN
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


def _locomo(s: locomo.LocomoSet, quick: int | None) -> EvalSet:
    """A --quick run takes every k-th question (all conversations stay in), at most `quick` × 2."""
    step = -(-len(s.queries) // (2 * quick)) if quick else 1
    return EvalSet(s.name, s.vault, s.queries[::step], s.floor_docs(), lambda path: path, s.kinds[::step],
                   note=f"commit {s.commit[:7]}" if s.commit else "", scopes=s.scopes[::step],
                   scope_of=locomo.scope_of)


def prepare(names: list[str], work: Path, quick: int | None = None, obsidian_sets: str | None = None,
            obsidian_git: str | None = None, locomo_sets: str | None = None,
            locomo_git: str | None = None) -> tuple[list[EvalSet], dict[str, str]]:
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
    wanted = [n for n in names if n in LOCOMO]
    if wanted:
        root, why = locomo.locate(locomo_sets, locomo_git)
        if root is None:
            skipped.update(dict.fromkeys(wanted, why))
        else:
            for name, ls in locomo.sets(root, wanted).items():
                if isinstance(ls, str):
                    skipped[name] = ls
                else:
                    out.append(_locomo(ls, quick))
    if "ja-notes" in names:
        out.append(japanese())
    return out, skipped
