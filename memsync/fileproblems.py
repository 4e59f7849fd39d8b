"""The Indexer's record of files and folders it could not index (too large, a bad name, no
permission to read): each is a problem stats and doctor show, kept until the file or folder is
fixed or gone. Such files have no files row, so only a survey notices them leave."""

from __future__ import annotations

from contextlib import nullcontext

from memsync.model.indexing import SyncReport
from memsync.store.index import Index

from .batch import FOLDER_DENIED
from .pathnames import printable


class FileProblems:
    index: Index

    def problem_paths(self, source: str, under: str | None) -> frozenset[str]:
        """The paths (as shown) of the files of `source` below `under` that could not be
        indexed (too large, a bad name): they have no files row, so only the survey notices
        them leave."""
        prefix, _ = Index.folder_range(under)
        return frozenset(p["path"] for p in self.index.problems()
                         if p["source"] == source and p["path"].startswith(prefix))

    def note_denied_folders(self, source: str, folders: set[str], report: SyncReport) -> set[str]:
        """A folder that could not be read has a problem, as an unreadable file has: its cards
        left the index (or never came) for a reason the user can fix. Returns the paths (as
        shown) the problems are kept under: the folder with its "/", "./" for the root."""
        shown = {printable(folder) or "./" for folder in folders}
        if not shown:
            return shown
        with nullcontext() if self.index.in_transaction else self.index.transaction():
            for path in sorted(shown):
                self.index.set_problem(source, path, FOLDER_DENIED)
                report.problems.append({"path": path, "message": FOLDER_DENIED})
                report.denied.append((source, path))
        return shown

    def _forget_problems_of_gone_files(self, source: str, gone: frozenset[str] | set[str]) -> None:
        """A file we could not index has its problem go when the file does."""
        if not gone:
            return
        batch = nullcontext() if self.index.in_transaction else self.index.transaction()
        with batch:
            for path in sorted(gone):
                self.index.set_problem(source, path, None)
