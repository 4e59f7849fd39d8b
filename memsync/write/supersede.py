"""Supersede: write the new card and mark the old one invalid, both or neither.

Two files change, so the work is journaled (memsync.write.journal): the plan, naming the new file
before it can exist, is on disk before the first write and removed after the last. If the
process dies in between, `recover()` (run first by every write command, and by the watcher at
start) finishes the job when it can and rolls it back when it cannot. Supersede and recovery
hold the home's write lock (journal.writing), so two cannot both claim the same old card.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from pathlib import Path

from memsync import dates, notes, secrets, session
from memsync.config import Config
from memsync.errors import MemsyncError, NotFound, Rejected, refuse_blank
from memsync.model import KIND_FOLDERS
from memsync.model.indexing import Card
from memsync.sync import MAX_FILE_BYTES
from memsync.write import atomic, journal, rules, vaultio
from memsync.write import frontmatter_edit as fe
from memsync.write.cardtext import new_card_problem, render, verify_edit


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


# Keys the new card gets from the supersede itself, never from the old card: its name, its own
# dates, the pair's pointers, and the summary, which sums up the old fact. Every other key of the
# old card (tags, priority, ttl, aliases, source, keys memsync does not know) carries over as
# written unless the supersede gives it, so filters that found the old card find the new one.
OWN_KEYS = frozenset({"title", "kind", "tags", "created", "updated", "invalid_at",
                      "superseded_by", "supersedes", "summary"})


def supersede(cfg: Config, old_id: int, title: str, body: str, kind: str | None = None,
              tags=None, priority: str | None = None, ttl: str | None = None,
              summary: str | None = None) -> dict:
    """Write the new card and mark the old one invalid, both or neither (journaled). tags,
    priority and ttl not given (None) are the old card's; '' or [] clears them. The summary is
    never the old card's (it summed up the old fact)."""
    title, body = rules.clean_title(title), rules.clean_body(body)
    tags = None if tags is None else rules.clean_tags(tags)
    summary = rules.clean_summary(summary)
    given = {key: " ".join(str(value).split()) for key, value in (("priority", priority), ("ttl", ttl))
             if value is not None}
    refuse_blank("kind", kind, f"leave it out to keep the old card's kind, or name one of: {rules.KINDS_SAID}")
    if kind is not None:
        rules.check_kind(kind)
    vault = vaultio.root(cfg)
    recovered = recover(cfg)
    problem = rules.body_problem(body)
    if problem:
        return vaultio.rejected(problem)
    # Under the write lock, as every write of an existing card: two supersedes at once could
    # both find the old card valid and both mark it, and an update could write the old card
    # back without its mark.
    with journal.writing(cfg.home.path), session.open_index(cfg) as index:
        row = index.card(old_id)
        vaultio.writable(row, cfg=cfg)
        result = _supersede_locked(cfg, index, vault, row, title, body, kind, tags, given, summary)
        if result["status"] == "rejected":
            return result
        result.update(vaultio.secret_fields(result.pop("findings")))
        long_body = rules.long_body_warning(body, summary, cfg.lifecycle.summary_threshold)
        if long_body:
            result["warnings"] = [*result.get("warnings", []), long_body]
        if recovered:
            result["recovered"] = recovered
        return vaultio.finish(cfg, index, result, [result["old_path"], result["path"]], [])


def no_longer_valid(index, card: Card) -> tuple[str, int | None]:
    """What a refusal says of a card already superseded (or marked invalid), and the id of the
    card of its chain to act on instead: the newest one the index knows, since superseding an
    old version is refused (None: the index knows none)."""
    if not card.superseded_by:
        return f"is no longer valid (invalid since {card.invalid_at})", None
    said = f"was already superseded by {card.superseded_by}"
    newest, seen = card.superseded_by, set()
    while newest not in seen:  # a loop of pointers ends the walk
        seen.add(newest)
        row = vaultio.card_row(index, newest)
        if row is None:  # a pointer to a card the index does not hold
            return said, None
        if not row["superseded_by"]:
            break
        newest = row["superseded_by"]
    if row["superseded_by"] or row["invalid_at"]:  # the chain ends in no valid card
        return said, None
    if newest != card.superseded_by:
        said += f", whose newest version is {newest}"
    return said + f" (id {row['id']})", row["id"]


