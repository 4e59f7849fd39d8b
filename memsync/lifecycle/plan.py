"""`memsync consolidate`'s plan: what the audit found, turned into new file contents.

Nothing is written here. Each step names the files it touches and their text before and after,
so the plan can be shown, applied through one journal, and undone byte for byte:

- a near-duplicate group is merged into its keeper: the keeper's body gains the sentences only
  the others had, word for word, and the others are superseded by it (`invalid_at`,
  `superseded_by`), in one chain: keeper -> first merged -> second merged -> the keeper's own
  older history. Nothing is deleted; `--as-of` still finds each merged card;
- a long card without a summary gets an extractive one (memsync.lifecycle.sentences), marked
  `summary_generated: true`;
- a card whose kind disagrees with config.json's folder rules moves to its folder.

Cards of read-only sources are never changed (their groups are reported); a card read or marked
helpful often is never merged away (memsync.lifecycle.duplicates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memsync import dates
from memsync.errors import PathOutsideVault, Rejected
from memsync.lifecycle import access, sentences
from memsync.model.indexing import Card
from memsync.write import frontmatter_edit as fe
from memsync.write import vaultio
from memsync.write.cardtext import verify_edit

SECTIONS = ("duplicates", "long_without_summary", "misfiled")  # of the audit, what a plan does


@dataclass
class FileChange:
    rel: str
    before: bytes
    after: bytes
    to: str | None = None  # the file moves here (None: it stays at rel)
    had_text: bool = True  # its body held text when the plan read it (a saved plan tells emptied)


@dataclass
class Plan:
    merges: list[dict] = field(default_factory=list)
    summaries: list[dict] = field(default_factory=list)
    moves: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    changes: dict[str, FileChange] = field(default_factory=dict)
    now: str = ""  # the time its merges write (`updated`, `invalid_at`): when it was made
    # Files a plan only shown changes, whose texts it did not keep (build's keep_texts): at
    # 100,000 cards the summaries' texts alone are hundreds of megabytes, and showing the plan
    # needs none of them.
    let_go: set[str] = field(default_factory=set)
    # Paths of the vault the index holds no card of, for a reason it recorded (too large, no
    # permission): the audit never saw them, so no step names them; the plan says they are out.
    not_indexed: list[str] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)  # coded (memsync.search.codes): an index never filled

    def to_dict(self) -> dict:
        shown = {"merges": self.merges, "summaries": self.summaries, "moves": self.moves,
                 "skipped": self.skipped, "files": len(self.changes) + len(self.let_go),
                 "empty": not self.changes and not self.let_go}
        if self.not_indexed:
            folders = sum(path.endswith("/") for path in self.not_indexed)
            shown["not_indexed"] = {"files": len(self.not_indexed) - folders, "folders": folders}
        if self.notes:
            shown["notes"] = self.notes
        return shown


class _Files:
    """The vault's files as the plan has changed them so far."""

    def __init__(self, vault: Path, plan: Plan):
        self.vault, self.plan = vault, plan
        self.touched: set[str] = set()  # by the step being planned (a saved plan is applied by steps)
        # The file last read from disk: a step reads a file, then edits it (a summary) or moves
        # it, and its change starts from the bytes it read, not from a second read (which cost
        # as much again at 100,000 cards).
        self._last: tuple[str, bytes | None] = ("", None)
        self.writable: dict[str, bool] = {}  # folder -> whether we may write in it (access.unwritable)
        self.resolved: dict[str, str] = {}  # folder -> its real path (vaultio.inside)

    def original(self, rel: str) -> bytes | None:
        """The file's bytes on disk (None: no regular file there); Rejected when it may not be
        read."""
        if self._last[0] != rel:
            self._last = (rel, access.read(self.vault, rel, self.resolved))
        return self._last[1]

    def text(self, rel: str) -> tuple[str, Card] | None:
        """The file's text and card as this plan has it (None: no file there). Rejected when it
        cannot be edited safely (not UTF-8, broken frontmatter): the step is left out."""
        change = self.plan.changes.get(rel)
        data = change.after if change else self.original(rel)
        if data is None:
            return None
        return vaultio.editable_text(data, rel)

    def card(self, rel: str, chars: int = 0) -> tuple[str, Card]:
        """As `text`, for a file the audit saw (its body `chars` long): one gone since, or
        emptied since (no watcher saw it), is refused."""
        loaded = self.text(rel)
        if loaded is None:
            raise Rejected(_gone(rel))
        if _emptied(loaded[1], chars):
            raise Rejected(emptied_why(rel))
        return loaded

    def edit(self, rel: str, new_text: str, before: Card, expect: dict) -> None:
        verify_edit(new_text, before, expect)  # Rejected when the frontmatter cannot be edited
        change = self.plan.changes.get(rel)
        if change is None:
            blocked = access.unwritable(self.vault, rel, known=self.writable)
            if blocked:
                raise Rejected(blocked)
            original = self.original(rel)
            assert original is not None
            change = self.plan.changes[rel] = FileChange(rel, original, original,
                                                         had_text=bool(before.body.strip()))
        change.after = new_text.encode("utf-8")
        self.touched.add(rel)


