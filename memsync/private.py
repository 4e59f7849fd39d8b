"""The data home is private: the folder 0700, the files memsync keeps in it 0600.

The index holds every card (hostnames, connection strings, credential references), so no other
local user may read it. Each place that creates a folder or file of the home asks here, whichever
process it runs in (CLI, watcher, MCP server, migration); the process umask is never changed, so
cards written into the vault keep the vault's usual permissions. A home left open by an older
memsync is tightened once, with a message on stderr.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
import sys
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
OPEN_BITS = 0o077  # any access for group or others
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def mkdir(path: Path | str) -> Path:
    """Create a folder of the home (and its missing parents) readable by its owner only.
    An existing folder is left as it is: it may be somebody's own folder holding the db."""
    path = Path(path)
    missing = []
    while not path.is_dir() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=FOLDER_MODE)
    return missing[0] if missing else path


def create(path: Path | str) -> None:
    """Make sure a file exists before another library opens it with the default umask (SQLite
    creates its -wal and -shm files with the mode of the database file)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))


def restrict(path: Path | str) -> None:
    """A file we are about to put into the home (a temp file renamed into place): owner only."""
    os.chmod(path, FILE_MODE)


def is_open(path: Path | str) -> bool:
    try:
        return bool(os.lstat(path).st_mode & OPEN_BITS)
    except OSError:
        return False


def sqlite_files(db: Path) -> tuple[Path, ...]:
    """The index and the files SQLite keeps beside it, there or not: not the lock files or the
    vault label memsync keeps there too."""
    return (db, *(db.with_name(db.name + tail) for tail in SQLITE_SIDECARS))


def open_paths(home: Path, db: Path | None = None, skip: tuple[Path, ...] = ()) -> list[Path]:
    """What other users may read: the home, anything memsync keeps below it (not the folders in
    `skip`, nor the default vault: those are the user's own cards), and the index with its
    sidecars wherever it lives."""
    skip = (*skip, home / "vault")
    found = [home] if home.is_dir() and is_open(home) else []
    for folder, dirs, files in os.walk(home):
        dirs[:] = [d for d in dirs if Path(folder, d) not in skip]
        found += [p for p in (Path(folder, name) for name in dirs + files)
                  if not p.is_symlink() and is_open(p)]
    if db is not None:
        found += [p for p in sqlite_files(db) if p.is_file() and is_open(p)]
    return list(dict.fromkeys(found))


def writable_by_owner(path: Path) -> bool:
    """By the mode bits, whoever asks: root is let through what they would refuse another user."""
    try:
        return bool(os.lstat(path).st_mode & stat.S_IWUSR)
    except OSError:
        return True


def chmod_command(paths: list[Path]) -> str:
    """The shell command that gives these paths of the home their private modes, which both lets
    their owner write them and keeps everyone else out (`chmod u+w` alone leaves them open)."""
    folders = [p for p in paths if os.path.isdir(p)]  # False, not an error, inside a shut home
    files = [p for p in paths if p not in folders]
    return "; ".join(f"chmod {mode:o} " + " ".join(shlex.quote(str(p)) for p in group)
                     for mode, group in ((FOLDER_MODE, folders), (FILE_MODE, files)) if group)


def writable_command(paths: list[Path], home: Path | None = None) -> str:
    """The chmod that lets their owner write these: the private modes for the home's paths and
    for any other path already closed to others (where they do what `u+w` does), `u+w` for a
    folder others may read (the user's own, holding an --db): memsync does not close that."""
    mine = [p for p in paths if not is_open(p) or (home is not None and (p == home or home in p.parents))]
    others = [shlex.quote(str(p)) for p in paths if p not in mine]
    return "; ".join(([chmod_command(mine)] if mine else []) + ([f"chmod u+w {' '.join(others)}"] if others else []))


def tighten(paths: list[Path]) -> list[Path]:
    """Owner-only modes for these paths; returns the ones changed."""
    changed = []
    for path in paths:
        mode = FOLDER_MODE if path.is_dir() else FILE_MODE
        with contextlib.suppress(OSError):
            if stat.S_IMODE(os.lstat(path).st_mode) != mode:
                os.chmod(path, mode)
                changed.append(path)
    return changed


def settle_home(home: Path, db: Path | None = None, skip: tuple[Path, ...] = ()) -> None:
    """A home an older memsync left readable by others is made private once, with a message.
    Cheap when nothing is to do (one stat): every process runs it when it loads its config.
    Later a file loosened by hand is for `memsync doctor` to report, not for us to hide."""
    if not is_open(home) or not home.is_dir():
        return
    changed = tighten(open_paths(home, db, skip))
    if changed:
        print(f"memsync: the data home {home} was readable by other users; made it private "
              f"({len(changed)} paths now {FOLDER_MODE:o} for folders, {FILE_MODE:o} for files)",
              file=sys.stderr)
