"""The Obsidian Help development vaults: real Obsidian vaults with known-item queries.

Each set is a folder `LANG/` holding `vault/` (the notes byte for byte), `queries.jsonl`,
`qrels.json` (query id -> {note path relative to vault/: grade}) and `manifest.json`, as written
by ../shared/datasets/obsidian-help/build.py. Where they come from, first match wins:

- `MEMSYNC_OBSIDIAN_SETS` (or `--obsidian-sets DIR`): a folder of already built sets;
- `MEMSYNC_OBSIDIAN_GIT` (or `--obsidian-git DIR`): the git directory of a snapshot of the public
  obsidianmd/obsidian-help repository; the sets are built from it with build.py into a cache
  folder (`MEMSYNC_OBSIDIAN_CACHE`, default the system temp folder), once per snapshot commit.

Only the development languages are ever built or read: the others are kept back to check the
work independently. The repository states no licence, so nothing of it enters this project.
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

DEV_LANGS = ("zh-TW", "ko", "de", "fr", "es")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n.*?^---[ \t]*\r?$\n?", re.S | re.M)


@dataclass
class ObsidianSet:
    name: str  # obsidian-LANG
    lang: str
    vault: Path
    queries: list[tuple[str, dict[str, int]]]  # (text, {rel path: grade})
    kinds: list[str]  # the kind of each query (heading, alias)
    commit: str | None

    def floor_docs(self) -> list[tuple[str, str, str]]:
        """The notes as a plain indexer sees them: (rel path, file stem, text after the YAML
        block). Obsidian names a note by its file name and shows the frontmatter apart from the
        text, so a bare FTS5 index of a vault would hold the stem and the body; it reads no YAML
        keys (aliases, tags), which is exactly what memsync's own parsing adds.

        The reference figures in ../shared/datasets/obsidian-help/SOURCE.md come from the text
        alone, without the stem: that floor gives them to the fourth decimal (zh-TW 0.8719, ko
        0.8126, de 0.8126, fr 0.7651, es 0.7940, same R@10); with the stem it is 0.8717, 0.8136,
        0.8126, 0.7669, 0.7957 under unicode61 andor. (Their `bigram` table also folded diacritics,
        which ties it with unicode61 on Latin text; ours keeps them as memsync does, and that
        variant is the best floor on fr and es.)"""
        docs = []
        for path in sorted(self.vault.rglob("*.md")):
            rel = path.relative_to(self.vault).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
            docs.append((rel, path.stem, _FRONTMATTER.sub("", text, count=1)))
        return docs


def build_script() -> Path:
    return datasets.datasets_dir() / "obsidian-help" / "build.py"


def _commit(git_dir: Path) -> str:
    return subprocess.check_output(["git", "-C", str(git_dir), "rev-parse", "HEAD"], text=True).strip()


def build(git_dir: Path, cache: Path, langs=DEV_LANGS) -> Path:
    """Build the sets from a git snapshot into `cache/<commit>/LANG` (skipped when already
    there) and return `cache/<commit>`."""
    root = cache / _commit(git_dir)[:12]
    for lang in langs:
        if lang not in DEV_LANGS:
            raise SystemExit(f"{lang!r} is not a development vault; use one of {', '.join(DEV_LANGS)}")
        out = root / lang
        if (out / "manifest.json").exists():
            continue
        print(f"building obsidian-{lang} from {git_dir}", file=sys.stderr)
        subprocess.run([sys.executable, str(build_script()), str(git_dir), lang, str(out)], check=True,
                       stdout=subprocess.DEVNULL)
    return root


def locate(sets_dir: str | None = None, git_dir: str | None = None) -> tuple[Path | None, str | None]:
    """(folder of built sets, None) or (None, why there is none)."""
    sets_dir = sets_dir or os.environ.get("MEMSYNC_OBSIDIAN_SETS")
    git_dir = git_dir or os.environ.get("MEMSYNC_OBSIDIAN_GIT")
    if sets_dir:
        path = Path(sets_dir)
        if not path.is_dir():
            return None, f"{path} is not a folder (MEMSYNC_OBSIDIAN_SETS / --obsidian-sets)"
        return path, None
    if git_dir:
        if not Path(git_dir).exists():
            return None, f"{git_dir} not found (MEMSYNC_OBSIDIAN_GIT / --obsidian-git)"
        cache = Path(os.environ.get("MEMSYNC_OBSIDIAN_CACHE") or Path(tempfile.gettempdir()) / "memsync-obsidian")
        return build(Path(git_dir), cache), None
    return None, ("no Obsidian Help sets: set MEMSYNC_OBSIDIAN_SETS to a folder of built sets, or "
                  "MEMSYNC_OBSIDIAN_GIT to a git snapshot of obsidianmd/obsidian-help")


def load(folder: Path, lang: str, name: str | None = None) -> ObsidianSet:
    """One built set; `folder` is the set itself (holding vault/, queries.jsonl, qrels.json).
    Any set in that shape loads so (bench/ja_notes.py's too), under `name`."""
    qrels = json.loads((folder / "qrels.json").read_text(encoding="utf-8"))
    queries, kinds = [], []
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        relevant = {path: int(grade) for path, grade in qrels.get(q["id"], {}).items() if grade > 0}
        if relevant:
            queries.append((q["text"], relevant))
            kinds.append((q.get("meta") or {}).get("kind", "?"))
    manifest = folder / "manifest.json"
    commit = json.loads(manifest.read_text(encoding="utf-8")).get("commit") if manifest.exists() else None
    return ObsidianSet(name or f"obsidian-{lang}", lang, folder / "vault", queries, kinds, commit)


def sets(root: Path, langs=DEV_LANGS) -> dict[str, ObsidianSet | str]:
    """name -> loaded set, or -> why it is missing."""
    out: dict[str, ObsidianSet | str] = {}
    for lang in langs:
        if lang not in DEV_LANGS:
            raise SystemExit(f"{lang!r} is not a development vault; use one of {', '.join(DEV_LANGS)}")
        folder = root / lang
        if (folder / "qrels.json").exists() and (folder / "vault").is_dir():
            out[f"obsidian-{lang}"] = load(folder, lang)
        else:
            out[f"obsidian-{lang}"] = f"{folder} has no built set (vault/, queries.jsonl, qrels.json)"
    return out
