"""The store: the SQLite index and every SQL string memsync runs.

    index.py       Index: write a batch of cards, read rows (its connection is the store's
                   alone: the modules below use it, nothing outside does)
    connection.py  opening the file (made private, WAL, migrated); failures in the user's words
    bulkload.py    Index's bulk loads: a rebuild, a first index, a big change
    cardids.py     Index's card ids: derived from the path, bound, moved, retired
    migrations.py  the schema as numbered migrations (PRAGMA user_version), run in order;
                   the steps: schema_cards.py (1-7), schema_lifecycle.py (8 on)
    fields.py      a card's searchable fields (pure)
    fieldstore.py  the rows those fields become; fts.py the full-text tables
    backlinks.py   anchor text from the links pointing at a card
    searchsql.py   a search's SQL as text and parameters (pure), run by Index.run
    stems.py       the stems FTS5's porter gives words, from a small in-memory table
    vectors.py     the rows behind semantic search (memsync.semantic makes arrays of them)
    tally.py       counts: stats, cards per source; health.py doctor's questions of the file
    vaults.py      one index per vault: which index serves which vault
    journal.py     the WAL, and the rollback journal a small load into an empty index takes
    setaside.py    secondary indexes set aside during a bulk load, made again after it
    folderstamps.py  the folder stamps a reconcile skips unchanged folders by
    brief.py       the reads behind `memsync brief`; lifelog.py the retrieval log and card use
    salvage.py     a damaged index: tell it, save what has no second source, set it aside
"""
