"""LoCoMo, the agent-memory development set: long conversations as turn cards and session cards.

Each set is a folder `locomo-turn/` or `locomo-session/` holding `vault/` (one folder per
conversation), `queries.jsonl` ({"id", "text", "scope": "conv-<n>", "meta"}) and `qrels.json`, as
written by ../shared/datasets/locomo/build.sh. Where they come from, first match wins:

- `MEMSYNC_LOCOMO_SETS` (or `--locomo-sets DIR`): a folder holding both built sets;
- `MEMSYNC_LOCOMO_GIT` (or `--locomo-git DIR`): the git directory of a snapshot of the public
  snap-research/locomo repository; build.sh builds the sets from it into a cache folder
  (`MEMSYNC_LOCOMO_CACHE`, default the system temp folder), once per snapshot commit.

Every query is scoped to its conversation: memsync searches it with `--tag conv-<n>` (each card
carries that tag), and the floor ranks only that conversation's cards. The data is CC BY-NC 4.0:
nothing of it enters this project.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import datasets

GRANULARITIES = ("session", "turn")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n.*?^---[ \t]*\r?$\n?", re.S | re.M)


@dataclass
class LocomoSet:
    name: str  # locomo-session, locomo-turn
    vault: Path
    queries: list[tuple[str, dict[str, int]]]
    scopes: list[str]  # the conversation of each query (its cards' tag and folder)
    kinds: list[str]  # LoCoMo's question category of each query
    commit: str | None

    def floor_docs(self) -> list[tuple[str, str, str]]:
        """(rel path, "", the card's text after its YAML block): what a plain index of the
        conversation holds. The frontmatter title (speakers, session number, date) is left out,
        as it is the same words on every card of a conversation."""
        docs = []
        for path in sorted(self.vault.rglob("*.md")):
            text = path.read_text(encoding="utf-8")
            docs.append((path.relative_to(self.vault).as_posix(), "", _FRONTMATTER.sub("", text, count=1)))
        return docs


def scope_of(doc_id: str) -> str:
    """The conversation a card belongs to: its top folder."""
    return doc_id.split("/", 1)[0]


def build(git_dir: Path, cache: Path) -> Path:
    commit = subprocess.check_output(["git", "-C", str(git_dir), "rev-parse", "HEAD"], text=True).strip()
    root = cache / commit[:12]
    if not all((root / f"locomo-{g}" / "manifest.json").exists() for g in GRANULARITIES):
        print(f"building the LoCoMo sets from {git_dir}", file=sys.stderr)
        script = datasets.datasets_dir() / "locomo" / "build.sh"
        subprocess.run(["bash", str(script), str(git_dir), str(root)], check=True, stdout=subprocess.DEVNULL)
    return root


def locate(sets_dir: str | None = None, git_dir: str | None = None) -> tuple[Path | None, str | None]:
    """(folder holding locomo-session/ and locomo-turn/, None) or (None, why there is none)."""
    sets_dir = sets_dir or os.environ.get("MEMSYNC_LOCOMO_SETS")
    git_dir = git_dir or os.environ.get("MEMSYNC_LOCOMO_GIT")
    if sets_dir:
        path = Path(sets_dir)
        return (path, None) if path.is_dir() else (None, f"{path} is not a folder (MEMSYNC_LOCOMO_SETS)")
    if git_dir:
        if not Path(git_dir).exists():
            return None, f"{git_dir} not found (MEMSYNC_LOCOMO_GIT)"
        cache = Path(os.environ.get("MEMSYNC_LOCOMO_CACHE") or Path(tempfile.gettempdir()) / "memsync-locomo")
        return build(Path(git_dir), cache), None
    return None, ("no LoCoMo sets: set MEMSYNC_LOCOMO_SETS to a folder of built sets, or "
                  "MEMSYNC_LOCOMO_GIT to a git snapshot of snap-research/locomo")


def load(folder: Path, name: str) -> LocomoSet:
    qrels = json.loads((folder / "qrels.json").read_text(encoding="utf-8"))
    queries, scopes, kinds = [], [], []
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        relevant = {path: int(grade) for path, grade in qrels.get(q["id"], {}).items() if grade > 0}
        if relevant:
            queries.append((q["text"], relevant))
            scopes.append(q["scope"])
            kinds.append((q.get("meta") or {}).get("category_name", "?"))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    commit = (manifest.get("source") or {}).get("commit")
    return LocomoSet(name, folder / "vault", queries, scopes, kinds, commit)


def sets(root: Path, names: list[str]) -> dict[str, LocomoSet | str]:
    out: dict[str, LocomoSet | str] = {}
    for name in names:
        folder = root / name
        if (folder / "qrels.json").exists() and (folder / "vault").is_dir():
            out[name] = load(folder, name)
        else:
            out[name] = f"{folder} has no built set (vault/, queries.jsonl, qrels.json)"
    return out
