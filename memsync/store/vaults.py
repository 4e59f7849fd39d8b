"""One index per vault, so pointing a command at another vault never takes a vault's cards out
of search.

Each index file belongs to one vault, named in a `.vault` label beside it. `<home>/memsync.db`
belongs to the first vault indexed in the home, or to the one `memsync init` made the configured
vault. Any other vault, chosen for one command with `--vault` or MEMSYNC_VAULT, gets its own
index, `<home>/indexes/<folder name>-<hash of its path>.db`. Switching back finds each index as
it was: nothing is read anew and no id or read count is lost. An index named outright (--db,
MEMSYNC_DB, "db" in config.json) is used for whatever vault the command runs on.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

INDEXES = "indexes"
DEFAULT_DB = "memsync.db"
SAMPLE = 500  # files of an unlabelled index looked at to tell which vault it was built for
SIDECARS = ("-wal", "-shm")


def same_folder(a: Path | str, b: Path | str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def own_index(home: Path, vault: Path) -> Path:
    """Where a vault other than memsync.db's keeps its index."""
    import hashlib

    name = re.sub(r"[^A-Za-z0-9_-]+", "-", vault.name).strip("-")[:40] or "vault"
    digest = hashlib.sha256(os.path.realpath(vault).encode()).hexdigest()[:8]
    return home / INDEXES / f"{name}-{digest}.db"


def label_file(db: Path) -> Path:
    return db.with_name(db.name + ".vault")


def owner(db: Path) -> Path | None:
    """The vault an index belongs to, from its label; None when it has none."""
    try:
        text = label_file(db).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return Path(text) if text else None


def write_label(db: Path, vault: Path) -> None:
    from memsync import private

    target = label_file(db)
    private.mkdir(target.parent)
    # One temp name per thread: in `memsync mcp` the watcher and a tool call can label at once.
    temp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    private.create(temp)
    temp.write_text(str(vault) + "\n", encoding="utf-8")
    os.replace(temp, target)


def claim(db: Path, vault: Path) -> None:
    """Before the first write to `db` for `vault`: label it, unless it is labelled already.

    An index from before labels existed may hold another vault's cards (it was used with
    MEMSYNC_VAULT, say): syncing it with this vault would take them all out, so that is refused
    with what to do."""
    if label_file(db).exists():
        return
    from memsync.errors import BadEnvironment

    if db.is_file():
        _refuse_foreign(db, vault, BadEnvironment(
            f"the index {db} holds the cards of another vault (none of its files is in "
            f"{vault}); indexing it for this vault would take them out of search. Run "
            f"`memsync init --vault DIR` with the vault it was built for, or name another "
            f"index with --db"
        ))
    write_label(db, vault)


def _refuse_foreign(db: Path, vault: Path, refusal: Exception) -> None:
    """Raise `refusal` when the unlabelled index `db` holds files and none of them is in `vault`."""
    total, here = _files_found(db, vault)
    if total and not here:
        raise refusal


def _files_found(db: Path, vault: Path) -> tuple[int, int]:
    """(vault files looked at, how many of them exist in `vault`), at most SAMPLE looked at."""
    paths: list[str] = _read(db, lambda conn: [row[0] for row in conn.execute(
        "SELECT path FROM files WHERE source = 'vault' LIMIT ?", (SAMPLE,))], [])
    return len(paths), sum((vault / path).is_file() for path in paths)


def card_count(db: Path) -> int:
    """Cards in an index, 0 when it is missing or not a memsync index; never creates or changes
    it. An index that cannot be read is a BadEnvironment naming the file."""
    if not db.is_file():
        return 0
    return _read(db, lambda conn: conn.execute("SELECT count(*) FROM cards").fetchone()[0], 0)


