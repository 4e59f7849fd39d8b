"""Keeping the memory clean: log, feedback, audit, consolidate (memsync.lifecycle)."""

from __future__ import annotations

import click

from .. import dates
from ..output import search_note, use_line
from . import CARD_ID, Context, command, emit, main, waiting_note


def _log_text(data: dict) -> str:
    if data.get("unknown_card"):
        return "no card has this id, so no search returned it; find ids with `memsync search`"
    if not data["entries"]:
        if data["total"]:
            held = f"{data['total']:,} " + ("entry" if data["total"] == 1 else "entries")
            return f"no search in the retrieval log matches ({held} in all)"
        off = "" if data["logging"] else " (\"log_searches\": false in config.json)"
        return f"the retrieval log is empty{off}"
    lines = []
    for entry in data["entries"]:
        opened = set(entry["opened"])
        hits = " ".join(f"{h['id']}{'*' if h['id'] in opened else ''}" for h in entry["hits"]) or "-"
        filters = " ".join(f"{k}={v}" for k, v in entry["filters"].items() if k != "limit")
        who = f" [{entry['client']}]" if entry["client"] else ""
        lines.append(f"{dates.here(entry['at'])}{who}  {entry['query']!r} {filters}".rstrip())
        lines.append(f"    {entry['matched'] or 'no hit'}: {hits}")
    lines.append(f"({len(data['entries'])} of {data['total']} entries; * = opened afterwards)")
    return "\n".join(lines)


@command(main, "log")
@click.option("-n", "limit", type=click.IntRange(min=1), default=20, show_default=True, help="Entries to show, newest first.")
@click.option("--query", help="Only searches whose query holds this text.")
@click.option("--card", "card_id", type=CARD_ID, help="Only searches that returned this card id.")
def log(obj: Context, as_json: bool, limit, query, card_id):
    """The retrieval log: each search, its hits with scores, and which were opened.

    \b
    Example:
      memsync log -n 5
      memsync log --card 1234567 --json
    """
    from memsync.lifecycle import log as retrieval_log

    emit(retrieval_log.read(obj.cfg, limit, query, card_id), as_json, _log_text)


@command(main, "feedback")
@click.argument("card_id", type=CARD_ID)
@click.option("--helpful", is_flag=True, help="The card helped.")
@click.option("--unhelpful", is_flag=True, help="The card was found but did not help.")
@click.option("--query", help="The search it answered (default: the latest logged one that returned it).")
def feedback(obj: Context, as_json: bool, card_id, helpful, unhelpful, query):
    """Say whether a card helped; audit and ranking read it.

    \b
    Example:
      memsync feedback 1234567 --helpful
      memsync feedback 1234567 --unhelpful --query "nginx root"
    """
    from memsync.errors import BadArgument
    from memsync.lifecycle import feedback as fb

    if helpful == unhelpful:
        raise BadArgument("give one of --helpful or --unhelpful" + (", not both" if helpful else ""))
    verdict = "helpful" if helpful else "unhelpful"
    emit(fb.give_cfg(obj.cfg, card_id, verdict, query), as_json,
         lambda d: f"{d['feedback']}: {d['path']} (id {d['id']})\n{use_line(d['use'])}")



_SECTIONS = {
    "long_without_summary": ("long cards without a summary", lambda e: f"{e['chars']} chars"),
    "not_returned": ("not returned by any search lately", lambda e: f"last {e['last_returned'] or 'never'}"),
    "returned_never_opened": ("often returned, never opened", lambda e: f"returned {e['returned']}"),
    "unhelpful": ("marked unhelpful", lambda e: f"unhelpful {e['unhelpful']}, helpful {e['helpful']}"),
    "misfiled": ("kind disagrees with the folder rules", lambda e: f"{e['kind']} belongs in {e['folder']}/"),
    "expired": ("expired without a successor", lambda e: f"invalid_at {e['invalid_at']}"),
}


