"""Fuzzing with hypothesis: raw bytes into the note parser and every adapter (never raises; a
problem is reported instead, and whatever comes out can be indexed), any text as a search query
(no FTS5 error, no crash), and any arguments to the MCP tools through the SDK's stdio client
(a clean tool error, never a crashed server). A few seconds in `make test`; `make stress` runs
many more examples."""

from __future__ import annotations

import json
import os
import string
from dataclasses import fields

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import memsync.adapters as adapters
from memsync import api, config, notes
from memsync.errors import MemsyncError
from memsync.model.indexing import Card
from memsync.search.lexical import Query
from memsync.store.fields import card_fields

from .conftest import MEMSYNC_BIN, write_card

LEAKS = ("Traceback", "sqlite3", "OperationalError", "validation error for", "pydantic", 'File "')


@pytest.fixture(params=[pytest.param(False, id="fast"),
                        pytest.param(True, id="stress", marks=pytest.mark.stress)])
def budget(request):
    """How many examples: a few in `make test`, many more in `make stress`."""
    return lambda fast, stress: stress if request.param else fast


def fuzz(examples: int):
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


# --- what a card file may hold ------------------------------------------------------------------

YAMLISH = st.sampled_from([
    "title: ", "tags: [", "tags: ", "]", "{", "}", ": ", "- ", "\n", "  ", "'", '"', "\\u",
    "\\ud800", "created: ", "invalid_at: ", "superseded_by: ", "supersedes: ", "2026-13-45",
    "2026-01-01", "!!python/object:os.system", "&a", "*a", "<<: *a", "? ", "|", ">", "#", "%YAML",
    "null", "~", "true", "0x1F", ".nan", "---", "...", "\t", "\r\n", "\x00", "日本語", "\ufeff",
])
TEXTISH = st.text(alphabet=st.characters(codec="utf-8"), max_size=60)
FRONTMATTER = st.builds(
    lambda parts, body, crlf: ("---\n" + "".join(parts) + "\n---\n" + body).replace(
        "\n", "\r\n" if crlf else "\n").encode("utf-8", "surrogatepass"),
    st.lists(st.one_of(YAMLISH, TEXTISH), max_size=25), TEXTISH, st.booleans(),
)
CARD_BYTES = st.one_of(st.binary(max_size=400), FRONTMATTER,
                       st.builds(lambda b: b"\xef\xbb\xbf" + b, FRONTMATTER))


def assert_indexable(cards: list[Card]) -> None:
    """Every text field can go into SQLite (valid UTF-8) and be tokenized for FTS5."""
    for card in cards:
        assert isinstance(card, Card)
        for f in fields(Card):
            value = getattr(card, f.name)
            for item in _flat(value):
                assert item is None or isinstance(item, (str, int)), (f.name, value)
                if isinstance(item, str):
                    item.encode("utf-8")
        assert card.title
        card_fields(card)


def _flat(value):
    """A field's values: nested tuples (headings, links) opened up."""
    if isinstance(value, tuple):
        for item in value:
            yield from _flat(item)
    else:
        yield value


def test_the_note_parser_takes_any_bytes(budget):
    @fuzz(budget(300, 5000))
    @given(CARD_BYTES)
    @example(b"\x00\x01\x00\x80")  # read as UTF-16 (NULs on one side), and said so
    def check(data):
        card = notes.parse(data, "03-Knowledge/fuzz.md")
        assert_indexable([card])
        try:
            data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
        except UnicodeDecodeError:  # reported: as not UTF-8, or as the UTF-16/32 it was read as
            assert card.problem and ("not valid UTF-8" in card.problem or "save it as UTF-8" in card.problem)

    check()


JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXTISH,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTISH, inner, max_size=4),
    max_leaves=12,
)
GRAPH_LINE = st.one_of(
    st.fixed_dictionaries({"type": st.just("entity"), "name": JSON_VALUE | TEXTISH,
                           "entityType": JSON_VALUE, "observations": JSON_VALUE}),
    st.fixed_dictionaries({"type": st.just("relation"), "from": JSON_VALUE, "to": JSON_VALUE,
                           "relationType": JSON_VALUE}),
    JSON_VALUE,
).map(lambda item: json.dumps(item))
LONE_SURROGATE = st.just('{"type": "entity", "name": "x\\ud800", "observations": ["\\udfff"]}')
GRAPH_BYTES = st.one_of(
    st.binary(max_size=300),
    st.lists(st.one_of(GRAPH_LINE, LONE_SURROGATE, TEXTISH), max_size=8).map(
        lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")),
)
ADAPTER_FILES = [
    ("markdown", "03-Knowledge/fuzz.md", CARD_BYTES),
    ("agents", "CLAUDE.md", CARD_BYTES),
    ("agents", "GEMINI.md", st.one_of(CARD_BYTES, st.lists(st.one_of(
        st.just("## Gemini Added Memories\n"), st.just("- "), TEXTISH, st.just("\n"))).map(
        lambda parts: "".join(parts).encode("utf-8", "surrogatepass")))),
    ("agents", "AGENTS.md", CARD_BYTES),
    ("cursor", ".cursor/rules/fuzz.mdc", CARD_BYTES),
    ("mcp-memory", "memory.jsonl", GRAPH_BYTES),
]


@pytest.mark.parametrize("name, rel, data", ADAPTER_FILES, ids=[r for _n, r, _d in ADAPTER_FILES])
def test_every_adapter_takes_any_bytes(budget, name, rel, data):
    adapter = adapters.get(name)
    assert adapter.wants(rel)

    @fuzz(budget(150, 3000))
    @given(data)
    def check(raw):
        cards = adapter.read(raw, rel)
        assert_indexable(cards)
        assert len({c.path for c in cards}) == len(cards)  # one row per card path

    check()


# --- search -------------------------------------------------------------------------------------

FTS_SYNTAX = st.sampled_from([
    '"', "'", "*", "^", "-", "+", ":", "(", ")", "AND", "OR", "NOT", "NEAR", "NEAR(", "{", "}",
    "title:", "body:", "\\", "\x00", "　", "%", "_", "私钥", "钥", "nginx", "10.0.0.5", " ",
])
QUERIES = st.one_of(st.text(max_size=40), st.lists(st.one_of(FTS_SYNTAX, TEXTISH), max_size=12).map("".join))


def test_any_query_text_searches_cleanly(vault, cli, budget):
    write_card(vault, "03-Knowledge/keys.md", "服务器登录方式", "生产服务器登录使用私钥, nginx on 10.0.0.5")
    write_card(vault, "02-Projects/ecs.md", "ecs-prod deployment", "AND OR NOT NEAR \"quoted\" * ^")
    assert cli("index")[0] == 0
    cfg = config.load()

    @fuzz(budget(300, 5000))
    @given(QUERIES, st.one_of(st.none(), TEXTISH), st.one_of(st.none(), TEXTISH),
           st.one_of(st.none(), st.just("2026-01-01"), TEXTISH), st.integers(-5, 50))
    def check(text, kind, tag, as_of, limit):
        try:
            result = api.search(cfg, Query(text, limit, kind, None, tag, as_of, False))
        except MemsyncError as err:  # a bad date, an empty query: said, not crashed
            assert err.message
            return
        assert isinstance(result["hits"], list) and len(result["hits"]) <= 20

    check()


# --- MCP tool arguments ---------------------------------------------------------------------------

IDS = st.one_of(st.integers(-(2**70), 2**70), st.just(0), TEXTISH, st.none(), JSON_VALUE)
ARGUMENT = st.one_of(JSON_VALUE, TEXTISH, st.integers(), st.booleans())
TOOL_ARGS = {
    "memory_search": {"query": st.one_of(QUERIES, ARGUMENT), "limit": ARGUMENT, "kind": ARGUMENT,
                      "source": ARGUMENT, "tag": ARGUMENT, "as_of": ARGUMENT,
                      "include_invalid": ARGUMENT},
    "memory_get": {"id": IDS, "offset": ARGUMENT, "max_chars": ARGUMENT, "full": ARGUMENT},
    "memory_capture": {"title": ARGUMENT, "body": ARGUMENT, "kind": ARGUMENT, "tags": ARGUMENT,
                       "on_conflict": ARGUMENT, "reject_secrets": ARGUMENT},
    "memory_update": {"id": IDS, "title": ARGUMENT, "body": ARGUMENT, "tags": ARGUMENT,
                      "priority": ARGUMENT, "ttl": ARGUMENT, "kind": ARGUMENT},
    "memory_supersede": {"old_id": IDS, "title": ARGUMENT, "body": ARGUMENT, "kind": ARGUMENT},
    "memory_delete": {"id": IDS},
    "memory_stats": {"check": ARGUMENT},
    "memory_reindex": {"rebuild": st.just(False)},
    "memory_nonexistent": {"x": ARGUMENT},
}


@st.composite
def tool_calls(draw):
    name = draw(st.sampled_from(sorted(TOOL_ARGS)))
    args = {key: draw(value) for key, value in TOOL_ARGS[name].items() if draw(st.booleans())}
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(alphabet=string.ascii_letters, min_size=1, max_size=8))] = draw(ARGUMENT)
    return name, args


