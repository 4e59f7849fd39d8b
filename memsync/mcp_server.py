"""`memsync mcp`: the eight memory tools over stdio, on the official MCP SDK (2.x).

The only module that imports the SDK, and only `memsync mcp` imports it. Each tool is a thin call
into the library function the CLI uses and returns the same dict, as structured output. Failures
become tool errors (`isError`) the model can act on: a MemsyncError gives its message, anything
unexpected gives a generic line while the traceback goes to stderr. stdout carries protocol only.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import api, config
from .config import Config
from .errors import MemsyncError
from .mcp_words import for_model
from .search import MAX_LIMIT, Query

log = logging.getLogger("memsync.mcp")

INTERNAL_ERROR = "internal error, see the server log (stderr)"
MAX_ID = 2**63 - 1  # SQLite's INTEGER range; larger ids cannot exist and would overflow the driver

INSTRUCTIONS = (
    "memsync is the user's long-term memory: Markdown cards in a local vault, searchable here. "
    "Before answering about past decisions, conventions, projects or earlier mistakes, call "
    "memory_search with a few keywords or identifiers, then memory_get for the full card. "
    "Capture only distilled, durable facts; fix a wrong card with memory_update, record a changed "
    "fact with memory_supersede (the old one stays reachable with as_of), and use memory_delete "
    "(soft, restorable) only for cards that should not exist."
)

# --- output schemas: the DESIGN §8 shapes. Extra fields are allowed (added freely, never renamed).


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow")


class SearchHit(_Shape):
    id: int
    path: str = Field(description="Relative to the root of its source.")
    title: str
    kind: str | None
    source: str
    score: float = Field(description="BM25, larger is better; compare only within one result list.")
    matched: str = Field(description="Tier that found it: all, all-prefix, any, any-prefix.")
    coverage: float | None = Field(description="Share of query words matched (any* tiers only).")
    snippet: str
    valid: bool = Field(description="False once its invalid_at day has come (superseded); shown only with include_invalid or as_of.")


class SearchResult(_Shape):
    query: str
    matched: str | None
    hits: list[SearchHit]
    more: bool = Field(False, description="More cards matched than returned: narrow the query or raise limit.")
    note: str | None


class CardPage(_Shape):
    id: int
    path: str
    title: str
    valid: bool
    invalid_at: str | None
    superseded_by: str | None
    text: str = Field(description="This window of the card's text.")
    offset: int
    length: int = Field(description="Length of the whole text in characters.")
    returned: int
    has_more: bool
    next_offset: int | None = Field(description="Pass as offset to read on; null at the end.")


class WriteResult(_Shape):
    status: str = Field(description="created, unchanged, rejected, conflict, updated, superseded, deleted.")
    id: int | None = None
    path: str | None = None
    indexed: bool | None = Field(None, description="true, false (file kept, index failed), null (nothing changed).")
    changed: list[str] | None = None
    conflict: bool | None = None
    existing_path: str | None = None
    collision_paths: list[str] | None = None
    secrets_found: list[Any] | None = None
    warnings: list[Any] | None = None
    note: str | None = None
    reminder: str | None = None


class Stats(_Shape):
    cards: int
    valid: int
    invalid: int
    by_kind: dict[str, int]
    by_source: dict[str, int]
    last_change: str | None
    problems: list[dict[str, Any]]
    reads: int
    trash: dict[str, int]
    index: dict[str, Any]
    watcher: dict[str, Any]
    config_problems: list[str] = Field(
        default_factory=list, description="Settings that are ignored or broken, and how to fix them.")
    reminder: str | None = None


class IndexReport(_Shape):
    scanned: int
    added: int
    updated: int
    removed: int
    unchanged: int
    hashed: int = Field(description="Files whose content had to be read because they changed.")
    problems: list[dict[str, Any]]
    seconds: float


# --- turning library results and failures into tool results


def ok(data: dict) -> CallToolResult:
    data = _reworded(data)
    # The JSON text is for clients that do not read structured content yet.
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
        structured_content=data,
    )


def error(message: str, data: dict | None = None) -> CallToolResult:
    """A tool error: the message in tool words, then the result as JSON, as it is."""
    text = for_model(message) + ("\n" + json.dumps(data, ensure_ascii=False) if data else "")
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _reworded(data: dict) -> dict:
    """The advice in a result, in tool words (the card text itself is never touched)."""
    out = dict(data)
    for key in ("note", "reminder"):
        if isinstance(out.get(key), str):
            out[key] = for_model(out[key])
    if isinstance(out.get("warnings"), list):
        out["warnings"] = [for_model(w) if isinstance(w, str) else w for w in out["warnings"]]
    return out


def attempt(tool: str, call) -> dict | CallToolResult:
    """Run one library call: its dict, or a tool error for every way it can fail (never a crash)."""
    try:
        return call()
    except MemsyncError as err:
        return error(err.message)
    except Exception:
        log.exception("%s failed", tool)
        return error(INTERNAL_ERROR)


def guarded(tool: str, call) -> CallToolResult:
    data = attempt(tool, call)
    return data if isinstance(data, CallToolResult) else ok(data)


def written(tool: str, call) -> CallToolResult:
    """A write tool: a rejected or conflicting result is a tool error that still carries it."""

    def run():
        from . import vault  # the write path (YAML, rules) loads only when a write arrives

        result = call(vault)
        return result, vault.exit_code_for(result)

    outcome = attempt(tool, run)
    if isinstance(outcome, CallToolResult):
        return outcome
    result, refused = outcome
    if not refused:
        return ok(result)
    note = result.get("note") or f"{tool} was refused ({result.get('status')})"
    return error(note, _reworded(result))


def describe_invalid(tool: str, exc: ValidationError) -> str:
    """Name the arguments that failed and why, without echoing pydantic's internals."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return (
        f"invalid arguments for {tool}: " + "; ".join(problems)
        + ". Fix them to match the tool's input schema and call again."
    )


