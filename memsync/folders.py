"""Folder stamps: when a reconcile may take a folder's entries as it last saw them, unlisted.

Adding, removing or renaming an entry of a folder moves the folder's mtime and ctime; editing a
file in it moves neither. So a folder whose mtime, ctime and inode are those recorded when it was
last listed still holds the same entries: its files are the ones the index stores for it (each
still lstat-ed, for its content) and its subfolders the ones recorded below it. ctime is set by
the kernel alone: rsync, `touch -d` and sync tools that carry an mtime over cannot set it back,
so a restored mtime does not hide a change. A stamp also records how many wanted files and
entered subfolders the listing found and which rules decided that (the adapter, the version of
its rules, and Obsidian's excluded files): when the stored files or stamps below it no longer number that many (a file
that could not be indexed, a subfolder listed too soon to stamp), or the rules changed, the
folder is listed as before.

This is sound only where folder times are exact and kept by the kernel that sees every change:
local Linux file systems (EXACT_TIMES, read from the mount table). Not on FAT or exFAT (times in
2 s steps), not on NFS, SMB or 9p mounts (another machine changes the folder, and an attribute
cache may serve an old time), not on FUSE file systems (their times are what the daemon says),
and not on macOS or Windows, whose mount tables memsync does not read: there every folder is
listed, as before.
"""

from __future__ import annotations

import json
import sys
import zlib
from typing import NamedTuple

# Local Linux file systems whose folder times move with every entry change, to the nanosecond.
EXACT_TIMES = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "zfs", "f2fs", "bcachefs",
                         "jfs", "overlay"})
MOUNTINFO = "/proc/self/mountinfo"


class FolderStamp(NamedTuple):
    """What a folder looked like when it was last listed."""

    mtime_ns: int
    ctime_ns: int
    ino: int
    files: int  # wanted files the listing found in it (not below)
    folders: int  # subfolders it entered
    rules: int  # rules_key of the listing


def rules_key(adapter, excluded) -> int:
    """A number that changes with what decides which files are wanted and which folders are
    entered: the adapter, the version of its rules (an upgrade that changes them must not leave
    folders unlisted under the old ones) and the exclusions (memsync.exclusions)."""
    rules = [adapter.name, adapter.rules_version, list(excluded.prefixes),
             [p.pattern for p in excluded.patterns]]
    return zlib.crc32(json.dumps(rules, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def exact_times(root: str) -> bool:
    """Whether the folders below `root` keep exact times (see the module's docstring)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as handle:
            table = handle.read()
    except OSError:
        return False
    return fs_type(root, table) in EXACT_TIMES


def fs_type(path: str, mountinfo: str) -> str | None:
    """The file system type of the mount that holds the absolute, resolved `path`, from the
    text of /proc/self/mountinfo (the last of the mounts on the longest matching mount point)."""
    best, kind = "", None
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if len(fields) < 10 or "-" not in fields[6:]:
            continue
        point = _unescape(fields[4])
        inside = point == "/" or path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[fields.index("-", 6) + 1]
    return kind


def _unescape(field: str) -> str:
    """A mount point as the kernel writes it: space, tab, newline and backslash as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def parent(folder: str) -> str:
    """The folder holding `folder` ("a/b/" -> "a/", "a/" -> "", the source's root)."""
    return folder[: folder.rfind("/", 0, -1) + 1]
