"""Soft delete, restore and purge (DESIGN §5). Use them through memsync.write.vault.

A deleted card moves to `<vault>/.trash/<its path>`, keeping the folder structure, so restoring
needs no other record (and Obsidian's own delete lands in the same folder). The index drops it,
but its id and read stats go with it into the trash: a restore brings both back, and a new
card written at the old path meanwhile gets an id of its own. Only a purge, which acts on
nothing outside the trash, removes a file for good and clears its stats. The trash is never
emptied automatically. Each operation holds the home's write lock (journal.writing) while it
looks at the files and moves them.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shlex
from pathlib import Path

from memsync import session
from memsync.config import Config
from memsync.errors import BadArgument, BadEnvironment, NotFound, PathOutsideVault
from memsync.model import TRASH
from memsync.store.connection import DB_ERRORS
from memsync.write import journal, moves, trashnames, trashsize, vaultio
from memsync.write.vaultio import VAULT


def delete(cfg: Config, card_id: int) -> dict:
    vault = vaultio.root(cfg)
    warnings: list[str] = []
    with journal.writing(cfg.home.path), session.open_index(cfg) as index:
        row = index.card(card_id)
        vaultio.writable(row, deleting=True)
        rel = row["path"]
        if not os.path.lexists(vaultio.inside(vault, rel)):
            vaultio.sync(cfg, index, [rel], [])
            raise NotFound(f"card {card_id} ({rel}) is already gone from disk; the index is now updated")
        card = vaultio.read_card(vault, rel)
        trash_rel = vaultio.move_to_trash(cfg.home.path, vault, rel)
        result = {
            "status": "deleted", "id": card_id, "path": rel, "trash_path": trash_rel,
            "note": f"moved to {trash_rel}; undo with `memsync delete --restore {shlex.quote(trash_rel)}`",
        }
        if card is not None:
            warnings += _pair_warnings(index, vault, card, trash_rel)
        _park(cfg, index, rel, trash_rel, warnings)
        vaultio.finish(cfg, index, result, [rel], warnings)
    reminder = trashsize.reminder(vault)
    if reminder:
        result["reminder"] = reminder
    return result


def _pair_warnings(index, vault: Path, card, trash_rel: str) -> list[str]:
    """What deleting one card of a supersede pair does to the other, said before it surprises."""
    undo = shlex.quote(trash_rel)
    older, newer = _partner(index, vault, card.supersedes, "superseded_by", card.path), \
        _partner(index, vault, card.superseded_by, "supersedes", card.path)
    out = []
    if older:
        out.append(
            f"this card superseded {older}, which stays marked invalid, so the fact now leaves "
            f"search (only --include-invalid or --as-of find it); undo with `memsync delete "
            f"--restore {undo}`, or make {card.supersedes} valid again with `memsync doctor --fix-pairs`")
    if newer:
        out.append(
            f"this card was superseded by {newer}, which stays valid and keeps its "
            f"`supersedes: {card.path}`, so `memsync doctor` reports the history as gone; "
            f"`memsync delete --restore {undo}` brings it back, `memsync doctor --fix-pairs` "
            f"drops the pointer")
    return out


def _partner(index, vault: Path, rel: str | None, back: str, path: str) -> str | None:
    """The other card of a pair, named with its id, when its `back` pointer names `path`."""
    if not rel or not (other := vaultio.read_card(vault, rel)) or getattr(other, back) != path:
        return None
    other_id = vaultio.card_id(index, rel)
    return f"{rel} (id {other_id})" if other_id else rel


def restore(cfg: Config, trash_path: str, force: bool = False) -> dict:
    vault = vaultio.root(cfg)
    rel = vaultio.trash_rel(vault, trash_path)
    source = vaultio.inside(vault, rel)
    warnings: list[str] = []
    notes: list[str] = []
    if rel == trashnames.RECORD_REL:
        raise BadArgument(f"{rel} is the trash's record of the names its copies had, not a card; "
                          "restore the copies it names")
    with journal.writing(cfg.home.path), vaultio.index_or_none(cfg, warnings) as index:
        if os.path.islink(source):
            raise BadArgument(f"{rel} is a symbolic link; only files are restored")
        if not os.path.isfile(source):
            _refuse_hidden(source, rel, "restore")
            raise NotFound(f"nothing at {rel}; {_where_to_look(vault, rel)}")
        target_rel = _original_path(vault, index, rel)
        named = _recorded_name(vault, rel)
        if named:
            at_name = vaultio.inside(vault, named)
            # --force means what it means for any restore: the card goes back to its own name
            # and the file there moves to the trash first (a folder cannot: the trash name then)
            if not os.path.lexists(at_name) or (force and not _folder(at_name)):
                target_rel = named
            else:
                hint = "" if force or _folder(at_name) else \
                    f" (--force puts it back as {named}, moving that file to the trash first)"
                notes.append(f"{named}, its name before the trash, is taken: put back as {target_rel}{hint}")
                if not force and os.path.lexists(vaultio.inside(vault, target_rel)):
                    return _occupied(named)  # the file --force would move is the one at its name
        if target_rel != rel[len(TRASH) + 1:]:
            notes.append(f"put back at {target_rel}, where the card was before it went to the trash")
        target = vaultio.inside(vault, target_rel)
        if os.path.lexists(target):
            if not force:
                return _occupied(target_rel)
            if _folder(target):
                raise BadArgument(f"a folder named {target_rel} is in the way; move it first")
            moved = vaultio.move_to_trash(cfg.home.path, vault, target_rel)
            _park(cfg, index, target_rel, moved, warnings)
            notes.append(f"the file that was at {target_rel} was moved to {moved} first")
        vaultio.folder(vault, posixpath.dirname(target_rel))
        _retire_namesake(cfg, index, vault, rel, target_rel, warnings)
        # The id goes back before the file does: a watcher that indexes the restored file at
        # once must find its id waiting at the path, not hand out a new one.
        rebound = _unpark(cfg, index, rel, target_rel, warnings)
        try:
            placed = moves.move(cfg.home.path, vault, rel, target_rel)
        except OSError as exc:
            if rebound:
                _unpark(cfg, index, target_rel, rel, warnings)
            raise vaultio.failed(target_rel, exc) from None
        if not placed:  # someone wrote a file there a moment ago
            if rebound:
                _unpark(cfg, index, target_rel, rel, warnings)
            return _occupied(target_rel)
        trashnames.forget(vault, [rel])
        vaultio.prune_empty(vault, posixpath.dirname(rel), TRASH)
        result = {"status": "restored", "id": None, "path": target_rel, "trash_path": rel}
        if notes:
            result["note"] = "; ".join(notes)
        return vaultio.finish(cfg, index, result, [target_rel], warnings)


def _folder(path: Path) -> bool:
    """A real folder (a link to one is a file that can go to the trash)."""
    return os.path.isdir(path) and not os.path.islink(path)


def _recorded_name(vault: Path, rel: str) -> str | None:
    """The name the trash's record gives a numbered copy, when it is a place in the vault: a
    record damaged or edited to lead elsewhere costs the name only, never the restore."""
    named = trashnames.original(vault, rel)
    if named is None:
        return None
    try:
        vaultio.inside(vault, named)
    except PathOutsideVault:
        return None
    return named


# --- ids in the trash -------------------------------------------------------------------------

def _park(cfg: Config, index, rel: str, trash_rel: str, warnings: list[str]) -> None:
    """A card moved into the trash takes its id and read stats along, so a restore brings them
    back and a new card at the old path gets an id of its own."""
    if index is None:
        return
    try:
        session.indexer(cfg, index).park(VAULT, rel, trash_rel)
    except DB_ERRORS as exc:
        warnings.append(f"moved to the trash, but the index could not be updated ({exc}); "
                        "run `memsync index`")


def _unpark(cfg: Config, index, trash_rel: str, rel: str, warnings: list[str]) -> bool:
    """A restored card takes back the id it had in the trash (if it had one there); says
    whether an id moved, so a restore that fails can move it back."""
    if index is None:
        return False
    try:
        return session.indexer(cfg, index).unpark(VAULT, trash_rel, rel)
    except DB_ERRORS as exc:
        warnings.append(f"restored, but its id could not be brought back ({exc})")
        return False


def _retire_namesake(cfg: Config, index, vault: Path, trash_rel: str, rel: str, warnings: list[str]) -> None:
    """The id of `.trash/<rel>`, the first copy of the restored card's name, when that copy is
    gone from the trash (removed by hand: a purge done without memsync): retired as a purge
    retires it. Left bound, the indexer would take the restored file for that copy coming back
    (batch._back_from_trash) and give it that card's id instead of its own."""
    namesake = f"{TRASH}/{rel}"
    if index is None or namesake == trash_rel or not trashnames.gone(vaultio.inside(vault, namesake)):
        return
    try:
        if index.bound_id(VAULT, namesake) is not None:
            session.indexer(cfg, index).retire_ids(VAULT, [namesake])
    except DB_ERRORS as exc:
        warnings.append(f"the id of {namesake}, removed from the trash by hand, could not be retired ({exc})")


