"""A card moved to a new name (into the trash, back out of it) under a journal entry.

atomic.move_no_clobber links the new name, then unlinks the old one: no other process can take
the new name meanwhile, and the content is never lost. A kill between the two calls leaves the
card under both names (two links to one file). The plan says which name was leaving, so the next
write (memsync.write.trash.recover_moves, run by every write and the watcher at start) ends the move: the old name goes
while it is still that same file; a file written there since is someone's, and stays.
"""

from __future__ import annotations

import os
from pathlib import Path

from memsync.write import atomic, journal

OP = "move"


def move(home: Path, vault: Path, src_rel: str, dst_rel: str) -> bool:
    """Move the file at `src_rel` to `dst_rel` (vault-relative; the name must be free). False
    when it is taken (then nothing moved)."""
    entry = journal.Entry(home, {"op": OP, "vault": str(vault), "src": src_rel, "dst": dst_rel})
    try:
        placed = atomic.move_no_clobber(vault / src_rel, vault / dst_rel)
    except BaseException:
        entry.release()  # the link may be made and the unlink not: recovery looks
        raise
    entry.finish()
    return placed


def settle(src: Path, dst: Path) -> bool:
    """End one move whose writer died; True when the old name was still the moving file and
    is gone now. Nothing happens when one of the names is gone (the move never began, or it
    ended) or a new file stands at the old name (someone's, not the one that was moving)."""
    try:
        if not os.path.samefile(src, dst):
            return False
    except OSError:
        return False
    os.unlink(src)
    atomic.fsync_dir(src.parent)
    return True