def _audit_text(data: dict) -> str:
    counts = data["counts"]
    lines = [f"audit of {data['cards']} cards ({data['valid']} valid) in {data['seconds']:.1f}s"]
    groups = data["duplicates"]
    lines.append(f"\nnear-duplicates: {counts['duplicates']} group(s) at similarity >= {data['threshold']}")
    for group in groups:
        lines.append(f"  similarity {group['similarity']}: keep {group['keeper']} ({group['why']})")
        for card in group["cards"]:
            mark = "keep " if card["keeper"] else ("merge" if card["merge"] else "list ")
            note = " (protected)" if card.get("protected") else (" (read-only)" if card.get("read_only") else "")
            lines.append(f"    {mark} {card['id']}  {card['source']}:{card['path']}{note}")
    for name, (label, detail) in _SECTIONS.items():
        if counts[name]:
            lines.append(f"\n{label}: {counts[name]}")
            lines += [f"  {e['id']}  {e['source']}:{e['path']}  ({detail(e)})" for e in data[name]]
            if counts[name] > len(data[name]):
                lines.append(f"  ... and {counts[name] - len(data[name])} more (--json lists {len(data[name])})")
    if not data["not_returned_known"]:
        lines.append(f"\n{_SECTIONS['not_returned'][0]}: not known {_why_unknown(data)}")
    if counts["loose_chains"]:
        lines.append(f"\nsupersede chains with loose ends: {counts['loose_chains']}")
        lines += [f"  {e['message']}\n    fix: {e['fix']}" for e in data["loose_chains"]]
    if data.get("notes"):  # no card, because none was ever indexed: not a clean memory
        lines.append(search_note(data["notes"]) or "")
    elif not any(counts.values()):
        lines.append("nothing to tidy")
    elif any(counts[k] for k in ("duplicates", "long_without_summary", "misfiled")):
        lines.append("\n`memsync consolidate` shows the plan for duplicates, summaries and folders")
    return "\n".join(lines)


def _why_unknown(data: dict) -> str:
    """Why the audit cannot yet tell which cards no search returned in stale_days days."""
    if not data["logging"]:
        return "(the retrieval log is off: \"log_searches\": false in config.json)"
    if not data["log_since"]:
        return "yet (no search has been logged)"
    return (f"yet (the retrieval log began {data['log_since'][:10]}; cards are listed once it spans "
            f"{data['stale_days']} days, `stale_days` in config.json)")


@command(main, "audit")
@click.option("--threshold", type=click.FloatRange(0.05, 1.0),
              help="Similarity from which cards are near-duplicates (default: config.json, 0.55).")
def audit(obj: Context, as_json: bool, threshold):
    """Report what keeps the memory from staying clean; changes nothing.

    Near-duplicates (with the card to keep and why), long cards without a summary, cards no
    search returned lately, cards returned but never opened or marked unhelpful, kinds that
    disagree with the folder rules of config.json, loose supersede chains, expired cards.

    \b
    Example:
      memsync audit
      memsync audit --json --threshold 0.7
    """
    from memsync.lifecycle import audit as auditing

    emit(auditing.audit(obj.cfg, threshold), as_json, _audit_text)


def _recovered_lines(data: dict) -> list[str]:
    """What the start of this command settled of a run a killed process left."""
    return [f"an interrupted run {r['run']}" + (f" ({r['direction']})" if r.get("direction") else "")
            + f": {r['action']}" for r in data.get("recovered") or []]


