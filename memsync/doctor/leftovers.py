"""Temp files left by memsync processes that were killed mid-write, found and swept.

Every writer names its temp file after its process: a card staged where the file system has no
unnamed temp files (memsync.write.atomic, in the card's folder), config.json, brief.json, an
index's vault label and a watcher's lock record, written aside before it is linked into place
(memsync.watch.lock; in the home, or beside an index kept elsewhere), and the new index a repair
builds beside a damaged one (memsync.store.salvage). A file whose process is
still running is in use; one whose process is gone will never be renamed into place, and only
costs space and confuses a person listing the folder. The next write into the same folder
sweeps a card's temp files; the others stay until `memsync doctor --fix`.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from memsync import processes
from memsync.config import Config
from memsync.model import TRASH
from memsync.store.salvage import STAGED_NAME
from memsync.store.vaults import INDEXES
from memsync.watch.lock import ASIDE_NAME
from memsync.write.atomic import TEMP_NAME

# `.config.json.<pid>.tmp`, `.brief.json.<pid>.tmp`, `.<index>.vault.<pid>.<thread>.tmp`
HOME_TEMP_NAME = re.compile(r"^\.(?:config\.json|brief\.json|.+\.vault)\.(\d+)(?:\.\d+)?\.tmp$")
IN_HOME = (HOME_TEMP_NAME, ASIDE_NAME, STAGED_NAME)  # each name's first group: its writer's pid


def _dead_writer(patterns: tuple[re.Pattern[str], ...], name: str) -> bool:
    match = next(filter(None, (pattern.match(name) for pattern in patterns)), None)
    return match is not None and not processes.running(int(match.group(1)))


def _in(folder: Path, patterns: tuple[re.Pattern[str], ...]) -> list[Path]:
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        return [Path(e.path) for e in entries if _dead_writer(patterns, e.name) and e.is_file(follow_symlinks=False)]
    return []


def find(cfg: Config) -> list[Path]:
    """The temp files of writers that are gone, in the home, beside the index and in the vault
    (its dot-folders left out but for the trash, where deleted cards are written)."""
    homes = {cfg.home.path, cfg.home.path / INDEXES, cfg.db.path.parent}
    found = [path for folder in sorted(homes) for path in _in(folder, IN_HOME)]
    for folder, subfolders, _files in os.walk(cfg.vault.path):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") or d == TRASH]
        found += _in(Path(folder), (TEMP_NAME,))
    return found


def sweep(paths: list[str]) -> list[str]:
    """Remove those of `paths` whose writer is still gone (asked again: it is a while since the
    check); returns the removed ones."""
    removed = []
    for path in map(Path, paths):
        if _dead_writer((TEMP_NAME, *IN_HOME), path.name):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(str(path))
    return removed