def _original_path(vault: Path, index, trash_rel: str) -> str:
    """Where a file in the trash goes back to: `.trash/<path>` to `<path>`.

    Obsidian's "move to .trash", like a move by hand, puts a card straight into `.trash/`,
    without its folders. Such a file goes back to the folder its card came from when the
    index still knows it: the card's id is bound to `<folder>/<name>` and no file is there
    any more. When no folder, or more than one, fits, it goes to the top of the vault."""
    plain = trash_rel[len(TRASH) + 1:]
    if "/" in plain or index is None:
        return plain
    try:
        if index.bound_id(VAULT, trash_rel) is not None:  # parked by name: it came from the top
            return plain
        homes = [rel for rel in _vacant_namesakes(vault, plain) if index.bound_id(VAULT, rel)]
    except DB_ERRORS:
        return plain
    return homes[0] if len(homes) == 1 else plain


def _vacant_namesakes(vault: Path, name: str):
    """`<folder>/<name>` for every folder of the vault (dot-folders aside) that has no such file."""
    for folder, dirs, _files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if not os.path.lexists(os.path.join(folder, name)):
            rel_dir = Path(folder).relative_to(vault).as_posix()
            yield name if rel_dir == "." else f"{rel_dir}/{name}"


def _occupied(target_rel: str) -> dict:
    return {
        "status": "rejected", "path": target_rel, "existing_path": target_rel, "indexed": None,
        "note": (
            f"{target_rel} is taken by another file; nothing was moved. Add --force to move "
            "that file to the trash first (nothing is destroyed either way)"
        ),
    }