def _plan_text(data: dict) -> str:
    if "status" in data:  # an undo
        return "\n".join([*_recovered_lines(data), f"{data['status']}: run {data['run']}"
                           + (f" ({data['files']} files)" if "files" in data else "")])
    head = "applied" if data["applied"] else "plan (nothing changed; --apply to carry it out)"
    lines = [*_recovered_lines(data),
             f"{head}: {len(data['merges'])} merge(s), {len(data['summaries'])} summary(ies), "
             f"{len(data['moves'])} move(s), {data['files']} file(s)"]
    for merge in data["merges"]:
        lines.append(f"merge into {merge['keeper']} {merge['path']} ({merge['why']}):")
        lines += [f"    {m['id']} {m['path']} (similarity {m['similarity']}) -> superseded by it"
                  for m in merge["merged"]]
        lines.append(f"    the keeper gains {len(merge['sentences_added'])} sentence(s)")
    for item in data["summaries"]:
        lines.append(f"summary for {item['id']} {item['path']}: {item['summary']}")
    for move in data["moves"]:
        lines.append(f"move {move['id']} {move['from']} -> {move['to']} (kind {move['kind']})")
    for skip in data["skipped"]:
        what = skip.get("path") or skip.get("keeper") or skip.get("id")
        if skip.get("source", "vault") != "vault":  # a path alone reads as the vault's
            what = f"{skip['source']}:{what}"
        lines.append(f"left alone ({skip['step']}) {what}: {skip['why']}")
    if data.get("not_indexed"):
        lines.append(_not_indexed_line(data["not_indexed"]))
    if data.get("notes"):
        lines.append(search_note(data["notes"]) or "")
    if data.get("plan"):
        lines.append(f"carried out as saved in {data['plan']}" if data.get("run") else
                     f"nothing of the plan saved in {data['plan']} was left to carry out; nothing changed")
    if data.get("differs_from"):
        lines.append(f"note: this plan was made now, from the files as they are, and differs from the one "
                     f"saved in {data['differs_from']}; `--apply --plan` carries out a saved plan as it was saved")
    if data.get("run"):
        lines.append(f"run {data['run']}; undo with `{data['undo']}`")
    if "saved" in data and data["saved"] is None:
        lines.append("nothing to tidy, so no plan was saved")
    elif data.get("saved"):
        lines.append(f"plan saved to {data['saved']}" + (
            f" (the plan saved before it today stays in {data['kept']})" if data.get("kept") else ""))
    return "\n".join(lines)


def _not_indexed_line(counts: dict) -> str:
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for word, n in
             (("file", counts["files"]), ("folder", counts["folders"])) if n]
    verb = "is" if sum(counts.values()) == 1 else "are"
    return (f"{' and '.join(parts)} of the vault {verb} not in the index (too large, no permission "
            "to read, a name that is not UTF-8), so not in this plan: `memsync doctor` lists them "
            "and what to do")


@command(main, "consolidate")
@click.option("--apply", "apply_it", is_flag=True, help="Carry the plan out (journaled; undoable).")
@click.option("--undo", "run", metavar="RUN", help="Put back, byte for byte, every file a run changed.")
@click.option("--threshold", type=click.FloatRange(0.05, 1.0), help="Duplicate similarity (default: config.json).")
@click.option("--save", is_flag=True, help="Also leave the plan in the data home for review (the daily timer).")
@click.option("--plan", "plan_name", metavar="PLAN",
              help="With --apply: carry out this saved plan as it was saved (plan-YYYYMMDD.json, "
                   "plan-YYYYMMDD-2.json for a second save that day, or a path).")
def consolidate(obj: Context, as_json: bool, apply_it, run, threshold, save, plan_name):
    """Merge near-duplicates, add extractive summaries, move misfiled cards: a plan first.

    Without --apply nothing changes. Merged cards are superseded by their keeper, never
    deleted; read-only sources are never changed.

    \b
    Example:
      memsync consolidate              # the plan
      memsync consolidate --apply
      memsync consolidate --apply --plan plan-20261201.json
      memsync consolidate --undo 20261201-221500-a1b2c3
    """
    from memsync.errors import BadArgument
    from memsync.lifecycle import consolidate as tidy

    if run is not None and (apply_it or save):
        raise BadArgument("--undo RUN goes alone")
    if apply_it and save:
        raise BadArgument("--save leaves a plan for review and --apply carries one out: give one")
    if plan_name is not None and (not apply_it or threshold is not None):
        raise BadArgument("--plan goes with --apply (and no --threshold: the saved plan is carried out as it is)")
    if run is not None:
        result = tidy.undo(obj.cfg, run)
    elif plan_name is not None:
        result = tidy.apply_saved(obj.cfg, plan_name)
    elif apply_it:
        result = tidy.apply(obj.cfg, threshold, waiting=waiting_note(obj.cfg))
    else:
        result = tidy.dry_run(obj.cfg, threshold, save=save)
    emit(result, as_json, _plan_text)
