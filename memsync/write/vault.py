"""The vault's write side: capture, update, supersede, delete, restore, purge.

Used by the CLI and the MCP server alike, so both doors give the same results. Each operation
writes Markdown first (atomically), then asks the indexer to sync exactly the files it touched;
nothing here writes index rows. Every function returns the write-result dict of DESIGN §8 with
only the fields that apply. A refusal by a rule comes back as status "rejected" or "conflict"
with a note saying what to do, and nothing written; malformed arguments raise MemsyncError.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from memsync import dates, secrets, session
from memsync.config import Config
from memsync.errors import BadArgument, NotFound, Rejected, WriteFailed, refuse_blank
from memsync.model import KIND_FOLDERS
from memsync.model.indexing import Card
from memsync.sync import MAX_FILE_BYTES
from memsync.write import atomic, journal, modes, rules, trash, vaultio
from memsync.write import frontmatter_edit as fe
from memsync.write.cardtext import new_card_problem, render, size_problem, verify_edit
from memsync.write.supersede import no_longer_valid, recover, supersede

DEFAULT_KIND = "knowledge"
ON_CONFLICT = ("suffix", "reject")


def exit_code_for(result: dict) -> int:
    """The CLI exit status of a write result (the MCP server turns non-zero into a tool error)."""
    return {"rejected": 1, "conflict": 3}.get(str(result.get("status")), 0)


# --- capture ----------------------------------------------------------------------------------

def capture(cfg: Config, title: str, body: str, kind: str | None = None,
            tags: list[str] | None = None, on_conflict: str = "suffix",
            reject_secrets: bool = False, summary: str | None = None) -> dict:
    """Write a new card (and index it). See DESIGN §5 for each outcome."""
    if on_conflict not in ON_CONFLICT:
        raise BadArgument(f"on_conflict must be 'suffix' or 'reject', not {on_conflict!r}")
    title, body, tags = rules.clean_title(title), rules.clean_body(body), rules.clean_tags(tags)
    summary = rules.clean_summary(summary)
    refuse_blank("kind", kind, f"leave it out for a {DEFAULT_KIND} card, or name one of: {rules.KINDS_SAID}")
    kind = rules.check_kind(DEFAULT_KIND if kind is None else kind)
    vault = vaultio.root(cfg)
    recovered = recover(cfg)
    when = dates.now_iso()
    data = render(title, kind, tags, when, body, summary=summary).encode("utf-8")
    problem = new_card_problem(body, data, MAX_FILE_BYTES)
    if problem:
        return vaultio.rejected(problem)
    findings = secrets.scan(title, body)
    if findings and reject_secrets:
        return vaultio.rejected(
            "it looks like it holds credentials (see warnings); remove the secret and store a "
            "pointer to where it lives instead, or capture again without rejecting secrets if "
            "it is meant to be kept",
            **vaultio.secret_fields(findings, written=False),
        )
    long_body = rules.long_body_warning(body, summary, cfg.lifecycle.summary_threshold)
    warnings: list[str] = [long_body] if long_body else []
    with vaultio.index_or_none(cfg, warnings) as index:
        collisions: list[str] = []
        for rel, card in vaultio.same_titled(index, vault, title):
            if card.body == body:
                return _unchanged(cfg, index, rel, warnings)
            collisions.append(rel)
        if collisions and on_conflict == "reject":
            return _conflict(title, collisions)

        def taken(rel: str):
            occupant = vaultio.read_card(vault, rel)
            if occupant is None or occupant.invalid_at or not rules.same_title(occupant.title, title):
                return None
            if occupant.body == body:  # a twin written a moment ago by another process
                return _unchanged(cfg, index, rel, warnings)
            if rel not in collisions:
                collisions.append(rel)
            return _conflict(title, collisions) if on_conflict == "reject" else None

        placed, stopped = vaultio.place_new(vault, KIND_FOLDERS[kind], rules.slug(title), data, taken,
                                            secret=bool(findings))
        if placed is None:
            return stopped
        rel = placed
        result: dict = {"status": "created", "id": None, "path": rel, "conflict": bool(collisions)}
        if collisions:
            collisions = sorted(collisions, key=vaultio.natural_order)
            result["existing_path"] = collisions[0]
            result["collision_paths"] = collisions
            # a taken title in another folder leaves the name as it is: "saved as" the same
            # name would read as if nothing had been done about the conflict
            renamed = posixpath.basename(rel) != f"{rules.slug(title)}.md"
            saved = (f", so this one was saved as {posixpath.basename(rel)}" if renamed
                     else f"; this one was saved as {rel}, under the same name in another folder")
            result["note"] = (
                f"{len(collisions)} other card(s) already have this title{saved}. If it corrects "
                "one of them, use `memsync update`; "
                "if the fact changed, `memsync supersede`; then delete the extra card"
            )
        result.update(vaultio.secret_fields(findings))
        if recovered:
            result["recovered"] = recovered
        return vaultio.finish(cfg, index, result, [rel], warnings)


def _unchanged(cfg, index, rel: str, warnings: list[str]) -> dict:
    card_id = vaultio.card_id(index, rel)
    if card_id is None and index is not None:  # on disk but not indexed yet
        vaultio.sync(cfg, index, [rel], warnings)
        card_id = vaultio.card_id(index, rel)
    result: dict = {"status": "unchanged", "id": card_id, "path": rel, "indexed": None,
              "note": "a card with this title and body already exists; nothing was written"}
    if warnings:
        result["warnings"] = warnings
    return result


def _conflict(title: str, collisions: list[str]) -> dict:
    collisions = sorted(collisions, key=vaultio.natural_order)
    return {
        "status": "conflict", "indexed": None, "conflict": True,
        "existing_path": collisions[0], "collision_paths": collisions,
        "note": (
            f"a card titled {title!r} already exists ({collisions[0]}); nothing was written. "
            "To correct it use `memsync update`, if the fact changed use `memsync supersede`, "
            "or capture with --on-conflict suffix to keep both"
        ),
    }


# --- update -----------------------------------------------------------------------------------

_KIND_ADVICE = (
    "the kind decides the card's folder, so changing it would move the file; instead use "
    "`memsync supersede {id} --kind {kind} ...` to write the card under its new kind, then "
    "`memsync delete {id}` if the old one should go"
)


def _kind_advice(index, card_id: int, kind: str, current: Card) -> str:
    """_KIND_ADVICE for this card; for one already superseded (which supersede refuses), for
    the newest card of its chain, or where there is none, that the old card is out of use."""
    if not (current.superseded_by or current.invalid_at):
        return _KIND_ADVICE.format(id=card_id, kind=kind)
    said, newest = no_longer_valid(index, current)
    if newest is None:
        return (f"card {card_id} {said}, so it is not the card to change; capture the fact anew "
                f"with --kind {kind} if it still holds")
    return (f"card {card_id} {said}: to give the current version the new kind, use "
            f"`memsync supersede {newest} --kind {kind} ...` (the kind decides a card's folder, "
            "so an update cannot change it)")


def update(cfg: Config, card_id: int, *, title=None, body=None, tags=None, priority=None,
           ttl=None, kind=None, summary=None) -> dict:
    """Correct a card in place: only the given fields change, every other byte stays."""
    refuse_blank("kind", kind, f"leave it out: an update keeps a card's kind, and `memsync supersede "
                               f"{card_id} --kind KIND ...` writes the card under another")
    if all(given is None for given in (title, body, tags, priority, ttl, kind, summary)):
        raise BadArgument(
            f"nothing to change was given for card {card_id}; give at least one of "
            "title, body, tags, priority, ttl, summary"
        )
    vault = vaultio.root(cfg)
    recovered = recover(cfg)
    # The card is looked up and read only once no other write holds it: a delete, supersede
    # or update that went first is seen, never written back over.
    with journal.writing(cfg.home.path), session.open_index(cfg) as index:
        result = _update_locked(cfg, index, vault, card_id, title, body, tags, priority, ttl, kind,
                                summary)
        if result["status"] != "updated":
            return result
        if recovered:
            result["recovered"] = recovered
        return vaultio.finish(cfg, index, result, [result["path"]], [])


def _update_locked(cfg, index, vault: Path, card_id: int, title, body, tags, priority, ttl,
                   kind, summary=None) -> dict:
    row = index.card(card_id)
    vaultio.writable(row, cfg=cfg)
    rel = row["path"]
    full = vaultio.inside(vault, rel)
    for _attempt in range(3):  # an editor may save the file while we work on it
        data = vaultio.read_bytes(full)
        if data is None:
            vaultio.sync(cfg, index, [rel], [])
            raise NotFound(f"card {card_id} ({rel}) is no longer on disk; the index is now updated")
        text, current = vaultio.editable_text(data, rel)
        if kind is not None and kind != current.kind:
            rules.check_kind(kind)  # an unknown one would be refused by the supersede advised
            raise Rejected(f"refusing to change kind of card {card_id}: "
                           + _kind_advice(index, card_id, kind, current))
        wanted = _wanted(current, title, tags, priority, ttl, summary)
        new_body = None if body is None else rules.clean_body(body)
        if new_body is not None:
            problem = rules.body_problem(new_body)
            if problem:
                return vaultio.rejected(problem, id=card_id, path=rel)
            if new_body == rules.clean_body(current.body):
                new_body = None
        changed = list(wanted) + (["body"] if new_body is not None else [])
        if not changed:
            return {"status": "unchanged", "id": card_id, "path": rel, "changed": [],
                    "indexed": None, "note": "the given values equal the current ones; nothing was written"}
        when = dates.now_iso()
        edits = {key: rendered for key, (_value, rendered) in wanted.items()}
        edits["updated"] = when
        if "summary" in wanted:  # a summary given (or cleared) by hand is no generated one
            edits["summary_generated"] = None
        new_text = fe.set_keys(text, edits)
        if new_body is not None:
            new_text = fe.set_body(new_text, new_body)
        new_data = new_text.encode("utf-8")
        problem = size_problem(new_data, MAX_FILE_BYTES)
        if problem:
            return vaultio.rejected(problem, id=card_id, path=rel)
        expect = {key: value for key, (value, _r) in wanted.items()}
        expect.update(updated=dates.normalize(when))
        if new_body is not None:
            expect["body"] = new_body
        verify_edit(new_text, current, expect)
        findings = secrets.scan(title if "title" in changed else "", new_body or "")
        if vaultio.read_bytes(full) != data:
            continue
        vaultio.refuse_read_only(full, rel)
        try:
            atomic.replace(full, new_data, modes.SECRET_MODE if findings else None)
        except OSError as exc:
            raise vaultio.failed(rel, exc) from None
        break
    else:
        raise WriteFailed(f"{rel} kept changing while we tried to update it; try again")
    result = {"status": "updated", "id": card_id, "path": rel, "changed": changed}
    result.update(vaultio.secret_fields(findings))
    if new_body is not None or "summary" in wanted:  # as capture warns: the body is long, unsummed
        summary_now = wanted["summary"][0] if "summary" in wanted else current.summary
        long_body = rules.long_body_warning(current.body if new_body is None else new_body, summary_now,
                                            cfg.lifecycle.summary_threshold)
        if long_body:
            result["warnings"] = [*result.get("warnings", []), long_body]
    note = _name_note(rel, wanted)
    if note:
        result["note"] = note
    return result


def _wanted(current: Card, title, tags, priority, ttl, summary=None) -> dict[str, tuple]:
    """field -> (value as a later read gives it back, rendered YAML or None to drop the key)."""
    wanted: dict[str, tuple] = {}
    if title is not None:
        value = rules.clean_title(title)
        if value != current.title:
            wanted["title"] = (value, fe.scalar(value))
    if tags is not None:
        tag_list = tuple(rules.clean_tags(tags))
        if tag_list != current.tags:
            wanted["tags"] = (tag_list, fe.flow_list(tag_list))
    if summary is not None:
        summary_text = rules.clean_summary(summary)  # "" clears it
        if summary_text != current.summary:
            wanted["summary"] = (summary_text, None if summary_text is None else fe.scalar(summary_text))
    for key, given in (("priority", priority), ("ttl", ttl)):
        if given is None:
            continue
        text = " ".join(str(given).split()) or None  # "" clears the field
        if text != getattr(current, key):
            wanted[key] = (text, None if text is None else fe.number_or_scalar(text))
    return wanted


def _name_note(rel: str, wanted: dict) -> str | None:
    if "title" not in wanted:
        return None
    stem = posixpath.splitext(posixpath.basename(rel))[0]
    new_stem = rules.slug(wanted["title"][0])
    if stem == new_stem or (stem.startswith(new_stem + "-") and stem[len(new_stem) + 1:].isdigit()):
        return None
    return (
        f"the file keeps its name {posixpath.basename(rel)}, which no longer matches the title: "
        "ids, supersede links and read counts are anchored to the path, so update never renames"
    )


# --- the trash (soft delete, restore, purge); recovery runs first, as for every write -------

def delete(cfg: Config, card_id: int) -> dict:
    """Soft delete: move the card to `.trash/<path>` and drop it from the index (stats kept)."""
    return _recovered(recover(cfg), trash.delete(cfg, card_id))


def restore(cfg: Config, trash_path: str, force: bool = False) -> dict:
    """Move a trashed file back; refuses to replace a card unless `force` (which trashes it)."""
    return _recovered(recover(cfg), trash.restore(cfg, trash_path, force))


def purge(cfg: Config, trash_path: str) -> dict:
    """Delete one file in the trash for good and clear its read stats."""
    return _recovered(recover(cfg), trash.purge(cfg, trash_path))


def purge_all(cfg: Config) -> dict:
    """Empty the trash for good."""
    return _recovered(recover(cfg), trash.purge_all(cfg))


def _recovered(done: list[dict], result: dict) -> dict:
    if done:
        result["recovered"] = done
    return result


__all__ = [
    "capture", "update", "supersede", "delete", "restore", "purge", "purge_all", "recover",
    "exit_code_for", "render",
]