def _gone(rel: str) -> str:
    return f"{rel} is no longer there; run `memsync index`, then consolidate again"


def _emptied(card: Card, chars: int) -> bool:
    """Whether a card the index read with a body of `chars` has none now (0 bytes, blank lines,
    its frontmatter alone): emptied since, and no step the audit planned for its text holds."""
    return chars > 0 and not card.body.strip()


def emptied_why(rel: str, since: str = "the index last read it") -> str:
    return (f"{rel} holds no text now (emptied after {since}); put its text back, "
            "or if it was emptied on purpose run `memsync index`, then consolidate again")


def build(vault: Path, report: dict, now: str | None = None, keep_texts: bool = True) -> Plan:
    """The plan for an audit report (memsync.lifecycle.audit.run with every entry listed).
    Without `keep_texts` (a plan only shown, never saved or applied), a file's texts go once
    its summary is planned: no later step reads them, the moves only ask whether it changed.
    A step whose file cannot be read or edited is left out and listed in `skipped`, with what
    to do; the other steps are planned all the same."""
    now = now or dates.now_iso()
    plan = Plan(now=now)
    files = _Files(vault, plan)
    merged_away: set[str] = set()
    for group in report["duplicates"]:
        before = {rel: change.after for rel, change in plan.changes.items()}
        away = set(merged_away)
        try:
            files.touched = set()
            _merge(files, plan, group, now, merged_away)
        except Rejected as exc:
            # A group is merged whole or not at all: the edits it made before the refusal go.
            for rel in [rel for rel in plan.changes if rel not in before]:
                del plan.changes[rel]
            for rel, after in before.items():
                plan.changes[rel].after = after
            merged_away.intersection_update(away)
            plan.skipped.append({"step": "merge", "keeper": group["keeper"], "why": exc.message})
    for entry in report["long_without_summary"]:
        if entry["source"] != "vault" or entry["path"] in merged_away:
            continue
        try:
            files.touched = set()
            _summarize(files, plan, entry)
        except Rejected as exc:
            plan.skipped.append({"step": "summary", "id": entry["id"], "why": exc.message})
        if not keep_texts and entry["path"] in plan.changes:
            del plan.changes[entry["path"]]
            plan.let_go.add(entry["path"])
    destinations = {change.to for change in plan.changes.values() if change.to}
    for entry in report["misfiled"]:
        try:
            _move(files, plan, entry, destinations)
        except (Rejected, PathOutsideVault) as exc:  # a folder rule's folder may be a link out
            plan.skipped.append({"step": "move", "id": entry["id"], "path": entry["path"],
                                 "why": exc.message})
    return plan


