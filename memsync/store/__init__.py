"""The store: the SQLite index and every SQL string memsync runs.

    index.py       Index: open, migrate, write a batch of cards, read rows (its connection is
                   the store's alone: the modules below use it, nothing outside does)
    migrations.py  the schema as numbered migrations (PRAGMA user_version)
    fields.py      a card's searchable fields (pure)
    fieldstore.py  the rows those fields become; fts.py the full-text tables
    backlinks.py   anchor text from the links pointing at a card
    searchsql.py   a search's SQL as text and parameters (pure), run by Index.run
    vectors.py     the rows behind semantic search (memsync.semantic makes arrays of them)
    tally.py       counts: stats, cards per source; health.py doctor's questions of the file
    vaults.py      one index per vault: which index serves which vault
    journal.py     the WAL, and the rollback journal a small load into an empty index takes
"""
