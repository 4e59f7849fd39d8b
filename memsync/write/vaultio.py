"""The write side's file plumbing: where a write may land, reading a card back, naming new files,
moving files to the trash, and telling the indexer which files changed.

Every path the write side touches goes through `inside()`, which resolves symlinks and refuses
anything that would land outside the vault, so no write can escape it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memsync import notes, session
from memsync.config import Config
from memsync.errors import (
    BadArgument,
    MemsyncError,
    NotFound,
    PathOutsideVault,
    ReadOnlyNote,
    ReadOnlySource,
    Rejected,
    WriteFailed,
)
from memsync.model import TRASH
from memsync.model.indexing import Card
from memsync.store.connection import DB_ERRORS
from memsync.store.index import Index
from memsync.write import atomic, modes, moves, rules, trashnames

VAULT = "vault"  # the one writable source
MAX_NUMBERED = 10_000


def root(cfg: Config) -> Path:
    """The vault folder with symlinks resolved: the boundary every write is checked against."""
    return Path(os.path.realpath(cfg.ensure_vault()))


def inside(vault: Path, rel: str, folders: dict[str, str] | None = None) -> Path:
    """`vault/rel`, refused if `..`, an absolute path or a symlink would take it outside.
    `folders` keeps each folder's resolved path across the calls of one pass over many files
    (a consolidate plan reads tens of thousands): then only the file's own name is looked at."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts or "\0" in rel:
        raise PathOutsideVault(
            f"{rel!r} is not a path inside the vault; give it relative to the vault, without '..'"
        )
    full = vault.joinpath(*[p for p in parts if p not in ("", ".")])
    real, top = _resolved(str(full), folders), str(vault)
    # strings, not Path.parents: a Path made for every folder above the file cost more than the
    # resolving itself
    if real != top and not real.startswith(top if top.endswith("/") else top + "/"):
        raise PathOutsideVault(
            f"{rel} leads outside the vault (to {real}) through a symbolic link; memsync only "
            "writes inside the vault"
        )
    return full


def _resolved(full: str, folders: dict[str, str] | None) -> str:
    """os.path.realpath(full), with the folder's part taken from `folders` when it is there."""
    if folders is None:
        return os.path.realpath(full)
    head, name = os.path.split(full)
    real_head = folders.get(head)
    if real_head is None:
        real_head = folders[head] = os.path.realpath(head)
    try:
        link = stat.S_ISLNK(os.lstat(full).st_mode)
    except OSError:  # as realpath takes a name it cannot look at: as it is
        link = False
    return os.path.realpath(full) if link else os.path.join(real_head, name)


