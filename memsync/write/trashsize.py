"""How much the trash holds, and when to remind that it is never emptied automatically."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import NamedTuple

from memsync import sizes
from memsync.model import TRASH
from memsync.write import trashnames

REMINDER_CARDS = 200
REMINDER_BYTES = 50 * 1024 * 1024


class Usage(NamedTuple):
    files: int
    bytes: int
    hidden: tuple[str, ...]  # folders of the trash memsync may not read: what they hold is not counted


def usage(vault: Path) -> Usage:
    """What the vault's trash folder holds, as far as memsync may look."""
    count = size = 0
    hidden: list[OSError] = []
    for folder, _dirs, files in os.walk(vault / TRASH, onerror=hidden.append):
        for name in files:
            if name == trashnames.RECORD and folder == str(vault / TRASH):
                continue  # the trash's record of names, no card
            count += 1
            with suppress(OSError):
                size += os.lstat(os.path.join(folder, name)).st_size
    unread = tuple(sorted(Path(str(exc.filename)).relative_to(vault).as_posix() for exc in hidden
                          if not isinstance(exc, FileNotFoundError)))  # that one: no trash yet
    return Usage(count, size, unread)


def reminder(vault: Path) -> str | None:
    count, size, _hidden = usage(vault)
    if count >= REMINDER_CARDS or size >= REMINDER_BYTES:
        return (
            f"the trash holds {count} files ({sizes.mib(size)}); it is never emptied "
            "automatically: review it and run `memsync delete --purge --all` if you are sure"
        )
    return None
