"""The store: the SQLite index and every SQL string memsync runs.

    index.py       Index: open, migrate, write a batch of cards, read rows
    migrations.py  the schema as numbered migrations (PRAGMA user_version)
    fields.py      a card's searchable fields (pure)
    fieldstore.py  the rows those fields become; fts.py the full-text tables
    backlinks.py   anchor text from the links pointing at a card
    vaults.py      one index per vault: which index serves which vault
"""
