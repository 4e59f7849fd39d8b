"""Records passed between modules. Small, frozen, no behaviour. Pure.

`memsync search` starts a process for one query, so what it defines counts: these records are
NamedTuples, which cost a tenth of a frozen dataclass to define (a dataclass compiles its
methods, 0.4-1.1 ms each, 9 ms for the 14 a search defined). The records only indexing passes
around (a parsed card, a file's stat signature, a sync's report) are in memsync.model.indexing,
which a search never imports."""

from typing import NamedTuple

KIND_FOLDERS = {
    "system": "00-System",
    "project": "02-Projects",
    "knowledge": "03-Knowledge",
    "content": "04-Content",
    "prompt": "05-Prompts",
    "business": "06-Business",
    "tool": "07-Tools",
    "mistake": "08-Mistakes",
}
FOLDER_KINDS = {folder: kind for kind, folder in KIND_FOLDERS.items()}
TRASH = ".trash"  # the vault's trash folder (Obsidian's "move to .trash" uses it too)


class Source(NamedTuple):
    name: str
    adapter: str
    root: str
    writable: bool = False


class IgnoredSource(NamedTuple):
    """A source config.json lists but memsync leaves out, and why (it reads another's files)."""

    source: Source
    reason: str


class Hit(NamedTuple):
    id: int
    path: str
    title: str
    kind: str | None
    source: str
    score: float
    matched: str
    coverage: float | None
    snippet: str
    valid: bool
    # Set by the hybrid searcher only: the raw lexical score and the cosine of the best passage
    # (None: not found that way, or no vector yet). Lexical search leaves them out of to_dict.
    lexical: float | None = None
    dense: float | None = None
    inlinks: int = 0  # notes whose links point at this card
    # Why it ranks where it does (memsync.search.lexical): the fields that matched, the parts of
    # the score; shown only when asked (`memsync search --explain`).
    explain: dict | None = None

    def to_dict(self, explain: bool = False) -> dict:
        out = {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "kind": self.kind,
            "source": self.source,
            "score": round(self.score, 4),
            "matched": self.matched,
            "coverage": None if self.coverage is None else round(self.coverage, 3),
            "snippet": self.snippet,
            "valid": self.valid,
            "inlinks": self.inlinks,
        }
        if self.lexical is not None or self.dense is not None:
            out["lexical"] = None if self.lexical is None else round(self.lexical, 4)
            out["dense"] = None if self.dense is None else round(self.dense, 4)
        if explain and self.explain is not None:
            out["explain"] = self.explain
        return out