def folder(vault: Path, rel_dir: str) -> Path:
    """A folder for a new file, created if missing, checked again once it exists."""
    if not rel_dir:
        return vault
    path = inside(vault, rel_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(f"cannot create the folder {rel_dir}: {exc.strerror}; nothing was saved") from None
    return inside(vault, rel_dir)


def trash_rel(vault: Path, given: str) -> str:
    """A trash entry as `.trash/<path>`: accepts it with or without the prefix, or absolute."""
    text = (given or "").strip()
    if not text:
        raise BadArgument("name a file in the trash, e.g. `.trash/03-Knowledge/x.md`")
    if os.path.isabs(text):
        if ".." in text.split(os.sep):
            raise PathOutsideVault(f"{given!r} uses '..'; name the file by its path inside the trash")
        # Resolve the folder part only: the file itself may be a symlink, checked by inside().
        head, name = os.path.split(os.path.normpath(text))
        real = Path(os.path.realpath(head)) / name
        if vault not in real.parents:
            raise PathOutsideVault(f"{given} is outside the vault ({vault}); memsync only acts inside it")
        text = real.relative_to(vault).as_posix()
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathOutsideVault(f"{given!r} uses '..'; name the file by its path inside the trash")
    if parts and parts[0] == TRASH:
        parts = parts[1:]
    if not parts:
        raise BadArgument(f"{given!r} names the trash itself; name a file inside it")
    inside(vault, TRASH)  # a .trash that is a symlink to elsewhere is refused here
    return "/".join([TRASH, *parts])


def writable(row, deleting: bool = False, cfg: Config | None = None) -> None:
    """ReadOnlySource for a card of a source memsync only reads, saying what to do instead:
    with `cfg`, a correction names the file the fact lives in, or it would go on being found
    beside the corrected card (a CLAUDE.md is its agent's to edit)."""
    if row["source"] != VAULT:
        root = next((s.root for s in cfg.sources if s.name == row["source"]), None) if cfg else None
        there = f"correct it in its own file ({Path(root) / row['file']}), or " if root else ""
        instead = (f"to leave its cards out of search, remove the source (`memsync sources --remove "
                   f"{row['source']}`)" if deleting else
                   there + "capture the corrected fact as a new card in the vault instead (`memsync capture`)")
        raise ReadOnlySource(
            f"card {row['id']} comes from the read-only source {row['source']!r} "
            f"({row['path']}); memsync never writes there: {instead}"
        )


def read_only(full: Path) -> int | None:
    """The mode of a note that may not be written over, else None. A note is changed by a new
    file renamed over it, which needs only its folder to be writable: a note with no write bit
    (chmod 444, a tool that locks its files) or one we may not write (another user's) would be
    replaced all the same, so its mode is asked first."""
    try:
        mode = stat.S_IMODE(os.lstat(full).st_mode)
    except OSError:
        return None  # gone, or not to be looked at: the read that follows says so
    return None if mode & 0o222 and os.access(full, os.W_OK) else mode


def refuse_read_only(full: Path, rel: str) -> None:
    mode = read_only(full)
    if mode is not None:
        raise ReadOnlyNote(
            f"{rel} is read-only (mode {mode:04o}), so memsync leaves it as it is; to change it, "
            f"make it writable (chmod u+w {shlex.quote(str(full))}) and run this again, or "
            "capture the new fact as a card of its own (`memsync capture`)")


def read_bytes(path: Path) -> bytes | None:
    """A regular file's bytes, or None when there is none (symlinks are never followed)."""
    try:  # one lstat: a regular file, and no link to one
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
    except (OSError, ValueError):  # as os.path.isfile answers: no file there to read
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def read_card(vault: Path, rel: str) -> Card | None:
    data = read_bytes(inside(vault, rel))
    return None if data is None else notes.parse(data, rel)


def editable_text(data: bytes, rel: str) -> tuple[str, Card]:
    """The text of a card we are about to edit line by line, refusing ones we could damage."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Rejected(f"{rel} is not valid UTF-8; fix its encoding by hand first") from None
    card = notes.parse(data, rel, outline_too=False)  # an edit's card is checked, never indexed
    if card.problem:
        raise Rejected(f"{rel}: {card.problem}; fix it by hand first, then retry")
    return text, card


@contextlib.contextmanager
def index_or_none(cfg: Config, warnings: list[str]) -> Iterator[Index | None]:
    """The index if it opens. A write still goes to disk when it does not (truth first)."""
    try:
        index = Index(cfg.db.path)
    except (MemsyncError, *DB_ERRORS) as exc:
        warnings.append(f"the index could not be opened ({_text(exc)}); run `memsync index` later")
        yield None
        return
    try:
        yield index
    finally:
        index.close()


def sync(cfg: Config, index: Index | None, rels: list[str], warnings: list[str],
         moves: list[tuple[str, str]] | None = None) -> bool:
    """Ask the indexer to look at exactly these files, after the renames in `moves` (src, dst)
    this command made itself (their ids go along: Indexer.follow). False (with a warning) if it
    failed."""
    if index is None:
        warnings.append("saved on disk but not indexed; run `memsync index` to pick it up")
        return False
    try:
        indexer = session.indexer(cfg, index)
        if moves:
            indexer.follow(VAULT, moves)
        report = indexer.sync_paths(VAULT, rels)
    except (MemsyncError, OSError, *DB_ERRORS) as exc:
        warnings.append(
            f"saved on disk, but indexing failed ({_text(exc)}); run `memsync index` to retry"
        )
        return False
    if report.retry:
        warnings.append("the file changed while it was being indexed; `memsync index` will catch up")
        return False
    return True


def finish(cfg: Config, index: Index | None, result: dict, touched: list[str],
           warnings: list[str]) -> dict:
    """Sync the touched files, then fill in the result's indexed / id / warnings."""
    result["indexed"] = sync(cfg, index, touched, warnings)
    if result.get("path") and result.get("id") is None:
        result["id"] = card_id(index, result["path"])
    if warnings:
        result["warnings"] = result.get("warnings", []) + warnings
    return result


def card_id(index: Index | None, rel: str) -> int | None:
    row = card_row(index, rel)
    return row["id"] if row else None


def card_row(index: Index | None, rel: str) -> Any:
    """The index's row of the vault card at `rel`, None where there is none (or no index)."""
    if index is None:
        return None
    with contextlib.suppress(*DB_ERRORS):
        return index.card_by_path(VAULT, rel)
    return None


def same_titled(index: Index | None, vault: Path, title: str) -> list[tuple[str, Card]]:
    """Valid vault cards with this title, as they are on disk now (the index may lag), in
    natural_order of their paths."""
    if index is None:
        return []
    try:
        rows = index.cards_titled(VAULT, title)
    except DB_ERRORS:  # the write goes ahead: the disk check while naming the file still runs
        return []
    out = []
    for row in rows:
        card = read_card(vault, row["path"])
        if card and not card.invalid_at and rules.same_title(card.title, title):
            out.append((row["path"], card))
    return sorted(out, key=lambda pair: natural_order(pair[0]))


def natural_order(rel: str) -> tuple[str, int, str]:
    """`x.md` before `x-2.md` before `x-10.md` (plain string order puts `x-2.md` first)."""
    stem, _ext = posixpath.splitext(rel)
    base, _, number = stem.rpartition("-")
    return (base, int(number), rel) if base and number.isdigit() else (stem, 1, rel)


def _text(exc: BaseException) -> str:
    return exc.message if isinstance(exc, MemsyncError) else str(exc)


def failed(rel: str, exc: OSError) -> WriteFailed:
    return WriteFailed(f"could not write {rel}: {exc.strerror or exc}; nothing was saved")


# --- new files ------------------------------------------------------------------------------

def place_new(vault: Path, rel_dir: str, stem: str, data: bytes, claimed,
              secret: bool = False) -> tuple[str | None, Any]:
    """Write `data` under the first free name `stem.md`, `stem-2.md`, ... in `rel_dir`, with the
    mode of the vault's notes (0600 when it holds a `secret`: memsync.write.modes).

    Names are claimed by link-or-fail, so concurrent writers never overwrite each other. For
    each taken name, `claimed(rel)` is asked whether to stop: it returns None to try the next
    name, or a value that is returned instead of writing (nothing is then left behind).
    Returns (rel_path, None) when written, (None, value) when stopped.
    """
    where = folder(vault, rel_dir)
    atomic.sweep(where)
    mode = modes.new_card_mode(vault, where, secret)
    try:
        with atomic.Staged(where, data, mode) as staged:
            for n in range(1, MAX_NUMBERED):
                rel = posixpath.join(rel_dir, rules.numbered(stem, n))
                if staged.link(where / rules.numbered(stem, n)):
                    return rel, None
                stop = claimed(rel)
                if stop is not None:
                    return None, stop
    except OSError as exc:
        raise failed(posixpath.join(rel_dir, rules.numbered(stem, 1)), exc) from None
    raise WriteFailed(f"{MAX_NUMBERED} files named {stem}-N.md already exist in {rel_dir}; choose another title")


# --- the trash --------------------------------------------------------------------------------

NAME_MAX = 255  # bytes of one file name on Linux and macOS file systems


def numbered_name(name: str, n: int) -> str:
    """`name` as the trash's n-th copy: `<stem>-<n><ext>`, the stem cut (at a character) so the
    name still fits in NAME_MAX bytes, as a card's own name may fill them."""
    if n == 1:
        return name
    stem, ext = posixpath.splitext(name)
    room = NAME_MAX - len(f"-{n}{ext}".encode())
    return f"{stem.encode()[:room].decode(errors='ignore')}-{n}{ext}"


def move_to_trash(home: Path, vault: Path, rel: str) -> str:
    """Move a file to `.trash/<rel>`; a name already in the trash is kept and this one becomes
    `-2`, `-3`. Returns the trash path. Journaled in `home` (memsync.write.moves).

    A path that `.trash/` makes longer than the system takes (PATH_MAX, 4096 bytes on Linux)
    goes to the top of the trash instead, its place in the vault in the trash's record of names
    (memsync.write.trashnames), which a restore follows."""
    inside(vault, rel)
    rel_dir, name = posixpath.split(rel)
    target_dir = posixpath.join(TRASH, rel_dir) if rel_dir else TRASH
    try:
        try:
            return _move_numbered(home, vault, rel, target_dir, name)
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG or target_dir == TRASH:
                raise
            prune_empty(vault, target_dir, TRASH)  # the folders made for it, left empty
            return _move_numbered(home, vault, rel, TRASH, name)
    except FileNotFoundError:
        raise NotFound(f"{rel} is no longer on disk; nothing was moved") from None
    except OSError as exc:
        raise WriteFailed(f"could not move {rel} to the trash: {exc.strerror or exc}") from None


def _move_numbered(home: Path, vault: Path, rel: str, target_dir: str, name: str) -> str:
    inside(vault, target_dir).mkdir(parents=True, exist_ok=True)
    inside(vault, target_dir)  # checked again once it exists, as folder() does
    for n in range(1, MAX_NUMBERED):
        candidate = posixpath.join(target_dir, numbered_name(name, n))
        if moves.move(home, vault, rel, candidate):
            with contextlib.suppress(OSError):  # without the record, a restore keeps the trash's name
                trashnames.remember(vault, candidate, rel)
            return candidate
    raise WriteFailed(f"the trash already holds {MAX_NUMBERED} copies of {name}; purge some first")


def prune_empty(vault: Path, rel_dir: str, stop: str) -> None:
    """Remove folders left empty under `stop` (e.g. .trash/03-Knowledge after a restore)."""
    while rel_dir and rel_dir != stop and rel_dir.startswith(stop + "/"):
        try:
            os.rmdir(inside(vault, rel_dir))
        except OSError:
            return
        rel_dir = posixpath.dirname(rel_dir)


# --- result fields shared by the write operations --------------------------------------------

def rejected(note: str, **fields) -> dict:
    return {"status": "rejected", "indexed": None, **fields, "note": note + "; nothing was written"}


PRIVATE_NOTE = ("the card was saved readable only by you (mode 0600) because it seems to hold "
                "a secret; move the secret out and `chmod` it back if others should read it")


def secret_fields(findings, written: bool = True) -> dict:
    """The result fields of suspected credentials; `written`: the card went to disk (0600)."""
    if not findings:
        return {}
    return {
        "secrets_found": [f.to_dict() for f in findings],
        "warnings": [f.warning() for f in findings] + ([PRIVATE_NOTE] if written else []),
    }
