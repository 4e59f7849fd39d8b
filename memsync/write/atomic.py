"""All-or-nothing file writes in the vault.

A card appears complete or not at all: the bytes go to an unnamed temporary file in the target
folder (Linux O_TMPFILE: if the process dies, the kernel drops it and nothing is left behind),
are fsynced, and only then get a name. New cards are linked into place, which fails instead of
overwriting when the name is taken, so two writers can never clobber each other; replacements
are renamed over the old file. Where O_TMPFILE is missing we fall back to a dot-named temp file
that the indexer ignores, removed on failure and swept later if the process was killed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import uuid
from pathlib import Path

from memsync import processes

# A fallback temp file, named after its writer (memsync.doctor.leftovers finds those of killed ones).
TEMP_NAME = re.compile(r"^\.memsync-(\d+)-[0-9a-f]{12}\.tmp$")
_NO_HARDLINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV)
# Errors meaning "no unnamed temp files here" (old kernel, file system, no /proc): fall back.
_NO_TMPFILE = (*_NO_HARDLINKS, errno.EISDIR, errno.EINVAL, errno.ENOENT, errno.EACCES)
_tmpfile_ok = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def _no_tmpfile() -> None:
    global _tmpfile_ok
    _tmpfile_ok = False


def _temp_name() -> str:
    return f".memsync-{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"


def fsync_dir(folder: Path) -> None:
    """Make a new name durable. Some file systems cannot fsync a directory; that is not fatal."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Staged:
    """Content fully written and fsynced in `folder`, not yet visible under any card name."""

    def __init__(self, folder: Path, data: bytes, mode: int | None = None):
        self.folder = Path(folder)
        self.data, self.mode = data, mode
        self.fd: int | None = None
        self.path: Path | None = None  # the named temp file, in the fallback
        self._fill(anonymous=_tmpfile_ok)

    def _fill(self, anonymous: bool) -> None:
        try:
            self._open(anonymous)
            assert self.fd is not None  # _open set it or raised
            _write_all(self.fd, self.data)
            if self.mode is not None:
                os.fchmod(self.fd, self.mode)
            os.fsync(self.fd)
        except BaseException:
            self.discard()
            raise

    def _open(self, anonymous: bool) -> None:
        if anonymous:
            try:
                self.fd = os.open(self.folder, os.O_TMPFILE | os.O_WRONLY, 0o666)
                return
            except OSError as exc:
                if exc.errno not in _NO_TMPFILE:
                    raise
                _no_tmpfile()
        self.path = self.folder / _temp_name()
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)

    def _name(self, target: Path) -> None:
        """Link the unnamed file to `target` (raises FileExistsError if taken). linkat() must
        follow the /proc/self/fd link, which os.link only asks for when given a dir fd."""
        dir_fd = os.open(Path(target).parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.link(f"/proc/self/fd/{self.fd}", Path(target).name, dst_dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    def _named_fallback(self) -> None:
        """This file system will not name an unnamed file: write a dot-named temp instead."""
        _no_tmpfile()
        self.discard()
        self._fill(anonymous=False)

    def link(self, target: Path) -> bool:
        """Give the content the name `target`; False (and nothing changed) if it is taken."""
        try:
            if self.path is None:
                try:
                    self._name(target)
                except FileExistsError:
                    raise
                except OSError as exc:
                    if exc.errno not in _NO_TMPFILE:
                        raise
                    self._named_fallback()
                    return self.link(target)
            else:
                os.link(self.path, target)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_HARDLINKS or self.path is None:
                raise
            # No hard links here: claim the name with O_EXCL, then rename over the claim.
            try:
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except FileExistsError:
                return False
            os.replace(self.path, target)
            self.path = None
        fsync_dir(Path(target).parent)
        return True

    def replace(self, target: Path) -> None:
        """Swap the content in for `target` in one rename."""
        if self.path is None:  # an unnamed file cannot be renamed: give it a temp name first
            named = self.folder / _temp_name()
            try:
                self._name(named)
                self.path = named
            except OSError as exc:
                if exc.errno not in _NO_TMPFILE:
                    raise
                self._named_fallback()
        assert self.path is not None  # named above, or by the fallback
        try:
            os.replace(self.path, target)
        except BaseException:
            self.discard()
            raise
        self.path = None
        fsync_dir(Path(target).parent)

    def discard(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self.path = None

    def __enter__(self) -> Staged:
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def create(target: Path, data: bytes, mode: int | None = None) -> bool:
    """Write a new file (with `mode`, else as the umask makes it); False if a file of that name
    already exists (it is left untouched)."""
    target = Path(target)
    with Staged(target.parent, data, mode) as staged:
        return staged.link(target)


def replace(target: Path, data: bytes, mode: int | None = None) -> None:
    """Replace a file's content atomically, keeping its permission bits (or setting `mode`)."""
    target = Path(target)
    if mode is None:
        mode = os.stat(target).st_mode & 0o7777
    with Staged(target.parent, data, mode) as staged:
        staged.replace(target)


def move_no_clobber(src: Path, dst: Path) -> bool:
    """Move a file to a name that must be free; False if it is taken (then nothing moved)."""
    try:
        os.link(src, dst)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in _NO_HARDLINKS:
            raise
        if os.path.lexists(dst):
            return False
        os.rename(src, dst)
        fsync_dir(Path(dst).parent)
        return True
    os.unlink(src)
    fsync_dir(Path(dst).parent)
    fsync_dir(Path(src).parent)
    return True


def sweep(folder: Path) -> list[str]:
    """Remove temp files left in `folder` by writers that were killed; returns their names."""
    removed = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            match = TEMP_NAME.match(entry.name)
            if match and not processes.running(int(match.group(1))):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(entry.name)
    return removed
