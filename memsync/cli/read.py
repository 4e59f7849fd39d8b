"""Read-side commands: paths, index, search, show, stats. Nothing heavy is imported here."""

from __future__ import annotations

import os
import sys

import click

from memsync.search.lexical import MAX_LIMIT, Query, clamp_limit

from .. import api, output
from . import (
    CARD_ID,
    Context,
    MemsyncCommand,
    command,
    complete,
    emit,
    main,
    progress_bar,
    waiting_note,
    warn_ignored_sources,
)


@command(main, "paths")
def paths(obj: Context, as_json: bool):
    """Show where the index, vault and config live, and which layer chose each.

    \b
    Example:
      memsync --vault ~/notes paths
    """
    emit(api.paths(obj.cfg), as_json, output.paths)


@command(main, "index")
@click.option("--rebuild", is_flag=True, help="Recompute everything from the files (keeps ids and read stats).")
@click.option("--embed", is_flag=True,
              help="Then embed every card that lacks a vector (memsync[semantic]), with a progress bar.")
@click.option("--threads", type=click.IntRange(min=1), metavar="N",
              help="Cores to use for reading and embedding (default: config.json \"threads\", "
                   "else all usable cores; never more than the usable cores).")
@click.option("--allow-mass-removal", is_flag=True,
              help="Remove the cards of a source that lost most (or all) of its files at once.")
def index(obj: Context, as_json: bool, rebuild: bool, embed: bool, threads: int | None,
          allow_mass_removal: bool):
    """Bring the index up to date with the vault and sources.

    \b
    Example:
      memsync index            # incremental: only changed files are read
      memsync index --rebuild  # from scratch
      memsync index --embed    # and the vectors of semantic search, in the foreground
      memsync index --rebuild --threads 2
    """
    if embed:
        from ..semantic import EMBED_INSTEAD, require

        require(EMBED_INSTEAD)  # before indexing: a missing extra is said at once, not after the work
    warn_ignored_sources(obj.cfg)
    with progress_bar("indexing", enabled=not as_json) as progress:
        report = api.reindex(obj.cfg, rebuild=rebuild, progress=progress, threads=threads,
                             allow_mass_removal=allow_mass_removal, waiting=waiting_note(obj.cfg, progress))
    if not embed:
        emit(report, as_json, output.index_report)
        return
    with progress_bar("embedding", enabled=not as_json, unit="cards") as progress:
        vectors = api.embed(obj.cfg, progress=progress, threads=threads)
    emit({**report, "embed": vectors}, as_json,
         lambda d: output.index_report(d) + "\n" + output.embed_report(d["embed"]))


class SearchCommand(MemsyncCommand):
    """A query starting with '-' reads as an option: say how to search for it instead."""

    def dash_hint(self, name: str, option: str, given: list[str]) -> str | None:
        import shlex  # only on this error: `memsync search` loads no more than it needs

        query = next((arg for arg in given if arg.startswith(option)), option)
        return f"To search for {query!r}, put the query after `--`: memsync search -- {shlex.quote(query)}"


@command(main, "search", cls=SearchCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="Hits to return (1-20).")
@click.option("--kind", shell_complete=complete.kinds,
              help="Only cards of this kind (knowledge, project, mistake, ...).")
@click.option("--source", shell_complete=complete.sources,
              help="Only cards from this source (vault, or a configured source).")
@click.option("--tag", shell_complete=complete.tags, help="Only cards with this tag (any case, # optional; a/b is found by a too).")
@click.option("--as-of", metavar="YYYY-MM-DD", help="Only cards that were valid on that day.")
@click.option("--include-invalid", is_flag=True, help="Also show superseded cards (ranked last).")
@click.option("--semantic/--no-semantic", default=None,
              help="Blend in meaning (memsync[semantic]); default: config.json \"semantic\".")
@click.option("--explain", is_flag=True,
              help="Say why each hit ranks where it does: its tier, the parts of its score, and "
                   "the FTS5 MATCH of each tier that ran.")
def search(obj: Context, as_json: bool, query, limit, kind, source, tag, as_of, include_invalid,
           semantic, explain):
    """Search cards by keywords or identifiers (Chinese and English alike).

    \b
    Example:
      memsync search 阿里云 ecs-prod
      memsync search nginx --kind knowledge --as-of 2026-03-01
      memsync search --semantic 本地装了什么模型
      memsync search sync --explain
    """
    api.require_index(obj.cfg)
    if clamp_limit(limit) != limit:
        click.echo(f"memsync: -n {limit} is outside 1-{MAX_LIMIT}: showing at most "
                   f"{clamp_limit(limit)}", err=True)
    q = Query(" ".join(query), limit, kind, source, tag, as_of, include_invalid)
    data = api.search(obj.cfg, q, semantic, explain=explain)
    data["note"] = output.search_note(data["notes"])  # the notes in one line, as before the codes
    if as_json:
        emit(data, as_json, output.search)
    else:  # hits on stdout, notes on stderr: `memsync search x | head` stays clean
        if data["hits"]:
            click.echo(output.search(data, highlighter(data["terms"])))
        if explain:
            click.echo(output.explain_tiers(data))
        if data["note"]:  # a search that found nothing always says why (memsync.search.codes)
            click.echo(f"memsync: {data['note']}", err=True)
        for warning in data.get("warnings", []):
            click.echo(f"memsync: warning: {warning}", err=True)
    if not data["hits"]:
        sys.exit(1)


def highlighter(terms: list[str]):
    """Matched terms (the plan's tokens, which the snippet's window was cut around) in bold
    color on a terminal; plain when piped or with NO_COLOR set. The heads the prefix tiers match
    too (`postgres` for `postgresql`, memsync.search.query.cuts) are marked as well: a hit found
    by one shows its window around it, and they are marked only in a text without a whole term."""
    if os.environ.get("NO_COLOR") or not sys.stdout.isatty():
        return None
    from ..search.query import heads

    with_heads = [*terms, *heads(terms)]

    def marked(text: str) -> list[str]:
        # heads only where no whole term shows: the snippet was cut around a head only then
        lowered = text.lower()
        return terms if any(term in lowered for term in terms) else with_heads

    return lambda text: output.mark(text, marked(text), lambda word: click.style(word, fg="red", bold=True))


@command(main, "show")
@click.argument("card_id", type=CARD_ID)
@click.option("--offset", type=int, default=0, help="Start at this character.")
@click.option("--max-chars", type=int, default=None, help="Window size (default 20000; 0 = all).")
@click.option("--full", is_flag=True, help="The whole text, however long.")
def show(obj: Context, as_json: bool, card_id, offset, max_chars, full):
    """Print a card's text (long cards come in windows; the end says how to continue).

    \b
    Example:
      memsync show 1234567 --offset 20000
    """
    api.require_index(obj.cfg)
    emit(api.show(obj.cfg, card_id, offset, max_chars, full), as_json, output.show)


@command(main, "stats")
def stats(obj: Context, as_json: bool):
    """Totals by kind and source, parse problems, trash size, watcher state.

    \b
    Example:
      memsync stats --json
    """
    api.require_index(obj.cfg)
    emit(api.stats(obj.cfg), as_json, output.stats)