def carried_over(old_text: str, old: Card, kind: str | None, tags: list[str] | None,
                 given: dict[str, str]) -> tuple[list[str], str, list[str]]:
    """(the new card's tags, the frontmatter lines it takes from the old card, the names of the
    keys taken). Pure. A given value ('' clears) replaces the old card's."""
    inherited = []
    if tags is None:
        tags = list(old.tags)
        if tags:
            inherited.append("tags")
    lines = []
    for key, block in fe.key_blocks(old_text):
        if key in OWN_KEYS or key in given or (key == "kind" and kind):
            continue
        lines.append(block)
        if key not in inherited:
            inherited.append(key)
    lines += [f"{key}: {fe.number_or_scalar(value)}\n" for key, value in given.items() if value]
    return tags, "".join(lines), inherited


def _expected(old: Card, inherited: list[str], given: dict[str, str]) -> dict:
    expect: dict[str, object] = {key: getattr(old, key) for key in ("priority", "ttl", "aliases")
                                 if key in inherited}
    expect.update({key: value or None for key, value in given.items()})
    return expect


def _supersede_locked(cfg, index, vault: Path, row, title, body, kind, tags, given,
                      summary: str | None = None) -> dict:
    old_id, old_rel = row["id"], row["path"]
    data = vaultio.read_bytes(vaultio.inside(vault, old_rel))
    if data is None:
        vaultio.sync(cfg, index, [old_rel], [])
        raise NotFound(f"card {old_id} ({old_rel}) is no longer on disk; the index is now updated")
    vaultio.refuse_read_only(vaultio.inside(vault, old_rel), old_rel)  # before the new card is written
    old_text, old = vaultio.editable_text(data, old_rel)
    if old.invalid_at or old.superseded_by:
        raise Rejected(f"card {old_id} {no_longer_valid(index, old)[0]}; supersede the newest "
                       "version instead, so the history stays one chain")
    tags, extra, inherited = carried_over(old_text, old, kind, tags, given)
    kind = kind or old.kind
    rel_dir = KIND_FOLDERS[kind] if kind in KIND_FOLDERS else posixpath.dirname(old_rel)
    when = dates.now_iso()
    new_data = render(title, kind, tags, when, body, supersedes=old_rel, summary=summary,
                          extra=extra).encode("utf-8")
    expect = {"title": title, "kind": kind, "tags": tuple(tags), "supersedes": old_rel,
              "summary": summary,
              **_expected(old, inherited, given)}
    if not _reads_as(new_data, expect):
        # The old frontmatter holds something that does not survive being moved (a YAML
        # anchor used by another key, say): carry the fields memsync knows, rendered anew.
        extra = "".join(f"{key}: {fe.number_or_scalar(value)}\n" for key, value in
                        {**{k: getattr(old, k) for k in ("priority", "ttl") if getattr(old, k)},
                         **given}.items() if value)
        inherited = [k for k in inherited if k == "tags" or (k in ("priority", "ttl") and k not in given)]
        new_data = render(title, kind, tags, when, body, supersedes=old_rel, summary=summary,
                          extra=extra).encode("utf-8")
    problem = new_card_problem(body, new_data, MAX_FILE_BYTES)
    if problem:
        return vaultio.rejected(problem)
    findings = secrets.scan(title, body)
    entry = journal.Entry(cfg.home.path, {
        "op": "supersede", "vault": str(vault), "old": old_rel, "new": None,
        "new_hash": _digest(new_data), "invalid_at": when,
    })
    try:
        new_rel = _place_journaled(vault, rel_dir, rules.slug(title), new_data, entry, bool(findings))
        _mark(vault, old_rel, new_rel, when)
    except BaseException:
        _abandon(vault, entry)
        raise
    entry.finish()
    result = {"status": "superseded", "id": None, "path": new_rel, "old_id": old_id,
              "old_path": old_rel, "invalid_at": when, "findings": findings}
    others = [rel for rel, _ in vaultio.same_titled(index, vault, title) if rel not in (old_rel, new_rel)]
    if others:  # the new fact stands beside a valid card of the same title: say so, as capture does
        result.update(conflict=True, existing_path=others[0], collision_paths=others, note=(
            f"{len(others)} other valid card(s) have this title too ({', '.join(others)}); if the "
            "new fact replaces one of them as well, supersede or delete that one, or give this card "
            "a title of its own with `memsync update`"))
    if inherited:
        result["inherited"] = inherited
    return result


def _reads_as(data: bytes, expect: dict) -> bool:
    card = notes.parse(data, "new.md")
    return card.problem is None and all(getattr(card, key) == value for key, value in expect.items())


