"""The write side: every change memsync makes to a vault's Markdown.

    vault.py             capture, update, supersede, delete, restore, purge: the door
    vaultio.py           where a write may land, reading a card to change it
    cardtext.py          a card's text on the way in; rules.py the rules needing no disk
    frontmatter_edit.py  editing frontmatter keys without disturbing other lines
    supersede.py         the two-file write, journaled; trash.py soft delete
    runs.py              many files as one write (consolidate), saved both ways, undoable
    pairs.py             a supersede pair's two pointers checked, a dangling one dropped
    trashsize.py         how much the trash holds, and the reminder to empty it
    atomic.py            all-or-nothing file writes; journal.py the write-ahead journal
"""
