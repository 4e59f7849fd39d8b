"""The permission bits of a card the write side creates.

A new card takes the mode of the vault's own notes, so a vault shared with a group, or read by
a sync tool running as another user, keeps working: the mode most `.md` files in the card's
folder have, else in the vault as a whole (a bounded look), else the vault folder's own mode
without its execute bits. A card that seems to hold a credential is readable by its owner only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections import Counter
from pathlib import Path

SECRET_MODE = 0o600
LOOKED_AT = 200  # .md files sampled at most: enough for a majority, cheap on any vault


def _md_modes(folder: Path, limit: int, recurse: bool) -> Counter[int]:
    modes: Counter[int] = Counter()
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recurse else []
        for name in files:
            if not name.endswith(".md") or name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(top, name))
                if stat.S_ISREG(info.st_mode):
                    modes[stat.S_IMODE(info.st_mode) & 0o777] += 1
            if sum(modes.values()) >= limit:
                return modes
    return modes


def vault_mode(vault: Path, folder: Path) -> int:
    """The mode the vault's notes have (see the module docstring)."""
    for where, recurse in ((folder, False), (vault, True)):
        modes = _md_modes(where, LOOKED_AT, recurse)
        if modes:
            # Ties go to the tighter mode: never open a card wider than some of its neighbours.
            return max(modes.items(), key=lambda item: (item[1], -item[0]))[0]
    try:
        return stat.S_IMODE(os.stat(vault).st_mode) & 0o666
    except OSError:
        return 0o644


def new_card_mode(vault: Path, folder: Path, secret: bool) -> int:
    return SECRET_MODE if secret else vault_mode(vault, folder)
