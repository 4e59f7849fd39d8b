"""Search: planning a query and ranking cards for it.

    query.py    the FTS5 MATCH expression of each tier (pure)
    ranking.py  field scores and priors into one score (pure)
    snippets.py what a hit shows: its summary or a window of its body (pure)
    lexical.py  the Searcher seam and the lexical searcher
The hybrid searcher lives in memsync.semantic, which holds the model.
"""
