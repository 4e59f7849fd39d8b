"""The text a model reads from a tool reply: a compact rendering of the result dict.

This text is all a model sees of a reply (structured content, the CLI's `--json` objects, goes
out only with `memsync mcp --structured`), so it carries what a model acts on, never as JSON,
in as few bytes as reads clearly. Fields
it does not know (added to a result later) are still shown, as `key: value` lines, so nothing
new is hidden from a client that reads only text. Pure: dicts in, strings out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memsync.search import codes

# Hit fields the hit block shows in its own way (or leaves out: the score only orders the list,
# and the order is already there; the folder mostly says the kind).
_HIT_SHOWN = {"id", "title", "path", "source", "kind", "matched", "coverage", "snippet", "valid", "score",
              "inlinks"}
_CARD_SHOWN = {"id", "title", "path", "source", "kind", "tags", "updated", "valid", "text",
               "offset", "length", "returned", "has_more", "next_offset", "created", "invalid_at",
               "superseded_by", "supersedes", "use", "hint"}


def value(v) -> str:
    """A field value on one line: lists comma-joined, maps as `key value` pairs."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ", ".join(value(x) if not isinstance(x, dict) else _pairs(x) for x in v)
    if isinstance(v, dict):
        return _pairs(v)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _pairs(d: dict) -> str:
    return ", ".join(f"{k} {json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else value(v)}"
                     for k, v in d.items() if v is not None)


def _empty(v) -> bool:
    return v is None or v == [] or v == {} or v == ""


def fields(data: dict, skip=()) -> list[str]:
    """`key: value` lines for every field not skipped and not empty."""
    return [f"{k}: {value(v)}" for k, v in data.items() if k not in skip and not _empty(v)]


def _where(item: dict) -> str:
    source = item.get("source")
    return item["path"] if source in (None, "vault") else f"{source}:{item['path']}"


def _folder(where: str) -> tuple[str, str]:
    """`03-Knowledge/nginx.md` -> (`03-Knowledge/`, `nginx.md`); a file at the top has no folder."""
    cut = where.rfind("/") + 1 or where.find(":") + 1
    return where[:cut], where[cut:]


def search(data: dict) -> str:
    """A head (`10+ hits (matched: all)`), then per hit `id title`, its file with any notes in
    brackets, and the snippet. Hits in the same folder as the hit before them sit under one
    `in FOLDER` line (as `rg --heading` groups by file): a folder is said once, not per hit."""
    hits = data.get("hits") or []
    tier = data.get("matched")
    head = f"{len(hits)}{'+' if data.get('more') else ''} hit{'' if len(hits) == 1 else 's'}"
    head += f" (matched: {tier})" if tier else ""
    lines, folder = [head], None
    for hit in hits:
        tags = []
        if hit.get("matched") and hit["matched"] != tier:
            tags.append(hit["matched"])
        if hit.get("coverage") is not None:
            tags.append(f"coverage {hit['coverage']:.0%}")
        if hit.get("valid") is False:
            tags.append("INVALID")
        if hit.get("inlinks"):  # most cards have none: said only when there are some
            tags.append(f"inlinks {hit['inlinks']}")
        tags += [f"{k} {value(v)}" for k, v in hit.items() if k not in _HIT_SHOWN and not _empty(v)]
        where, name = _folder(_where(hit))
        if where != folder:
            folder = where
            lines.append(f"in {where or './'}")
        lines.append(f"{hit['id']} {hit['title']} ({name})" + (f" [{'; '.join(tags)}]" if tags else ""))
        if hit.get("snippet"):
            lines.append(hit["snippet"])
    rest = {k: v for k, v in data.items() if k not in ("query", "matched", "hits", "more", "note", "notes",
                                                        "terms")}
    said = search_note(data.get("notes") or [])
    tail = ([said] if said else []) + fields(rest)
    return "\n".join(lines + ([""] + tail if tail else []))


# What each tier asked of a card, in a model's words.
_TIER = {"all": "every word", "all-prefix": "every word (some as prefixes)", "any": "some words",
         "any-prefix": "some words (some as prefixes)", "any-common": "common words only",
         "semantic": "meaning only"}


