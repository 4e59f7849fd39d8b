"""A card's searchable fields, as the index stores them. Pure: a Card in, strings and keys out.

Field groups (each an FTS5 column, memsync.store.fts):
- title: the title, the aliases and the file name (Obsidian's names for the note)
- h1: top-level headings, weighted near the title
- headings: every other heading
- tags: frontmatter tags and inline `#tags`
- links: the anchor text of links pointing at the card (filled in by memsync.store.backlinks)
- body: the whole Markdown body
Beside them, the exact keys: each title, alias, file name and heading as a normalised string,
so a query that *is* one of them is found by one index lookup (memsync.search.lexical ranks it first).
"""

from typing import TYPE_CHECKING, NamedTuple

from memsync import cjk
from memsync.pathnames import file_part, stem

if TYPE_CHECKING:  # not loaded by a search (memsync.model)
    from memsync.model.indexing import Card

# Exact-match strength by field: a query equal to a title, alias or file name beats one equal
# to an H1, which beats one equal to any other heading.
EXACT_NAME, EXACT_H1, EXACT_HEADING = 3, 2, 1


class CardFields(NamedTuple):
    title: str
    h1: str
    headings: str
    tags: str
    body: str  # UTF-8 bytes once crossed from a reader process, as Card.body
    tag_set: tuple[str, ...]  # every tag, nested ones with their parents, folded: the --tag filter
    exact: tuple[tuple[str, int], ...]  # (key, strength)
    name: str | None  # folded file stem, what wikilinks resolve by; None for entry cards
    links: tuple[tuple[str, str, str], ...]  # outgoing: (target, its last segment, anchor text)


def key(text: str) -> str:
    """A title, heading or query folded for exact comparison: its words, space-joined.
    Punctuation, case and width do not count (`Base: Create` = `base create`)."""
    return " ".join(cjk.pieces(text))


def fold_tag(tag: str) -> str:
    return cjk.normalize(tag).lstrip("#")


def all_tags(written: list[str], tag_set: list[str]) -> list[str]:
    """A card's tags as a reader should see them: the frontmatter's as written, then the inline
    `#tags` the index found in the body (from tag_set, where they are folded). A tag_set entry
    that is only the parent of a nested one (`a` of `a/b`) is implied by it, so not repeated."""
    have = {fold_tag(t) for t in written}
    inline = [t for t in tag_set if t not in have and not any(o.startswith(t + "/") for o in tag_set)]
    return [*written, *inline]


def link_target(target: str) -> str:
    """A wikilink target as resolution compares it: folded, without `.md` or a leading `/`."""
    folded = cjk.normalize(target.strip()).strip("/")
    return folded[:-3] if folded.endswith(".md") else folded


def card_name(path: str) -> str | None:
    """The folded path without `.md` of a card that is a whole Markdown file, else None: what
    a link's folded target is compared with (memsync.store.backlinks.resolve)."""
    if file_part(path) != path or not path.endswith(".md"):  # an entry of a memory file
        return None
    return cjk.normalize(path[:-3])


def link_name(folded: str) -> str:
    """The one rule matching links to notes: the last segment of a folded target or card name.
    A link is looked up by it, and a note is found under it."""
    return folded.rsplit("/", 1)[-1]


def note_name(path: str) -> str | None:
    """The link name of the card at `path`: its folded file stem, None for an entry card."""
    full = card_name(path)
    return link_name(full) if full else None


def card_fields(card: "Card") -> CardFields:
    from memsync import outline  # its patterns compile at import: the indexer's, not a search's

    name = stem(card.path)
    names = [card.title, *card.aliases]
    if card_name(card.path) and key(name) not in {key(n) for n in names}:
        names.append(name)
    h1 = [text for level, text in card.headings if level == 1]
    other = [text for level, text in card.headings if level > 1]
    tags = [*card.tags, *card.body_tags]
    exact = {}
    for strength, texts in ((EXACT_HEADING, other), (EXACT_H1, h1), (EXACT_NAME, names)):
        for text in texts:
            if key(text):
                exact[key(text)] = strength  # the strongest field wins for a shared key
    return CardFields(
        title=cjk.to_index_text(" ".join(names)),
        # a summary (DESIGN §12) names what the card is about as its top heading does: searched
        # and weighted with the H1s, next to the title
        h1=cjk.to_index_text(" ".join([*h1, *([card.summary] if card.summary else [])])),
        headings=cjk.to_index_text(" ".join(other)),
        tags=cjk.to_index_text(" ".join(tags)),
        body=cjk.to_index_text(card.body),
        tag_set=tuple(sorted({p for t in tags for p in outline.expand_tag(fold_tag(t))})),
        exact=tuple(sorted(exact.items())),
        name=note_name(card.path),
        links=outgoing(card.path, card.links),
    )


def outgoing(path: str, links) -> tuple[tuple[str, str, str], ...]:
    """A card's links as stored: (folded target, its last segment, anchor text). Only a card
    that is a whole note links (an entry of a memory file has no name to be linked back by)."""
    if not card_name(path):
        return ()
    return tuple((t, link_name(t), text) for t, text in
                 ((link_target(target), text) for target, text in links) if t)
