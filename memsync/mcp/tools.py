"""The eight memory tools: what a model reads about each one, and the library call behind it.

Every byte here lands in an agent's context on every session (tools/list is kept under 7 KB,
measured by bench/mcp_budget.py). So each rule is said once: what holds for all tools is in the
server instructions (mcp_server.INSTRUCTIONS); a description says only its own tool's rules; an
argument has a description only where its name does not say it. There are no output schemas: the
shapes are DESIGN §8's, documented in docs/mcp.md, and the bench records what they would cost.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from memsync import api
from memsync.doctor import exam as doctor
from memsync.errors import BadArgument
from memsync.mcp import text as mcp_text
from memsync.mcp.replies import error, guarded, written
from memsync.mcp.words import for_model
from memsync.search import codes
from memsync.search.lexical import MAX_LIMIT, Query, clamp_limit

# How long an empty search waits for a start-up reconcile that is running: on a vault the index
# already holds, it ends well within this and the answer needs no "still being built".
START_WAIT = 5.0
MAX_ID = 2**63 - 1  # SQLite's INTEGER range; larger ids cannot exist and would overflow the driver


def _not_a_bool(given: object) -> object:
    """pydantic's lax mode reads true as 1 and false as 0, so `limit: false` searched for one hit
    and `id: true` looked for card 1; a yes/no given for a number is refused as not one, while
    "5" and 5.0 still read as 5."""
    if isinstance(given, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return given


def _true_or_false(given: object) -> object:
    """pydantic's lax mode reads "yes", "on", "1" and 1 as true, so `rebuild: "yes"` rebuilt and
    `check: 1` ran the health check: a guess the model never learns of. A flag takes true or
    false, or either written as a string ("true"), as a number may come as "5"; anything else is
    refused as not one, which the model can correct."""
    if isinstance(given, str) and given.strip().lower() in ("true", "false"):
        return given.strip().lower() == "true"
    if given is not None and not isinstance(given, bool):
        raise PydanticCustomError("bool_type", "Input should be a valid boolean")
    return given


# After the constraints: placed before them, it hides them from the published schema.
NOT_A_BOOL = BeforeValidator(_not_a_bool)
Flag = Annotated[bool, BeforeValidator(_true_or_false)]
CardId = Annotated[int, Field(ge=1, le=MAX_ID), NOT_A_BOOL]
Kind = str | None
Tags = Annotated[list[str] | str | None, Field(description="list, or one comma-separated string")]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# memory_get is no read-only tool: its feedback argument records a verdict that later ranks the
# card (DESIGN §12). That verdict, like every read it counts, only adds: nothing is destroyed.
# (Its read counts and memory_search's retrieval log are bookkeeping, as DESIGN §1 lets a reader
# keep; a ninth tool just for feedback would cost the 7 KB tools/list its last bytes.)
READ_AND_RECORD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                  open_world_hint=False)


def _write(destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=False, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


SEARCH = (
    "Search with a few keywords or identifiers (names, hosts, error codes; Chinese works), not a "
    "question: `nginx ecs-prod`, not `where is nginx on prod?`. A hit is `id title (file) [notes]` "
    "under an `in FOLDER` line, then its snippet. `N+ hits`: more matched than shown (narrow the "
    "words or filters, or raise limit). matched `all` = every word found; "
    "`any*` = only some (coverage = the share): weak, retry with fewer, sharper words. Only valid "
    "cards unless include_invalid (adds "
    "superseded ones, last, marked INVALID). as_of=YYYY-MM-DD answers what was true that day. "
    "semantic=true also finds cards by meaning, in any language (matched `semantic`)."
)
GET = (
    "Read a card by id. Long text comes in windows of max_chars (default 20000; 0 or full=true: "
    "all); the text ends by saying where to continue (offset). A superseded card opens with a line "
    "naming its successor: prefer that one for current facts. After using a card, feedback="
    "helpful|unhelpful records whether it helped (no text is returned)."
)
CAPTURE = (
    "Save one durable fact as a new card: distilled and self-contained (a decision and why, a "
    "convention, where something lives, a fix), never a chat log. Search first; change a card with "
    "memory_update or memory_supersede. The title names the file; body >= 20 chars; kind picks the "
    "folder. Same title and body again: unchanged. Same title, other body: saved as '-2' "
    "(conflict), or refused with on_conflict=reject. Suspected credentials come back as warnings "
    "(reject_secrets refuses): never store secrets. summary: one line search shows instead of the "
    "body; give one when the body is long."
)
UPDATE = (
    "Fix a card that is wrong (a wrong value, a typo, a missing detail), in place: only the given "
    "fields change, the path stays, the old text is not kept. If it was right and has since "
    "changed, use memory_supersede so the old state stays findable with as_of. kind cannot change "
    "(supersede into the new kind). '' or [] clears tags, priority, ttl."
)
SUPERSEDE = (
    "The fact changed: write the new card and mark card id no longer valid, pointing to the new one "
    "(both or neither). Searches then return the new card; as_of an earlier day finds the old one. "
    "kind, tags, priority and other fields but summary default to the old card's. Only the newest version can be superseded. old_id: "
    "deprecated name of id."
)
DELETE = (
    "Soft-delete a card that should not exist (a duplicate, noise, a mistake): the file moves to "
    "the vault's .trash/ and leaves the index. Undo: restore=<trash_path from the reply>; force "
    "first moves a file in the way to the trash too. A fact that changed wants memory_supersede."
)
STATS = ("Cards by kind and source, valid vs superseded, last change, files that did not parse, "
         "trash size, whether a watcher keeps the index live. check=true adds a health check and an "
         "audit (duplicates, long cards without summary, unhelpful ones).")
REINDEX = ("Catch the index up with the files; rarely needed (it is kept live, and writes index "
           "their own card). rebuild recomputes everything (ids and read counts kept).")


def register(server, now, live=None) -> None:
    """Add the eight tools to `server`; `now()` gives the configuration as it is at each call."""

    @server.tool(name="memory_search", title="Search memory", annotations=READ, description=SEARCH)
    def memory_search(
        query: str,
        limit: Annotated[int, Field(description="1-20"), NOT_A_BOOL] = 10,
        kind: Kind = None,
        source: str | None = None,
        tag: str | None = None,
        as_of: Annotated[str | None, Field(description="YYYY-MM-DD")] = None,
        include_invalid: Flag = False,
        semantic: Annotated[bool | None, BeforeValidator(_true_or_false)] = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        def run():
            used = clamp_limit(limit)
            q = Query(query, used, kind, source, tag, as_of, include_invalid)
            result = api.search(now(), q, semantic, client=_client_name(ctx))
            if not result["hits"] and live and live.building and live.ready.wait(START_WAIT):
                result = api.search(now(), q, semantic, client=_client_name(ctx))  # start-up pass done: look again
            if used != limit:
                result["notes"].append({"code": codes.LIMIT_CLAMPED, "asked": limit, "used": used,
                                        "max": MAX_LIMIT})
            if not result["hits"] and live and live.building:
                result["notes"].append({"code": codes.INDEX_BUILDING})
            result["note"] = mcp_text.search_note(result["notes"])  # in the model's words already
            return result

        return guarded("memory_search", run, mcp_text.search)

    @server.tool(name="memory_get", title="Read a card", annotations=READ_AND_RECORD, description=GET)
    def memory_get(id: CardId, offset: Annotated[int, Field(ge=0), NOT_A_BOOL] = 0,
                   max_chars: Annotated[int | None, Field(ge=0), NOT_A_BOOL] = None, full: Flag = False,
                   feedback: Literal["helpful", "unhelpful"] | None = None) -> CallToolResult:
        if feedback is not None:  # the verdict only: the card is not sent again
            if offset or max_chars is not None or full:
                return error("memory_get: feedback records a verdict and sends no text, so offset, "
                             "max_chars and full do not go with it; leave them out, or read the card "
                             "in a call of its own.")
            from memsync.lifecycle import feedback as verdicts

            return guarded("memory_get", lambda: verdicts.give_cfg(now(), id, feedback), mcp_text.generic)
        return guarded("memory_get", lambda: api.show(now(), id, offset, max_chars, full, voice=for_model),
                       mcp_text.card)

    @server.tool(name="memory_capture", title="Save a fact", annotations=_write(False, True),
                 description=CAPTURE)
    def memory_capture(title: str, body: str, kind: Kind = None, tags: Tags = None,
                       on_conflict: Literal["suffix", "reject"] = "suffix", reject_secrets: Flag = False,
                       summary: str | None = None) -> CallToolResult:
        return written("memory_capture", lambda vault: vault.capture(
            now(), title, body, kind=kind, tags=tags, on_conflict=on_conflict,
            reject_secrets=reject_secrets, summary=summary), mcp_text.write)

    @server.tool(name="memory_update", title="Correct a card", annotations=_write(True, True),
                 description=UPDATE)
    def memory_update(id: CardId, title: str | None = None, body: str | None = None, tags: Tags = None,
                      priority: str | None = None, ttl: str | None = None, kind: Kind = None,
                      summary: str | None = None) -> CallToolResult:
        return written("memory_update", lambda vault: vault.update(
            now(), id, title=title, body=body, tags=tags, priority=priority, ttl=ttl, kind=kind,
            summary=summary), mcp_text.write)

    @server.tool(name="memory_supersede", title="Replace a changed fact", annotations=_write(False, False),
                 description=SUPERSEDE)
    def memory_supersede(id: CardId | None = None, *, title: str, body: str, kind: Kind = None,
                         tags: Tags = None, priority: str | None = None, ttl: str | None = None,
                         old_id: CardId | None = None, summary: str | None = None) -> CallToolResult:
        try:
            card = _one_id("memory_supersede", id, old_id)
        except BadArgument as err:
            return error(err.message)
        return written("memory_supersede", lambda vault: vault.supersede(
            now(), card, title, body, kind=kind, tags=tags, priority=priority, ttl=ttl,
            summary=summary), mcp_text.write)

    @server.tool(name="memory_delete", title="Delete a card (soft)", annotations=_write(True, False),
                 description=DELETE)
    def memory_delete(id: CardId | None = None, restore: str | None = None, force: Flag = False) -> CallToolResult:
        if (id is None) == (restore is None):
            return error("memory_delete: pass id (to delete a card) or restore (a trash_path, to "
                         "undo a delete), not both and not neither.")
        if force and restore is None:
            return error("memory_delete: force only goes with restore; leave it out to delete.")
        if restore is not None:
            return written("memory_delete", lambda vault: vault.restore(now(), restore, force=force),
                           mcp_text.write)
        return written("memory_delete", lambda vault: vault.delete(now(), id), mcp_text.write)

    @server.tool(name="memory_stats", title="Memory overview", annotations=READ, description=STATS)
    def memory_stats(check: Flag = False) -> CallToolResult:
        def run():
            data = api.stats(now())
            if live is not None and not data["watcher"].get("live") and live.starting:
                data["watcher"] = {**data["watcher"], "starting": True}
            if now.problem:  # config.json changed and does not load: the last good one is used
                data["config_problems"] = [*data.get("config_problems", []), now.problem]
            if check:  # memsync doctor's findings, each with its fix; memsync audit's counts
                from memsync.lifecycle import audit

                data["doctor"] = doctor.summary(now())
                data["audit"] = audit.summary(audit.audit(now()))
            return data

        return guarded("memory_stats", run, mcp_text.stats)

    @server.tool(name="memory_reindex", title="Refresh the index", annotations=_write(False, True),
                 description=REINDEX)
    def memory_reindex(rebuild: Flag = False) -> CallToolResult:
        return guarded("memory_reindex", lambda: api.reindex(now(), rebuild=rebuild), mcp_text.generic)


def _client_name(ctx: Context | None) -> str | None:
    """The name the MCP client gave at initialize (for the retrieval log), if any."""
    try:
        params = ctx.session.client_params if ctx is not None else None
    except (AttributeError, ValueError, LookupError):  # no request context (a direct call)
        return None
    info = getattr(params, "client_info", None)
    return getattr(info, "name", None) or None


def _one_id(tool: str, id: int | None, old_id: int | None) -> int:
    """`id`, or its deprecated name `old_id` (memory_supersede before one vocabulary)."""
    if id is not None and old_id is not None and id != old_id:
        raise BadArgument(f"{tool}: id and old_id (its deprecated name) differ; pass only id.")
    card = id if id is not None else old_id
    if card is None:
        raise BadArgument(f"{tool}: id is required: the card whose fact changed, from memory_search.")
    return card