def _note(n: dict) -> str | None:
    """One coded search note (memsync.search.codes) for a model: tool arguments, not flags.
    `more` says nothing here: the `N+ hits` head says it, and the tool's description says
    what to do about it (once per session, not in every reply)."""
    if (same := codes.plain_words(n)) is not None:
        return same
    code = n.get("code")
    if code == "hidden_invalid":
        return (f"no valid card matched, but {n['count']}{'+' if n['more'] else ''} no longer valid "
                "(superseded) did: search again with include_invalid=true to see them")
    if code == "empty":
        if n.get("filters"):
            shown = ", ".join(f"{k}={v}" for k, v in n["filters"].items())
            return f"no card matched with {shown}; try without a filter or other keywords"
        return "no card matched; try fewer or different keywords"
    if code == "index_empty":
        return "the index is empty: run the memory_reindex tool"
    if code == "vault_missing":
        return (f"nothing is indexed and the vault folder {n['path']} does not exist; the user can "
                "create it, or name the vault with `memsync init --vault DIR`")
    if code == "vault_empty":
        return (f"the vault {n['path']} holds no notes yet: save what is worth keeping with memory_capture"
                + ("" if n.get("set_up", True) else "; if the user's notes are in another folder, "
                   "`memsync init` names it as the vault"))
    if code == "hidden_closer":
        return (f"{n['count']}{'+' if n['more'] else ''} no longer valid (superseded) card(s) match "
                f"{_TIER.get(n['tier'], n['tier'])}, closer than these hits "
                f"({_TIER.get(n['hits_tier'], n['hits_tier'])}): search again with include_invalid=true")
    if code == "limit_clamped":
        return f"limit {n['asked']} is outside 1-{n['max']}, so {n['used']} was used"
    if code == "index_building":
        return "the index is still being built after start: retry in a moment if you expected a hit"
    if code == "low_confidence":
        if n["apart"]:
            return "low confidence: the words matched apart, not as written together"
        return (f"low confidence: only some query words matched (coverage down to {n['coverage']:.0%}); "
                "retry with fewer, more specific keywords or identifiers")
    if code == "strict_part":
        rests = n.get("rests") or [{"tier": n["rest_tier"], "count": n["rest"]}]
        head = f"the first {n['strict']} matched {_TIER.get(n['tier'], n['tier'])}; "
        if len(rests) == 1:
            return head + f"the {n['rest']} after them {_TIER.get(n['rest_tier'], n['rest_tier'])}"
        return head + f"the {n['rest']} after them: " + ", then ".join(
            f"{r['count']} {_TIER.get(r['tier'], r['tier'])}" for r in rests)
    if code == "more":
        return None
    if code == "meaning_only":
        return "no card contains these words; these hits were found by meaning alone (matched: semantic)"
    if code == "no_vectors":
        return ("no card has a vector yet, so this searched by words only; the user can make them "
                "with `memsync index --embed`, or \"semantic\": true in config.json")
    return str(code)


def search_note(notes: list[dict]) -> str | None:
    """A search's notes in one line, in a model's words (the reply text and the `note` field)."""
    return "; ".join(t for t in map(_note, notes) if t) or None


def card(data: dict) -> str:
    """`# title`, one line of where and what, any field it does not know, then the text once."""
    meta = [_where(data)]
    if data.get("kind"):
        meta.append(data["kind"])
    if data.get("tags"):
        meta.append("#" + " #".join(data["tags"]))
    if data.get("updated"):
        meta.append(f"updated {str(data['updated'])[:10]}")
    if data.get("valid") is False:
        meta.append("INVALID")
    head = f"# {data['title']}\nid {data['id']} · " + " · ".join(meta)
    use = data.get("use")
    if use:  # how the card has served so far (memsync.lifecycle): counts only, no timestamps
        head += "\nuse: " + ", ".join(f"{k} {use[k]}" for k in ("returned", "opened", "helpful", "unhelpful"))
    text = (data.get("text") or "") + (f"\n\n{data['hint']}" if data.get("hint") else "")
    return "\n".join([head, *fields(data, skip=_CARD_SHOWN), "", text]).rstrip() + "\n"


def write(data: dict) -> str:
    """A write result: `status path (id N)`, then every other field that says something."""
    head = str(data.get("status", "done"))
    if data.get("path"):
        head += f" {data['path']}"
    if data.get("id") is not None:
        head += f" (id {data['id']})"
    return "\n".join([head, *fields(data, skip={"status", "path", "id"})])


def stats(data: dict) -> str:
    """memory_stats: as generic; a watcher still starting is said as such, not as `live false`
    (which reads as: nothing will keep the index live)."""
    if (data.get("watcher") or {}).get("starting"):
        data = {**data, "watcher": "starting (this server's; the index is live once its start-up pass ends)"}
    return generic(data)


def generic(data: dict) -> str:
    """Stats and index reports: every field that says something, one line each, but lists of
    records (parse problems, a check's findings) one to a line, as `memsync stats`, `memsync
    index` and `memsync doctor` print them: joined on one line they ran together into a wall of
    `source vault, path …, message …`."""
    lines: list[str] = []
    for key, v in data.items():
        block = _BLOCKS.get(key)
        if block is not None and not _empty(v):
            lines += block(v)
        else:
            lines += fields({key: v})
    return "\n".join(lines)


def _problems(problems: list) -> list[str]:
    return [f"problems ({len(problems)}):",
            *(f"  {_where(p)}: {p.get('message')}" if isinstance(p, dict) and "path" in p else f"  {value(p)}"
              for p in problems)]


def _doctor(summary: dict) -> list[str]:
    findings = summary.get("findings") or []
    if not findings:
        return ["doctor: sound" if summary.get("sound") else f"doctor: {_pairs(summary)}"]
    lines = [f"doctor: {len(findings)} finding{'s' if len(findings) > 1 else ''}:"]
    for f in findings:
        lines.append(f"  {f.get('check')}: {f.get('message')}")
        if f.get("fix"):
            lines.append(f"    fix: {f['fix']}")
    return lines


def _audit(summary: dict) -> list[str]:
    counts = summary.get("counts") or {}
    groups = summary.get("duplicates") or []
    lines = ["audit: " + (", ".join(f"{k.replace('_', ' ')} {n}" for k, n in counts.items()) or "nothing to tidy")]
    lines += [f"  duplicates: {', '.join(map(str, ids))}" for ids in groups]
    lines += [f"  {k}: {value(v)}" for k, v in summary.items()
              if k not in ("counts", "duplicates") and not _empty(v)]
    return lines


_BLOCKS: dict[str, Callable[[Any], list[str]]] = {"problems": _problems, "doctor": _doctor, "audit": _audit}