def _read(db: Path, query: Callable[[sqlite3.Connection], T], not_an_index: T) -> T:
    """`query` over the index at `db`, opened as it is (never created or migrated). A file
    that is not a memsync index (not SQLite, or no tables of ours) holds nothing of a vault:
    `not_an_index`. Any other failure (I/O, permissions, a lock held past the busy timeout)
    is reported, not taken for an empty index."""
    from memsync.errors import BadEnvironment
    from memsync.store.index import Index

    # SQLite alone opens the file, never open()/close() here: closing any other descriptor of
    # it drops every POSIX lock this process holds on it, so a server's own connections would
    # lose theirs and another process could checkpoint and delete the WAL under them.
    try:
        index = Index.existing(db)
    except sqlite3.Error as exc:
        raise BadEnvironment(f"cannot open the index {db} ({exc}); check its permissions") from None
    try:
        tables = {name for (name,) in index._conn.execute("SELECT name FROM sqlite_master")}
        return query(index._conn) if {"cards", "files"} <= tables else not_an_index
    except sqlite3.DatabaseError as exc:
        if _not_sqlite(exc):  # not SQLite at all: nothing of a vault in it
            return not_an_index
        raise BadEnvironment(f"cannot read the index {db} ({exc}); run `memsync doctor`") from None
    finally:
        index.close()


def _not_sqlite(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF == 26 if code is not None else "not a database" in str(exc)  # SQLITE_NOTADB


def known(home: Path) -> list[tuple[Path, Path]]:
    """(vault, index) for memsync.db and every labelled per-vault index under the home."""
    found = [home / DEFAULT_DB]
    with suppress(OSError):
        found += sorted(p.with_name(p.name.removesuffix(".vault"))
                        for p in (home / INDEXES).glob("*.db.vault"))
    return [(vault, db) for db in found if (vault := owner(db)) is not None]


def _move(src: Path, dst: Path) -> None:
    """Move an index, its WAL folded in first so the one file carries everything, and its label."""
    from memsync import private

    # Its WAL is removed below: it must be folded in first, or committed writes would go with it.
    _read(src, lambda conn: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall(), [])
    private.mkdir(dst.parent)
    os.replace(src, dst)
    for tail in SIDECARS:
        with suppress(FileNotFoundError):
            os.remove(src.with_name(src.name + tail))
    with suppress(FileNotFoundError):
        os.replace(label_file(src), label_file(dst))


def needs_swap(home: Path, vault: Path) -> bool:
    holder = owner(home / DEFAULT_DB)
    return holder is not None and not same_folder(holder, vault)


def make_main(home: Path, vault: Path) -> str | None:
    """Give memsync.db to `vault` (for `memsync init`): the index in it now moves to its own
    vault's file, and `vault`'s own index, if it has one, becomes memsync.db. Returns what moved,
    in words, or None when nothing had to."""
    from memsync.errors import BadEnvironment

    main = home / DEFAULT_DB
    holder = owner(main)
    if holder is None and main.is_file():  # unlabelled: its files tell whose it is
        _refuse_foreign(main, vault, BadEnvironment(
            f"the index {main} holds the cards of a vault other than {vault} and does not "
            f"say which; run `memsync init --vault DIR` with the vault it was built for "
            f"first, or move {main} aside"
        ))
        write_label(main, vault)
        return None
    if holder is None or same_folder(holder, vault):
        return None
    done = []
    if main.is_file():
        target = own_index(home, holder)
        _move(main, target)
        done.append(f"the index of {holder} moved to {target}")
    else:
        label_file(main).unlink(missing_ok=True)
    theirs = own_index(home, vault)
    if theirs.is_file():
        _move(theirs, main)
        done.append(f"the index of {vault} moved to {main}")
    write_label(main, vault)
    return "; ".join(done) or None


def empty_vault_warning(cfg) -> str | None:
    """For `memsync mcp` and `memsync watch` to say loudly (stderr, memory_stats): this process
    serves a vault with nothing in it while another vault of the same home has cards."""
    from memsync.errors import BadEnvironment

    vault = cfg.vault.path
    with suppress(OSError), os.scandir(vault) as entries:
        if any(not entry.name.startswith(".") for entry in entries):
            return None
    for other, db in known(cfg.home.path):
        if same_folder(other, vault) or not Path(other).is_dir():
            continue
        try:
            count = card_count(db)
        except BadEnvironment as exc:  # a hint, not a failure of this command: say what it met
            return f"the vault {vault} (from {cfg.vault.origin}) is empty, and {exc}"
        if count:
            # a named vault not there (a misspelt --vault): memsync's own folder is made on use
            state = "does not exist" if not vault.exists() and cfg.vault.origin != "default" else "is empty"
            return (f"the vault {vault} (from {cfg.vault.origin}) {state}, but {other} has "
                    f"{count} cards indexed in {db}: to serve that one, run `memsync init "
                    f"--vault {shlex.quote(str(other))}`, or point --vault / MEMSYNC_VAULT at it")
    return None
