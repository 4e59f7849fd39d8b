"""How much the trash holds, and when to remind that it is never emptied automatically."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

from memsync import sizes
from memsync.model import TRASH
from memsync.write import trashnames

REMINDER_CARDS = 200
REMINDER_BYTES = 50 * 1024 * 1024


def usage(vault: Path) -> tuple[int, int]:
    """(files, bytes) under the vault's trash folder."""
    count = size = 0
    for folder, _dirs, files in os.walk(vault / TRASH):
        for name in files:
            if name == trashnames.RECORD and folder == str(vault / TRASH):
                continue  # the trash's record of names, no card
            count += 1
            with suppress(OSError):
                size += os.lstat(os.path.join(folder, name)).st_size
    return count, size


def reminder(vault: Path) -> str | None:
    count, size = usage(vault)
    if count >= REMINDER_CARDS or size >= REMINDER_BYTES:
        return (
            f"the trash holds {count} files ({sizes.mib(size)}); it is never emptied "
            "automatically: review it and run `memsync delete --purge --all` if you are sure"
        )
    return None