def _merge(files: _Files, plan: Plan, group: dict, now: str, merged_away: set[str]) -> None:
    keeper = next(c for c in group["cards"] if c["keeper"])
    if not group["mergeable"]:
        plan.skipped.append({"step": "merge", "keeper": keeper["id"], "path": keeper["path"],
                             "source": keeper["source"],
                             "why": "the keeper is in a read-only source: reported only"})
        return
    others = [c for c in group["cards"] if c["merge"]]
    for card in group["cards"]:
        if not card["keeper"] and not card["merge"]:
            why = ("read or marked helpful often: it can only be a keeper" if card.get("protected")
                   else "in a read-only source: never changed")
            plan.skipped.append({"step": "merge", "id": card["id"], "path": card["path"],
                                 "source": card["source"], "why": why})
    if not others:
        return
    k_text, k_card = files.card(keeper["path"], keeper["chars"])
    chain: list[tuple[dict, str, Card]] = []
    for card in sorted(others, key=lambda c: -(c["similarity"] or 0)):
        got = files.text(card["path"])
        if got is None:
            plan.skipped.append({"step": "merge", "id": card["id"], "path": card["path"],
                                 "why": _gone(card["path"])})
            continue
        text, parsed = got
        if _emptied(parsed, card["chars"]):
            plan.skipped.append({"step": "merge", "id": card["id"], "path": card["path"],
                                 "why": emptied_why(card["path"])})
            continue
        if parsed.supersedes or parsed.superseded_by or parsed.invalid_at:
            plan.skipped.append({"step": "merge", "id": card["id"], "path": card["path"],
                                 "why": "it has a supersede history of its own: merge it by hand"})
            continue
        chain.append((card, text, parsed))
    if not chain:
        return
    older = k_card.supersedes  # the keeper's own history hangs below the merged cards
    older_loaded = files.text(older) if older else None
    if older and (older_loaded is None or older_loaded[1].superseded_by != keeper["path"]):
        plan.skipped.append({"step": "merge", "keeper": keeper["id"],
                             "why": f"the keeper's supersede chain ({older}) does not agree: "
                                    "run `memsync doctor`"})
        return
    additions: list[str] = []
    body = k_card.body
    for _card, _text, parsed in chain:
        found = sentences.missing(sentences.merged_body(body, additions), parsed.body)
        additions += found
    new_body = sentences.merged_body(k_card.body, additions)
    k_new = fe.set_keys(k_text, {"supersedes": fe.scalar(chain[0][0]["path"]), "updated": now})
    expect = {"supersedes": chain[0][0]["path"], "updated": dates.normalize(now)}
    if additions:
        k_new = fe.set_body(k_new, new_body)
        expect["body"] = new_body
    files.edit(keeper["path"], k_new, k_card, expect)
    above = keeper["path"]
    for n, (card, text, parsed) in enumerate(chain):
        below = chain[n + 1][0]["path"] if n + 1 < len(chain) else older
        keys: dict[str, str | None] = {"invalid_at": now, "superseded_by": fe.scalar(above)}
        want = {"invalid_at": dates.normalize(now), "superseded_by": above}
        if below:
            keys["supersedes"], want["supersedes"] = fe.scalar(below), below
        files.edit(card["path"], fe.set_keys(text, keys), parsed, want)
        merged_away.add(card["path"])
        above = card["path"]
    if older and older_loaded is not None:
        text, parsed = older_loaded
        files.edit(older, fe.set_keys(text, {"superseded_by": fe.scalar(above)}), parsed,
                   {"superseded_by": above})
    plan.merges.append({
        "keeper": keeper["id"], "path": keeper["path"], "why": group["why"],
        "similarity": group["similarity"],
        "merged": [{"id": c["id"], "path": c["path"], "similarity": c["similarity"]} for c, _, _ in chain],
        "sentences_added": additions, "touches": sorted(files.touched),
    })


def _summarize(files: _Files, plan: Plan, entry: dict) -> None:
    text, card = files.card(entry["path"], entry["chars"])
    line = sentences.summary(card.body)
    if not line or card.summary:
        return
    files.edit(entry["path"], fe.set_keys(text, {"summary": fe.scalar(line),
                                                 "summary_generated": "true"}),
               card, {"summary": line})
    plan.summaries.append({"id": entry["id"], "path": entry["path"], "summary": line,
                           "touches": [entry["path"]]})


def _move(files: _Files, plan: Plan, entry: dict, destinations: set[str]) -> None:
    rel, to = entry["path"], entry["to"]
    had_text = False
    if rel in plan.changes or rel in plan.let_go:  # its new text was read back whole: it is there
        why: str | None = "changed by another step of this run: it moves on the next one"
    else:
        loaded = files.card(rel, entry.get("chars", 0))
        why, had_text = None, bool(loaded[1].body.strip())
        if loaded[1].supersedes or loaded[1].superseded_by:
            why = "other cards point at its path (supersede): move it by hand"
        elif vaultio.read_bytes(vaultio.inside(files.vault, to)) is not None or to in destinations:
            why = f"{to} is taken"
        else:
            why = access.unwritable(files.vault, rel, to, files.writable)
    if why:
        plan.skipped.append({"step": "move", "id": entry["id"], "path": rel, "why": why})
        return
    data = files.original(rel)
    assert data is not None
    plan.changes[rel] = FileChange(rel, data, data, to=to, had_text=had_text)
    destinations.add(to)
    plan.moves.append({"id": entry["id"], "from": rel, "to": to, "kind": entry["kind"], "touches": [rel]})