def purge(cfg: Config, trash_path: str) -> dict:
    vault = vaultio.root(cfg)
    rel = vaultio.trash_rel(vault, trash_path)
    full = vaultio.inside(vault, rel)
    warnings: list[str] = []
    with journal.writing(cfg.home.path):  # a restore of the same file goes first or not at all
        if os.path.isdir(full) and not os.path.islink(full):
            raise BadArgument(f"{rel} is a folder; purge its files one by one, or empty the trash with --all")
        if not os.path.lexists(full):
            _refuse_hidden(full, rel, "purge")
            raise NotFound(
                f"nothing at {rel}; purge only acts inside {TRASH}/ (to remove a live card, "
                "`memsync delete ID` it first)"
            )
        try:
            os.unlink(full)  # a symlink is removed itself, never its target
        except PermissionError:
            raise BadEnvironment(f"{rel} cannot be deleted: its folder may not be changed (permission "
                                 f"denied); make it writable (chmod u+w {_folder_of(full)}), then "
                                 "purge again") from None
        trashnames.forget(vault, [rel])
        vaultio.prune_empty(vault, posixpath.dirname(rel), TRASH)
        cleared = _clear_stats(cfg, [rel], warnings)
    result = {"status": "purged", "path": rel, "purged": 1, "stats_cleared": cleared, "indexed": None}
    if warnings:
        result["warnings"] = warnings
    return result


