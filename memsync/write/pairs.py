"""A supersede pair's two pointers (`superseded_by` in the old card, `supersedes` in the new):
checked both ways, and the dangling one dropped when asked (memsync doctor --fix-pairs).

Both doctor and the audit (memsync.lifecycle.audit) report what `problems` finds.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from memsync.config import Config
from memsync.model import TRASH
from memsync.store import health
from memsync.store.index import Index
from memsync.write import atomic, journal, vaultio
from memsync.write import frontmatter_edit as fe
from memsync.write.cardtext import verify_edit


@dataclass(frozen=True)
class PairProblem:
    message: str
    fix: str  # what to do, in a sentence
    paths: tuple[str, ...]
    source: str
    unpairable: bool = False  # a vault card whose partner is gone: `unpair` can drop the pointer


def problems(index: Index) -> list[PairProblem]:
    """superseded_by / supersedes naming a missing card, or a pair that does not agree."""
    cards = {(r["source"], r["path"]): r for r in health.supersede_links(index)}
    found = []
    for (source, path), row in sorted(cards.items()):
        for key, back in (("superseded_by", "supersedes"), ("supersedes", "superseded_by")):
            target = row[key]
            if not target:
                continue
            other = cards.get((source, target)) or index.card_by_path(source, target)
            if other is None:
                found.append(PairProblem(
                    f"{source}:{path} says {key}: {target}, and no such card is indexed",
                    _dangling_fix(source, path, key, target), (path,), source, source == "vault"))
            elif other[back] != path:
                says = f"says {back}: {other[back]}" if other[back] else f"has no {back}"
                found.append(PairProblem(
                    f"{source}:{path} says {key}: {target}, but {target} {says}",
                    f"make the two agree: set `{back}: {path}` in {target}, or remove `{key}` "
                    f"from {path}", (path, target), source))
    return found


def _dangling_fix(source: str, path: str, key: str, target: str) -> str:
    if source == "vault":
        lines = "`superseded_by` and `invalid_at` lines" if key == "superseded_by" else "`supersedes` line"
        return (f"if {target} is in the trash, bring it back with `memsync delete --restore "
                f"{shlex.quote(TRASH + '/' + target)}`; otherwise `memsync doctor --fix-pairs` removes the {lines} "
                f"from {path} (a vault edit, so only when asked)")
    return f"remove the `{key}` line from {path}, or restore {target}"


def unpair(cfg: Config, rel: str) -> list[str]:
    """Drop the supersede pointers of one card that name a vault card no longer on disk: a card
    whose successor is gone loses `superseded_by` and `invalid_at`, so it is valid (and found)
    again; one whose predecessor is gone loses `supersedes`. A vault write, so it runs only when
    asked (doctor --fix-pairs), under the write lock; returns what was done, one line per card."""
    vault = vaultio.root(cfg)
    with journal.writing(cfg.home.path):
        full = vaultio.inside(vault, rel)
        data = vaultio.read_bytes(full)
        if data is None:
            return [f"{rel}: no longer on disk, nothing to change"]
        text, card = vaultio.editable_text(data, rel)
        edits: dict[str, str | None] = {}
        expect: dict = {}
        for key in ("superseded_by", "supersedes"):
            target = getattr(card, key)
            if target and vaultio.read_bytes(vaultio.inside(vault, target)) is None:
                edits[key] = None
                expect[key] = None
                if key == "superseded_by" and card.invalid_at:
                    edits["invalid_at"] = expect["invalid_at"] = None
        if not edits:
            return [f"{rel}: its supersede partner is on disk again, nothing to change"]
        new_text = fe.set_keys(text, edits)
        verify_edit(new_text, card, expect)
        if vaultio.read_only(full) is not None:
            return [f"{rel}: read-only, not changed; make it writable (chmod u+w "
                    f"{shlex.quote(str(full))}), then run `memsync doctor --fix-pairs` again"]
        try:
            atomic.replace(full, new_text.encode("utf-8"))
        except OSError as exc:
            raise vaultio.failed(rel, exc) from None
    warnings: list[str] = []
    with vaultio.index_or_none(cfg, warnings) as index:
        vaultio.sync(cfg, index, [rel], warnings)
    removed = ", ".join(f"`{key}`" for key in edits)
    valid = " (it is valid again)" if "superseded_by" in edits else ""
    return [f"removed {removed} from {rel}{valid}", *warnings]