class _Server(MCPServer):
    async def call_tool(self, name, arguments, context=None):
        # Argument validation happens inside the SDK, before our tool runs; its default error text
        # is pydantic's report. Reword it into something a model can act on.
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return error(describe_invalid(name, exc.__cause__))
            raise


# --- live indexing beside the server


class LiveIndex:
    """Runs the watcher in this process once the handshake is over, so the index stays live with
    no separate daemon. When another process's watcher holds the lock, that one keeps the index
    live; we retry now and then, to take over if it goes away."""

    # Seconds between attempts while another watcher holds the lock: how stale the index can get
    # after that watcher stops. An attempt is one failed flock, so it can be frequent.
    RETRY_LOCKED = 5.0
    SETTLE = 600.0  # longest wait for the start-up reconcile before `ready` is set anyway

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.ready = threading.Event()  # the start-up pass is done (or is another process's job)
        self._stopping = threading.Event()
        self._guard = threading.RLock()  # re-entered when a signal lands while start() holds it
        self._thread: threading.Thread | None = None
        self._watcher = None

    def start(self) -> None:
        with self._guard:
            if self._thread is not None or self._stopping.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="memsync-live-index", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        from .watch import Watcher, WatcherLocked  # watchdog loads only here

        try:
            while not self._stopping.is_set():
                watcher = Watcher(self.cfg)
                try:
                    watcher.start()
                except WatcherLocked as err:
                    if not self.ready.is_set():
                        log.info("%s; retrying every %gs", err.message, self.RETRY_LOCKED)
                    self.ready.set()
                    self._stopping.wait(self.RETRY_LOCKED)
                    continue
                with self._guard:
                    self._watcher = watcher
                if self._stopping.is_set():  # stop() ran while we were starting: undo
                    self._stop_watcher()
                    return
                log.info("watching %s", self.cfg.vault.path)
                # Ready once the start-up pass is done, not when idle: with writes coming in,
                # idle may never be reached, and "still being built" would then be false.
                watcher.wait_started(self.SETTLE)
                return
        except MemsyncError as err:
            log.warning("live indexing is off: %s", err.message)
        except Exception:
            log.exception("live indexing failed; searches use the index as it is")
        finally:
            self.ready.set()

    def _stop_watcher(self) -> None:
        with self._guard:
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()  # applies what is pending, then releases the lock

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._stop_watcher()
        if self._thread is not None:
            self._thread.join(timeout)
        self._stop_watcher()


