"""Keeping the memory clean as it grows (DESIGN §12): summaries, the retrieval log, feedback,
the audit and consolidation. Each module is one concept; SQL lives in memsync.store.lifelog.
Importing this package loads nothing: `memsync search` pulls in only what it uses."""
