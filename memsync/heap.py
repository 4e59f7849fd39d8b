"""Handing the memory a process has freed back to the system.

A bulk load makes and frees tens of megabytes in small blocks (FTS5's term hash, the looks of the
files in flight), and glibc keeps freed blocks for the process's own later use. A watcher that
indexed a 10,000-note vault in its own process held 96 MB for the rest of its life, against 40 MB
for one that started on an indexed vault; after malloc_trim(0), 41 MB. (Python's own arenas are
another matter: memsync.watch.apart.)
"""

from __future__ import annotations

import ctypes
import sys


def give_back() -> bool:
    """Return the heap's free pages to the system (glibc's malloc_trim); False where the C
    library has no such call (macOS, Windows, musl)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the symbols this process is linked with
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True