def purge_all(cfg: Config) -> dict:
    vault = vaultio.root(cfg)
    trash = vaultio.inside(vault, TRASH)
    originals: list[str] = []
    warnings: list[str] = []
    kept: set[str] = set()  # folders it may not read or change: what they hold stays
    with journal.writing(cfg.home.path):
        if os.path.isdir(trash):
            # Bottom-up, never following symlinked folders: only what is inside the trash goes.
            for folder, dirs, files in os.walk(trash, topdown=False,
                                               onerror=lambda exc: kept.add(str(exc.filename))):
                links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
                for name in files + links:
                    path = os.path.join(folder, name)
                    try:
                        os.unlink(path)
                    except PermissionError:
                        kept.add(folder)
                        continue
                    trash_rel = TRASH + "/" + os.path.relpath(path, trash).replace(os.sep, "/")
                    if trash_rel != trashnames.RECORD_REL:  # the record goes too, but is no card
                        originals.append(trash_rel)
                for name in dirs:
                    if name not in links:
                        with contextlib.suppress(OSError):  # not empty: something was added meanwhile
                            os.rmdir(os.path.join(folder, name))
        cleared = _clear_stats(cfg, originals, warnings)
    result = {"status": "purged", "path": TRASH, "purged": len(originals), "stats_cleared": cleared,
              "indexed": None,
              "note": f"deleted {len(originals)} file(s) in the trash for good"
                      + (f" and the read counts of {cleared} card(s)" if cleared else "")}
    if kept:
        folders = sorted(Path(f).relative_to(vault).as_posix() for f in kept)
        result["kept"] = folders
        warnings.append(f"{len(folders)} trash folder(s) may not be read or changed (permission denied), "
                        f"so what they hold stays: {', '.join(folders)}; make them readable and "
                        f"writable (chmod u+rwx {' '.join(shlex.quote(f) for f in folders)}, from "
                        "the vault), then purge again")
    if warnings:
        result["warnings"] = warnings
    return result


def _where_to_look(vault: Path, rel: str) -> str:
    """What to try for a trash path that holds nothing, in memsync's own commands (an agent over
    MCP may have no shell to list the folder with): the numbered copies beside it, which a name
    already taken in the trash became, else the deleted card's id, which names its copy."""
    folder, name = posixpath.split(rel)
    try:
        there = set(os.listdir(vaultio.inside(vault, folder)))
    except OSError:  # no such folder in the trash
        there = set()
    copies = [f"{folder}/{vaultio.numbered_name(name, n)}" for n in range(2, len(there) + 2)
              if vaultio.numbered_name(name, n) in there]
    if copies:
        return f"the trash holds {', '.join(copies[:3])}{' and more' if copies[3:] else ''} beside it"
    return ("`memsync show ID` with the deleted card's id says where its file is in the trash (the "
            "delete's reply named it too)")


def _refuse_hidden(path: Path, rel: str, verb: str) -> None:
    """Say so when `path` cannot be looked at (a folder on its way keeps memsync out): not
    finding it there would wrongly say the trash holds no such file."""
    try:
        os.lstat(path)
    except PermissionError:
        raise BadEnvironment(f"{rel} cannot be looked at: a folder on its way may not be read "
                             f"(permission denied); make it readable (chmod u+rx {_folder_of(path)}), "
                             f"then {verb} again") from None
    except OSError:
        pass


def _folder_of(path: Path) -> str:
    return shlex.quote(os.path.dirname(path))


def _clear_stats(cfg: Config, trash_rels: list[str], warnings: list[str]) -> int:
    """Drop the read stats of purged cards and retire their ids: while a card sits in the
    trash its id is bound to its trash path, so nothing live shares it."""
    if not trash_rels:
        return 0
    with vaultio.index_or_none(cfg, warnings) as index:
        if index is None:
            return 0
        try:
            session.indexer(cfg, index).retire_ids(VAULT, trash_rels)
        except DB_ERRORS as exc:
            warnings.append(f"the files are gone, but their read stats could not be cleared ({exc})")
            return 0
    return len(trash_rels)


# --- a move killed midway ---------------------------------------------------------------------

def recover_moves(cfg: Config) -> list[dict]:
    """Settle the moves whose process died midway; returns what was done."""
    done: list[dict] = []

    def handle(plan: dict) -> bool:
        if plan.get("op") != moves.OP:
            return False
        vault, src, dst = Path(plan.get("vault", "")), plan.get("src", ""), plan.get("dst", "")
        try:
            old, new = vaultio.inside(vault, src), vaultio.inside(vault, dst)
        except PathOutsideVault:
            return False  # not a plan this version wrote: left for a person (doctor lists it)
        try:
            with journal.writing(cfg.home.path):
                ended = moves.settle(old, new)
        except OSError as exc:
            done.append({"op": moves.OP, "src": src, "dst": dst, "action": f"left for later ({exc})"})
            return False
        if vault == vaultio.root(cfg):
            warnings: list[str] = []
            with vaultio.index_or_none(cfg, warnings) as index:
                vaultio.sync(cfg, index, [src, dst], warnings)
        action = f"finished: the card is at {dst}, no longer also at {src}" if ended else "nothing left to do"
        done.append({"op": moves.OP, "src": src, "dst": dst, "action": action})
        return True

    journal.replay(cfg.home.path, handle)
    return done