class _StartAfterHandshake:
    """Middleware: kick off live indexing once any message other than `initialize` arrives, so the
    initialize reply never waits behind a vault scan."""

    def __init__(self, live: LiveIndex):
        self.live = live

    async def __call__(self, ctx, call_next):
        result = await call_next(ctx)
        if ctx.method != "initialize":
            self.live.start()
        return result


# --- the tools

CardId = Annotated[int, Field(ge=1, le=MAX_ID, description="A card id from memory_search.")]
Kind = Annotated[
    str | None,
    Field(description="system, project, knowledge, content, prompt, business, tool or mistake."),
]
Tags = Annotated[list[str] | None, Field(description="Tags, e.g. [\"nginx\", \"ops\"].")]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class CurrentConfig:
    """The configuration as config.json says now: a source added or removed with `memsync
    sources` while the server runs counts from the next tool call. A config.json that does not
    load keeps the last good one (the error is logged)."""

    def __init__(self, cfg: Config):
        self._cfg = cfg
        self._stamp = config.file_signature(cfg.config_file)
        self._lock = threading.Lock()
        self.problem: str | None = None  # why the current config.json is not the one in use

    def __call__(self) -> Config:
        stamp = config.file_signature(self._cfg.config_file)
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    try:
                        self._cfg = config.reload(self._cfg)
                        self.problem = None
                    except MemsyncError as err:
                        self.problem = (f"{err.message} (the server keeps using the settings it "
                                        "read before; fix the file and they apply at the next call)")
                        log.warning("config.json changed but does not load: %s", self.problem)
                    self._stamp = stamp
        return self._cfg


