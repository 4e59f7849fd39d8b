"""Human-readable renderings of the result dicts. The dicts themselves are the JSON contract."""

from __future__ import annotations

from . import chars, dates
from .search import codes
from .sizes import mib

# Control characters a note may hold (terminal output pasted with its colours, a NUL byte) are
# shown as their pictures (␛, ␀, ␡; C1 as �): written as they are, they would act on the
# terminal (clear it, set its title, hide what follows). Tabs and line ends stay.
_PICTURES = {c: 0x2400 + c for c in range(0x20) if chr(c) not in "\t\n"}
_PICTURES |= {0x7F: 0x2421, **{c: 0xFFFD for c in range(0x80, 0xA0)}}


def visible(text: str) -> str:
    """`text` safe to print on a terminal (a CRLF line end stays a line end)."""
    return text.replace("\r\n", "\n").translate(_PICTURES)


def _table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max(chars.columns(str(x)) for x in col) for col in zip(headers, *rows)]
    line = lambda cells: "  ".join(chars.pad(str(c), w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def plural(n: int, word: str) -> str:
    """`1 card`, `2,048 cards`."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def mark(text: str, terms: list[str], style) -> str:
    """`text` with every stretch a term covers (any case) passed through `style`: overlapping
    bigrams merge (服务 + 务器 mark 服务器 whole), and a Latin term counts only where a word
    starts, as the index matches it (`a` is not marked inside `data`)."""
    import re

    spans: list[list[int]] = []
    for term in terms:
        guard = "(?<![a-z0-9])" if term[:1].isascii() and term[:1].isalnum() else ""
        found = re.finditer(f"{guard}(?=({re.escape(term)}))", text, re.IGNORECASE)
        spans += [[m.start(1), m.end(1)] for m in found]
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = [], 0
    for start, end in merged:
        out += [text[at:start], style(text[start:end])]
        at = end
    return "".join(out) + text[at:]


# What each tier asked of a card, in a person's words.
TIER_WORDS = {"all": "every word", "all-prefix": "every word (some as a prefix)",
              "any": "some of the words", "any-prefix": "some of the words (some as a prefix)",
              "any-common": "only its common words", "semantic": "by meaning alone"}


def _note(n: dict) -> str:
    """One coded search note (memsync.search.codes) in the CLI's words."""
    if (same := codes.plain_words(n)) is not None:
        return same
    code = n["code"]
    if code == "hidden_invalid":
        return (f"no valid card matched, but {n['count']}{'+' if n['more'] else ''} no longer valid "
                "(superseded) did: search again with --include-invalid to see them")
    if code == "empty":
        if n.get("filters"):
            shown = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in n["filters"].items())
            return f"no card matched with {shown}; try without a filter or other keywords"
        return "no card matched; try fewer or different keywords"
    if code == "hidden_closer":
        return (f"{n['count']}{'+' if n['more'] else ''} no longer valid (superseded) card(s) match "
                f"{TIER_WORDS.get(n['tier'], n['tier'])}, closer than these hits "
                f"({TIER_WORDS.get(n['hits_tier'], n['hits_tier'])}): search again with "
                "--include-invalid to see them")
    if code == "index_empty":
        return "the index is empty: run `memsync index` (or keep `memsync watch` running)"
    if code == "vault_missing":
        return (f"nothing is indexed and the vault folder {n['path']} does not exist: create it, "
                "or name your vault with `memsync init --vault DIR`")
    if code == "vault_empty":
        if not n.get("set_up", True):  # memsync's own folder: the user's notes may be elsewhere
            return (f"memsync's own folder {n['path']} holds no notes, and memsync is not set up "
                    "here yet: run `memsync init` to name the folder of your notes as the vault")
        return (f"the vault {n['path']} holds no notes yet: write one in Obsidian, or save one with "
                "`memsync capture --title T --body ...`")
    if code == "low_confidence":
        if n["apart"]:
            return ("low confidence: the words matched apart, not as written together; "
                    "check that the hits are about what you meant")
        return (f"low confidence: only some query words matched (coverage down to {n['coverage']:.0%}); "
                "retry with fewer, more specific keywords or identifiers")
    if code == "strict_part":
        rests = n.get("rests") or [{"tier": n["rest_tier"], "count": n["rest"]}]
        head = f"{n['strict']} matched {TIER_WORDS.get(n['tier'], n['tier'])}; "
        if len(rests) == 1:
            return head + f"{n['rest']} below matched {TIER_WORDS.get(n['rest_tier'], n['rest_tier'])}"
        return head + f"{n['rest']} below: " + ", then ".join(
            f"{r['count']} {'matched ' if i == 0 else ''}{TIER_WORDS.get(r['tier'], r['tier'])}"
            for i, r in enumerate(rests))
    if code == "more":
        return (f"more cards matched than the {n['shown']} shown; add keywords or a filter to narrow"
                + (f", or raise the limit (up to {n['max']})" if n["shown"] < n["max"] else ""))
    if code == "meaning_only":
        return ("no card contains these words; these hits were found by meaning alone "
                "(matched: semantic): check that they are about what you meant")
    if code == "no_vectors":
        return ("no card has a vector yet, so this searched by words only: run `memsync index "
                "--embed`, or set \"semantic\": true in config.json for the watcher to embed them")
    return code  # a code this edge does not know yet is still said


def search_note(notes: list[dict]) -> str | None:
    """A search result's notes as one line (the JSON `note` field, and what stderr shows)."""
    return "; ".join(_note(n) for n in notes) or None


def _explain(hit: dict) -> list[str]:
    e = hit.get("explain")
    if not e:
        return []
    parts = ", ".join(f"{k} {v:.3g}" for k, v in e.get("parts", {}).items())
    line = f"    why: {e['tier']}" + (f"; {parts}" if parts else "")
    if e.get("fields"):
        line += f"; fields {', '.join(e['fields'])}"
    if e.get("coverage") is not None:
        line += f"; coverage {e['coverage']:.0%}"
    use = e.get("use")
    if not use:
        return [line]
    counts = ", ".join(f"{k} {use[k]}" for k in ("returned", "opened", "helpful", "unhelpful"))
    return [line, f"    use: {counts}" + (f"; prior {use['boost']:+.3g}" if use.get("boost") else "")]


def explain_tiers(data: dict) -> str:
    """The FTS5 MATCH expression of each tier that ran (`--explain`)."""
    tiers = (data.get("explain") or {}).get("tiers") or []
    return "\n".join(f"tier {t['tier']}: {t['hits']} hit(s); MATCH {t['match']}" for t in tiers)


def search(data: dict, highlight=None) -> str:
    """The hits, one block each; the note is the caller's to print (on stderr, for people)."""
    if not data["hits"]:
        return search_note(data.get("notes") or []) or "no match"
    out = []
    for hit in data["hits"]:
        flags = [] if hit["valid"] else ["INVALID"]
        if hit["coverage"] is not None:
            flags.append(f"coverage {hit['coverage']:.0%}")
        extra = f"  [{', '.join(flags)}]" if flags else ""
        snippet = visible(hit["snippet"])
        out.append(
            f"{hit['id']}  {visible(hit['title'])}  ({hit['source']}:{visible(hit['path'])}, "
            f"{hit['matched']}, {hit['score']:.2f}){extra}\n"
            f"    {highlight(snippet) if highlight else snippet}"
        )
        out += _explain(hit)
    return "\n".join(out)


def show(data: dict) -> str:
    head = f"# {visible(data['title'])}\n({data['source']}:{visible(data['path'])}, id {data['id']})\n"
    what = [data["kind"]] if data.get("kind") else []
    if data.get("tags"):  # what --tag finds it by, inline #tags included (as memory_get shows)
        what.append(visible("#" + " #".join(data["tags"])))
    if what:
        head += " · ".join(what) + "\n"
    if data.get("summary"):
        head += f"summary: {visible(data['summary'])}\n"
    if data.get("use"):
        head += use_line(data["use"]) + "\n"
    return head + "\n" + visible(data["text"]) + (f"\n\n{data['hint']}" if data.get("hint") else "")


def use_line(use: dict) -> str:
    """`returned 12 · opened 3 · helpful 1 · unhelpful 0 · last returned 2026-09-12`."""
    parts = [f"{key} {use[key]}" for key in ("returned", "opened", "helpful", "unhelpful")]
    if use.get("last_returned"):
        parts.append(f"last returned {dates.here(str(use['last_returned']))[:10]}")
    return " · ".join(parts)


def index_report(data: dict) -> str:
    parts = [f"{data[k]} {k}" for k in ("scanned", "added", "updated", "removed", "moved",
                                         "unchanged", "hashed") if k in data]
    text = ", ".join(parts) + f" in {data['seconds']:.2f}s"
    for problem in data.get("problems", [])[:20]:
        text += f"\n  problem: {visible(problem['path'])}: {problem['message']}"
    recovered = data.get("recovered")
    if recovered:
        text = "\n".join([*recovery_lines(recovered), text])
    return text


def recovery_lines(recovered: dict) -> list[str]:
    """What replacing a damaged index file kept and lost (memsync.store.salvage.recover)."""
    saved = recovered["saved"]
    lines = [f"the index was damaged ({recovered['damaged']}): rebuilt it from the files; the "
             f"damaged file is kept as {recovered['kept_as']}",
             f"  carried over: {saved.get('card_ids', 0)} ids, {saved.get('card_stats', 0)} read "
             "counts" + "".join(f", {n} rows of {t}" for t, n in saved.items()
                                if t not in ("card_ids", "card_stats") and n)]
    lines += [f"  not saved: {lost}" for lost in recovered["lost"]]
    return lines


def semantic_status(s: dict) -> str:
    state = "on" if s["enabled"] else "off"
    if not s["installed"]:
        state += ", model not installed"
    eta = s.get("eta_seconds")
    left = (f", about {eta // 60} min {eta % 60} s to go" if eta else
            ", rate not measured yet" if s["pending"] and eta is None else "")
    return f"semantic: {state}; {s['with_vectors']} of {s['cards']} cards have vectors{left}"


def embed_report(data: dict) -> str:
    return "\n".join([f"{data['embedded']} embedded ({data['passages']} passages), {data['reused']} reused, "
                      f"{data['pending']} pending in {data['seconds']:.2f}s",
                      *(f"warning: {w}" for w in data.get("warnings") or [])])


def _unreadable(trash: dict) -> str:
    hidden = trash.get("unreadable_folders") or []
    return (f"; not counted: {', '.join(hidden)}, which may not be read (permission denied; "
            "chmod u+rx, from the vault, to count them)") if hidden else ""


def stats(data: dict) -> str:
    lines = [
        f"cards: {data['cards']} ({data['valid']} valid, {data['invalid']} invalid)",
        "by kind: " + ", ".join(f"{k} {v}" for k, v in data["by_kind"].items()),
        "by source: " + ", ".join(f"{k} {v}" for k, v in data["by_source"].items()),
        f"last change: {data['last_change'] or 'never'}",
        f"reads recorded: {data['reads']}",
        f"trash: {data['trash']['files']} files, {mib(data['trash']['bytes'])}" + _unreadable(data["trash"]),
        f"index: {data['index']['path']} ({mib(data['index']['bytes'])})",
    ]
    watcher = data.get("watcher", {})
    lines.append(f"watcher: live (pid {watcher['pid']})" if watcher.get("live") else "watcher: not running")
    if data.get("semantic"):
        lines.append(semantic_status(data["semantic"]))
    if data["problems"]:
        lines.append(f"problems ({len(data['problems'])}):")
        lines += [f"  {p['source']}:{visible(p['path'])}: {p['message']}" for p in data["problems"][:50]]
    lines += [f"problem: {problem}" for problem in data.get("config_problems", [])]
    if data.get("unfinished"):
        lines.append(f"unfinished: {data['unfinished']}")
    if data.get("reminder"):
        lines.append(f"reminder: {data['reminder']}")
    return "\n".join(lines)


def paths(data: dict) -> str:
    rows = [[name, data[name]["path"], data[name]["from"]] for name in ("home", "db", "vault")]
    if data["db"]["from"] == "vault":  # memsync.store.vaults: not the home's memsync.db
        rows[1][2] = "vault (this vault's own index)"
    rows.append(["config", data["config"]["path"], "exists" if data["config"]["exists"] else "absent"])
    text = _table(rows, ["what", "path", "from"])
    text += "\n\nsources:\n" + _table(
        [[s["name"], s["adapter"], "writable" if s["writable"] else "read-only", s["path"]]
         for s in data["sources"]],
        ["name", "adapter", "mode", "path"],
    )
    if not data["set_up"]:
        text += ("\n\nnot set up here yet: `memsync init` asks which folder is your vault and "
                 "writes it into config.json")
    for problem in data.get("problems", []):
        text += f"\nproblem: {problem}"
    return text


def write_result(data: dict) -> str:
    head = data["status"]
    if data.get("path"):
        head += f": {data['path']}"
    if data.get("id"):
        head += f" (id {data['id']})"
    lines = [head]
    for key in ("changed", "existing_path", "collision_paths", "trash_path",
                "note", "reminder"):
        value = data.get(key)
        if value:
            shown = ", ".join(map(str, value)) if isinstance(value, list) else value
            lines.append(f"  {key.replace('_', ' ')}: {shown}")
    for warning in data.get("warnings") or []:
        lines.append(f"  warning: {warning}")
    if data.get("indexed") is False:
        lines.append("  the file is saved but not indexed yet; run `memsync index`")
    return "\n".join(lines)
