"""A card's text on the way in: rendering a new card, checking an edit reads back as meant.

Pure: strings in, strings (or a refusal) out. The parser (memsync.notes) is the judge of both:
what capture renders must parse back to the same fields, and a line-level edit must change the
asked-for fields and nothing else, or it is not written.
"""

from __future__ import annotations

from memsync import notes
from memsync.errors import Rejected
from memsync.model.indexing import Card
from memsync.sizes import size_and_cap
from memsync.write import frontmatter_edit as fe
from memsync.write import rules

FIELDS = ("title", "body", "kind", "tags", "aliases", "created", "updated", "invalid_at",
          "superseded_by", "supersedes", "priority", "ttl", "summary")


def render(title: str, kind: str | None, tags: list[str], when: str, body: str,
           supersedes: str | None = None, summary: str | None = None, extra: str = "") -> str:
    """A new card's text. Values are quoted only where YAML would misread them. `extra`: more
    frontmatter lines, as written (the keys a supersede carries over), after the tags."""
    lines = ["---", f"title: {fe.scalar(title)}"]
    if summary:
        lines.append(f"summary: {fe.scalar(summary)}")
    if kind:
        lines.append(f"kind: {fe.scalar(kind)}")
    lines.append(f"tags: {fe.flow_list(tags)}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines += [f"created: {when}", f"updated: {when}"]
    if supersedes:
        lines.append(f"supersedes: {fe.scalar(supersedes)}")
    return "\n".join(lines) + "\n---\n" + body + "\n"


def new_card_problem(body: str, data: bytes, max_bytes: int) -> str | None:
    """Why a new card is refused, or None."""
    return size_problem(data, max_bytes) or rules.body_problem(body)


def size_problem(data: bytes, max_bytes: int) -> str | None:
    """Why a card's text is refused for its size, or None: over `max_bytes` the indexer skips
    the file, so the card would silently drop out of search."""
    if len(data) > max_bytes:
        size, cap = size_and_cap(len(data), max_bytes)
        return f"the card would be {size}, over the {cap} the index reads; split it into several cards"
    return None


def verify_edit(new_text: str, before: Card, expect: dict) -> None:
    """Read the edited text back: the asked-for fields changed, every other field did not."""
    after = notes.parse(new_text.encode("utf-8"), before.path, outline_too=False)  # not in FIELDS
    wrong = [f for f in FIELDS
             if getattr(after, f) != expect.get(f, getattr(before, f))
             and not (f == "body" and rules.clean_body(after.body) == expect.get(f, rules.clean_body(before.body)))]
    if after.problem or wrong:
        raise Rejected(
            f"could not change {before.path} by editing single lines (fields {', '.join(wrong) or 'parsed'} "
            "would come out wrong: the frontmatter uses a layout memsync does not edit); "
            "nothing was written, edit the file by hand"
        )