def build(cfg: Config, live: LiveIndex | None = None) -> MCPServer:
    now = CurrentConfig(cfg)
    server = _Server(
        "memsync",
        instructions=INSTRUCTIONS,
        version=_version(),
        middleware=[_StartAfterHandshake(live)] if live else None,
    )

    @server.tool(
        name="memory_search",
        title="Search memory",
        annotations=READ,
        description=(
            "Search the user's long-term memory before answering anything about past decisions, "
            "conventions, projects, hosts, people or earlier mistakes. Pass a few keywords or "
            "identifiers (names, hostnames, error codes, Chinese terms work too), not a whole "
            "question: `nginx root ecs-prod`, not `where did we put the nginx root on prod?`. "
            "Each hit has an id, a snippet and `matched`: `all` when every word matched; `any*` "
            "hits matched only some words and come with a low-confidence note, so retry with "
            "fewer, sharper keywords. Read a hit in full with memory_get. Only currently valid "
            "cards are returned by default; include_invalid adds superseded ones, ranked last; "
            "as_of=YYYY-MM-DD answers 'what was true then' (cards that existed and were still "
            "valid on that day)."
        ),
    )
    def memory_search(
        query: Annotated[str, Field(description="Keywords or identifiers, space separated.")],
        limit: Annotated[int, Field(description=f"Hits to return, 1-{MAX_LIMIT} (clamped).")] = 10,
        kind: Kind = None,
        source: Annotated[str | None, Field(description="Only this source, e.g. vault.")] = None,
        tag: Annotated[str | None, Field(description="Only cards with this exact tag.")] = None,
        as_of: Annotated[str | None, Field(description="YYYY-MM-DD: what was valid that day.")] = None,
        include_invalid: Annotated[bool, Field(description="Also show superseded cards.")] = False,
    ) -> Annotated[CallToolResult, SearchResult]:
        def run():
            q = Query(query, limit, kind, source, tag, as_of, include_invalid)
            result = api.search(now(), q)
            if not result["hits"] and live and not live.ready.is_set():
                result["note"] = "; ".join(filter(None, [
                    result["note"], "the index is still being built after start: retry in a moment"
                    " if you expected a hit"]))
            return result

        return guarded("memory_search", run)

    @server.tool(
        name="memory_get",
        title="Read a memory card",
        annotations=READ,
        description=(
            "Read one card by id (ids come from memory_search). Long cards come in windows of "
            "max_chars characters (default 20000): when has_more is true, call again with "
            "offset=next_offset, or pass full=true for the whole text. A card that is no longer "
            "valid starts with a line saying when it stopped being valid and which card "
            "superseded it: prefer the newer card for current facts."
        ),
    )
    def memory_get(
        id: CardId,
        offset: Annotated[int, Field(ge=0, description="Start at this character.")] = 0,
        max_chars: Annotated[
            int | None, Field(ge=0, description="Window size (default 20000; 0 = everything).")
        ] = None,
        full: Annotated[bool, Field(description="Return the whole text, however long.")] = False,
    ) -> Annotated[CallToolResult, CardPage]:
        return guarded("memory_get", lambda: api.show(now(), id, offset, max_chars, full, voice=for_model))

    @server.tool(
        name="memory_capture",
        title="Save a fact to memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
        description=(
            "Save one durable fact as a new Markdown card: a distilled, self-contained statement "
            "worth knowing next time (a decision and its reason, a convention, where something "
            "lives, the fix for a mistake), never a chat log or transcript. Search first: if the "
            "card exists, use memory_update (it was wrong) or memory_supersede (it changed). Give "
            "a specific title (it names the file) and a body of at least 20 characters; kind "
            "picks the folder. The same title and body again changes nothing (status "
            "unchanged). A different body under an existing title is saved beside it as '-2' "
            "with conflict=true, or refused with on_conflict='reject'. Suspected credentials are "
            "reported in warnings (reject_secrets=true refuses the card): do not store secrets."
        ),
    )
    def memory_capture(
        title: Annotated[str, Field(description="Short, specific title; it becomes the file name.")],
        body: Annotated[str, Field(description="The fact, in Markdown; at least 20 characters.")],
        kind: Kind = None,
        tags: Tags = None,
        on_conflict: Annotated[
            Literal["suffix", "reject"],
            Field(description="Same title, other body: save as '-2' (suffix) or refuse (reject)."),
        ] = "suffix",
        reject_secrets: Annotated[
            bool, Field(description="Refuse the card if it seems to contain credentials.")
        ] = False,
    ) -> Annotated[CallToolResult, WriteResult]:
        return written("memory_capture", lambda vault: vault.capture(
            now(), title, body, kind=kind, tags=tags, on_conflict=on_conflict,
            reject_secrets=reject_secrets,
        ))

    @server.tool(
        name="memory_update",
        title="Correct a memory card",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
        description=(
            "Correct a card in place because what it says is wrong (a wrong value, a typo, a "
            "missing detail). Only the fields you pass change; the file keeps its path and the old "
            "text is not kept. If the fact was right but has since changed (a new version, a moved "
            "server, a reversed decision), use memory_supersede instead so the old state stays "
            "findable with as_of. kind cannot change here: supersede into the new kind instead."
        ),
    )
    def memory_update(
        id: CardId,
        title: Annotated[str | None, Field(description="New title (the path stays).")] = None,
        body: Annotated[str | None, Field(description="New body, at least 20 characters.")] = None,
        tags: Tags = None,
        priority: Annotated[str | None, Field(description="Free-form priority, e.g. high.")] = None,
        ttl: Annotated[str | None, Field(description="How long the fact stays relevant.")] = None,
        kind: Kind = None,
    ) -> Annotated[CallToolResult, WriteResult]:
        return written("memory_update", lambda vault: vault.update(
            now(), id, title=title, body=body, tags=tags, priority=priority, ttl=ttl, kind=kind,
        ))

    @server.tool(
        name="memory_supersede",
        title="Replace a changed fact",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False,
            open_world_hint=False,
        ),
        description=(
            "Record that a fact changed while keeping its history: writes a new card and marks "
            "the old one (old_id) as no longer valid, pointing to the new one. Default searches "
            "then return only the new card; as_of on an earlier day still finds the old one. Use "
            "memory_update instead when the old card was simply wrong. kind defaults to the old "
            "card's. A card already superseded cannot be superseded again: supersede its newest "
            "version."
        ),
    )
    def memory_supersede(
        old_id: CardId,
        title: Annotated[str, Field(description="Title of the new card.")],
        body: Annotated[str, Field(description="The fact as it is now; at least 20 characters.")],
        kind: Kind = None,
        tags: Tags = None,
    ) -> Annotated[CallToolResult, WriteResult]:
        return written("memory_supersede", lambda vault: vault.supersede(
            now(), old_id, title, body, kind=kind, tags=tags,
        ))

    @server.tool(
        name="memory_delete",
        title="Delete a memory card (soft)",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
        ),
        description=(
            "Delete a card that should not exist at all (a duplicate, noise, something captured "
            "by mistake). The delete is soft and reversible: the file moves to the vault's .trash/ "
            "folder and leaves the search index; a person restores it with `memsync delete "
            "--restore <path>`. If the card's fact merely changed, use memory_supersede instead."
        ),
    )
    def memory_delete(id: CardId) -> Annotated[CallToolResult, WriteResult]:
        return written("memory_delete", lambda vault: vault.delete(now(), id))

    @server.tool(
        name="memory_stats",
        title="Memory overview",
        annotations=READ,
        description=(
            "Overview of the memory: how many cards by kind and source, valid vs superseded, "
            "when it last changed, files that could not be parsed, trash size, and whether a "
            "watcher keeps the index live."
        ),
    )
    def memory_stats() -> Annotated[CallToolResult, Stats]:
        def run():
            data = api.stats(now())
            if now.problem:  # config.json changed and does not load: the last good one is used
                data["config_problems"] = [*data.get("config_problems", []), now.problem]
            return data

        return guarded("memory_stats", run)

    @server.tool(
        name="memory_reindex",
        title="Refresh the index",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
        description=(
            "Bring the search index up to date with the Markdown files. Rarely needed: the server "
            "keeps the index live and every write tool indexes its own card. Use it when search "
            "misses a card you know was just edited outside, or after files were restored. "
            "rebuild=true recomputes everything from the files (ids and read counts are kept)."
        ),
    )
    def memory_reindex(
        rebuild: Annotated[bool, Field(description="Recompute everything from the files.")] = False,
    ) -> Annotated[CallToolResult, IndexReport]:
        return guarded("memory_reindex", lambda: api.reindex(now(), rebuild=rebuild))

    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memsync")
    except PackageNotFoundError:
        return "0"


def configure_logging() -> None:
    # Before the SDK configures logging: its basicConfig is then a no-op, and every record goes to
    # stderr. The SDK's per-request INFO lines are noise for a client's log pane.
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("memsync mcp %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("memsync").setLevel(logging.INFO)


def serve(cfg: Config) -> None:
    """Serve over stdio until the client closes stdin, or until SIGTERM/SIGINT."""
    configure_logging()
    live = LiveIndex(cfg)
    server = build(cfg, live)
    stop_on_signals(live)
    try:
        server.run("stdio")
    finally:
        live.stop()


def stop_on_signals(live: LiveIndex) -> None:
    """Stop the watcher, then leave at once. A graceful unwind would wait forever: the SDK reads
    stdin on a worker thread that only returns when the client closes the pipe. Leaving mid-call is
    safe: card files are replaced atomically and index writes are single transactions."""

    def stop(signum, _frame):
        log.info("%s: stopping", signal.Signals(signum).name)
        live.stop(timeout=2.0)
        logging.shutdown()
        os._exit(0)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