def test_any_tool_arguments_get_a_clean_answer_over_stdio(vault, tmp_path, budget):
    write_card(vault, "03-Knowledge/keys.md", "服务器登录方式", "生产服务器登录使用私钥, nginx on 10.0.0.5")
    log = tmp_path / "server.log"
    params = StdioServerParameters(command=MEMSYNC_BIN, args=["mcp"], env=os.environ.copy())
    seen = {"errors": 0, "ok": 0}

    async def call(session, name, args):
        with anyio.fail_after(60):
            return await session.call_tool(name, args)

    with log.open("a") as errlog, start_blocking_portal() as portal:

        class Connected:
            async def __aenter__(self):
                self.stdio = stdio_client(params, errlog=errlog)
                read, write = await self.stdio.__aenter__()
                self.session = ClientSession(read, write, read_timeout_seconds=60)
                await self.session.__aenter__()
                await self.session.initialize()
                return self.session

            async def __aexit__(self, *exc):
                await self.session.__aexit__(*exc)
                await self.stdio.__aexit__(*exc)

        with portal.wrap_async_context_manager(Connected()) as session:

            @fuzz(budget(60, 1500))
            @given(tool_calls())
            # one call that must succeed and one that must be refused, whatever the draw: random
            # arguments alone are all refused in some runs, and both paths are to be exercised
            @example(("memory_search", {"query": "私钥"}))
            @example(("memory_nonexistent", {}))
            def check(call_args):
                name, args = call_args
                result = portal.call(call, session, name, args)
                text = result.content[0].text if result.content else ""
                if result.is_error:
                    seen["errors"] += 1
                    assert text and not any(leak in text for leak in LEAKS), (name, args, text)
                else:
                    seen["ok"] += 1

            check()
            alive = portal.call(call, session, "memory_stats", {})
            assert not alive.is_error
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
    assert seen["ok"] and seen["errors"]


# --- what the fuzzing found, kept as plain regressions --------------------------------------------

def test_a_fence_closed_at_the_end_of_the_file_with_bad_yaml_is_a_problem_not_a_crash(vault, cli):
    (vault / "bad.md").write_bytes(b"---\n.\t\n---")  # crashed `memsync index` with a traceback
    code, report = cli("index", "--json")
    assert code == 0
    assert report["problems"] == [{"path": "bad.md", "message": "frontmatter is not valid YAML"}]


@pytest.mark.parametrize("line, body", [
    ('{"type": "entity", "name": "x\\ud800", "observations": ["half \\udfff"]}', "- half \ufffd"),
    ('{"type": "entity", "name": "lone", "observations": "one, not a list"}', "- one, not a list"),
])
def test_memory_graph_lines_found_by_fuzzing(line, body):
    [card] = adapters.get("mcp-memory").read(line.encode(), "memory.jsonl")
    assert card.body == body
    assert_indexable([card])


def test_a_memory_graph_entity_without_a_name_is_skipped():
    # no entity card; the file's own card says why, as for a graph that gives no entity
    data = b'{"type": "entity", "name": " ", "observations": ["x"]}\n'
    [card] = adapters.get("mcp-memory").read(data, "memory.jsonl")
    assert (card.path, card.body, card.problem) == ("memory.jsonl", "", "entities without a name: lines [1]")