def _place_journaled(vault, rel_dir, stem, data, entry, secret: bool) -> str:
    """place_new, but the journal names each candidate before the link that may create it,
    so a recovery always knows which file a dead supersede may have left."""
    tried = [1]
    entry.update(new=posixpath.join(rel_dir, rules.numbered(stem, 1)))

    def taken(_rel: str):  # called once per taken name, in order: name the next candidate
        tried[0] += 1
        entry.update(new=posixpath.join(rel_dir, rules.numbered(stem, tried[0])))
        return None

    rel, _ = vaultio.place_new(vault, rel_dir, stem, data, taken, secret)
    assert rel is not None  # taken() never stops the search
    return rel


def _mark(vault: Path, old_rel: str, new_rel: str, when: str) -> None:
    """Add invalid_at / superseded_by to the old card; every other byte stays."""
    full = vaultio.inside(vault, old_rel)
    data = vaultio.read_bytes(full)
    if data is None:
        raise NotFound(f"{old_rel} disappeared while it was being superseded; nothing was kept")
    text, before = vaultio.editable_text(data, old_rel)
    new_text = fe.set_keys(text, {"invalid_at": when, "superseded_by": fe.scalar(new_rel)})
    verify_edit(new_text, before, {"invalid_at": dates.normalize(when), "superseded_by": new_rel})
    try:
        atomic.replace(full, new_text.encode("utf-8"))
    except OSError as exc:
        raise vaultio.failed(old_rel, exc) from None


def _abandon(vault: Path, entry: journal.Entry) -> None:
    """Undo a supersede that failed in this process; if even that fails, leave the journal."""
    try:
        _roll_back(vault, entry.data)
    except (OSError, Rejected, NotFound):
        entry.release()
        return
    entry.finish()


def _ours(vault: Path, plan: dict) -> bool:
    if not plan.get("new"):
        return False
    data = vaultio.read_bytes(vaultio.inside(vault, plan["new"]))
    return data is not None and _digest(data) == plan["new_hash"]


def _roll_back(vault: Path, plan: dict) -> str:
    if _ours(vault, plan):
        os.unlink(vaultio.inside(vault, plan["new"]))
        return "rolled back"
    return "nothing to undo"


# --- recovery ---------------------------------------------------------------------------------

def recover(cfg: Config) -> list[dict]:
    """Finish or roll back supersedes whose process died midway; returns what was done.

    The new card exists and the old one is unmarked → mark it (finish). The old card is gone
    or was marked by something else → remove the new card if it is still byte-for-byte ours
    (roll back). Safe to call at any time, from any process, but not while holding the write
    lock (it takes that lock itself when it has work to do)."""
    vault = vaultio.root(cfg)
    done: list[dict] = []

    def handle(plan: dict) -> bool:
        if plan.get("op") != "supersede" or plan.get("vault") != str(vault):
            return False
        report = {"op": "supersede", "old": plan.get("old"), "new": plan.get("new")}
        try:
            with journal.writing(cfg.home.path):  # marking the old card is a write like any other
                report["action"] = _replay(cfg, vault, plan)
        except (MemsyncError, OSError, KeyError) as exc:
            # Never let an old failure block today's write: keep the plan and say so.
            report["action"] = f"left for later ({getattr(exc, 'message', exc)})"
            done.append(report)
            return False
        done.append(report)
        return True

    journal.replay(cfg.home.path, handle)
    from memsync.write import runs, trash  # a run (memsync consolidate), a move, likewise

    return done + runs.recover(cfg) + trash.recover_moves(cfg)


def _replay(cfg: Config, vault: Path, plan: dict) -> str:
    old_rel, new_rel = plan["old"], plan.get("new") or ""
    new_card = vaultio.read_card(vault, new_rel) if new_rel else None
    if new_card is None or new_card.supersedes != old_rel:
        return "nothing to undo"
    old = vaultio.read_card(vault, old_rel)
    if old is not None and old.superseded_by == new_rel:
        action = "already complete"
    else:
        try:
            if old is None or old.invalid_at or old.problem:
                raise Rejected(f"{old_rel} is gone or was changed meanwhile")
            _mark(vault, old_rel, new_rel, plan["invalid_at"])
            action = "finished"
        except (Rejected, NotFound):
            action = _roll_back(vault, plan)
    warnings: list[str] = []
    with vaultio.index_or_none(cfg, warnings) as index:
        if index is not None:
            vaultio.sync(cfg, index, [old_rel, new_rel], warnings)
    return action
