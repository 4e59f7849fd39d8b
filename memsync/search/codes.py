"""What a search says about its result, as coded values: each edge words them its own way.

A note is a code and its data, never prose: the CLI (memsync.output) writes it for a person,
with flags (`--include-invalid`); the MCP edge (memsync.mcp.text) for a model, with tool
arguments (`include_invalid=true`). A wording change in one edge cannot change what the other
says, and no edge reads another's sentences. Pure.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

# Why nothing was found (at most one of these, and only on an empty page)
NO_KIND = "no_kind"  # {kind, kinds: the kinds in the index}
NO_TAG = "no_tag"  # {tag}
HIDDEN_INVALID = "hidden_invalid"  # {count, more}: only superseded cards matched
EMPTY = "empty"  # {filters: {name: value}}: nothing matched, with these filters if any
INDEX_EMPTY = "index_empty"  # the index holds no card yet (memsync.api)
VAULT_MISSING = "vault_missing"  # {path}: the index holds no card, and the vault folder is not there
# {path, set_up}: the vault was indexed and holds no note yet; set_up false: no vault was ever
# named (memsync's own folder, before `memsync init`)
VAULT_EMPTY = "vault_empty"
INDEX_BUILDING = "index_building"  # the MCP server's first index is still running
# What the page is
LOW_CONFIDENCE = "low_confidence"  # {coverage, apart}: only loose tiers matched
# {strict, tier, rest, rest_tier, rests: [{tier, count}] for every tier below, in page order}:
# where the strict part ends
STRICT_PART = "strict_part"
MORE = "more"  # {shown, max}: more cards matched than the page holds
MEANING_ONLY = "meaning_only"  # the hybrid found cards by meaning alone, none holds the words
NO_VECTORS = "no_vectors"  # meaning was asked for, but no card has a vector yet: words only
# {count, more, tier, hits_tier}: superseded cards match more strictly (tier) than the hits do
HIDDEN_CLOSER = "hidden_closer"
LIMIT_CLAMPED = "limit_clamped"  # {asked, used, max}: the MCP limit was out of range


class Note(NamedTuple):
    code: str
    data: Mapping[str, Any] = MappingProxyType({})  # read-only: the default is shared

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, **self.data}


def of(notes: list[dict[str, Any]] | None, code: str) -> dict[str, Any] | None:
    """The note with `code` among a result's notes (as dicts), or None."""
    return next((n for n in notes or [] if n.get("code") == code), None)


def plain_words(n: dict[str, Any]) -> str | None:
    """The notes that read the same to a person (CLI) and to a model (MCP text): no flag or
    tool argument in them. None for the others, which each edge words itself."""
    code = n.get("code")
    if code == NO_KIND:
        return f"no card has kind {n['kind']!r}; kinds in the index: {', '.join(n['kinds']) or 'none'}"
    if code == NO_TAG:
        return f"no card has the tag {n['tag']!r} (frontmatter or inline #tags; a/b is found by a too)"
    return None
