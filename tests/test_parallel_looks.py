"""What a reader process hands the writer of a parallel rebuild (a look at a file): plain
tuples that unpickle to the look it was, its long texts kept as UTF-8 and stored as text."""

from __future__ import annotations

import dataclasses
import os
import pickle
import pickletools
import sqlite3

import memsync.adapters as adapters
from memsync import reading

from . import rebuilding
from .conftest import write_card
from .rebuilding import fill, rebuilt

small_batches = rebuilding.small_batches  # autouse: the small thresholds for every test here


def test_a_look_crosses_to_the_writer_whole_and_as_plain_tuples(vault):
    write_card(vault, "full.md", "全部 fields", "# 标题\n## part\nbody #inline [[other|anchor]] 服务器\n",
               tags=["a/b", "c"], aliases=["别名"], created="2026-01-02", updated="2026-01-03",
               invalid_at="2026-02-01", superseded_by="new", supersedes="old", priority="high",
               ttl="30d", summary="one line", project="memsync")
    (vault / "bad.md").write_bytes(b"---\ntitle: [oops\n---\n\xff not utf-8")
    (vault / "big.md").write_bytes(b"x" * 64)
    with open(os.path.join(os.fsencode(vault), b"bad\xffname.md"), "wb") as handle:
        handle.write(b"a note whose name is not UTF-8\n")
    (vault / "memory.jsonl").write_text(
        '{"type": "entity", "name": "A", "entityType": "p", "observations": ["x"]}\n'
        '{"type": "entity", "name": "B", "entityType": "p", "observations": ["y"]}\n')
    root = str(vault)
    markdown = [reading.look(root, adapters.get("markdown"), 32, rel, None)
                for rel in ("full.md", "bad.md", "big.md", "gone.md", "bad\udcffname.md")]
    graph = reading.look(root, adapters.get("mcp-memory"), 1 << 20, "memory.jsonl", None)
    kept = reading.look(root, adapters.get("markdown"), 1 << 20, "full.md", None)
    unchanged = reading.look(root, adapters.get("markdown"), 1 << 20, "full.md",
                             (kept.sig, kept.digest, kept.sig.mtime_ns + reading.RACY_NS))
    looks = [kept, *markdown, graph, unchanged]
    assert [look.state for look in looks] == [
        "content", "too_large", "content", "too_large", "absent", "bad_name", "content", "unchanged"]
    assert kept.cards[0].project == "memsync" and len(graph.cards) == 2 and looks[2].cards[0].problem
    rows = [reading.packed(look) for look in looks]
    opcodes = {op.name for op, _, _ in pickletools.genops(pickle.dumps(rows, pickle.HIGHEST_PROTOCOL))}
    assert not opcodes & {"GLOBAL", "STACK_GLOBAL", "REDUCE", "NEWOBJ", "BUILD"}  # no class, no call
    # The long texts stay UTF-8 in the writer, which binds them as they are (next test)
    as_utf8 = [dataclasses.replace(
        look, cards=[dataclasses.replace(card, body=card.body.encode()) for card in look.cards],
        fields=[fields._replace(body=fields.body.encode()) for fields in look.fields])
        for look in looks]
    assert [reading.unpacked(row) for row in pickle.loads(pickle.dumps(rows))] == as_utf8


def test_a_body_crossed_as_utf8_is_stored_as_the_text_it_was(vault, tmp_path):
    # A row a parallel rebuild wrote holds TEXT, and FTS5 finds the words of a UTF-8 stream
    fill(vault, 120)
    db = tmp_path / "index.db"
    rebuilt(db, workers=2)
    conn = sqlite3.connect(db)
    try:
        kinds = conn.execute("SELECT DISTINCT typeof(body) FROM cards").fetchall()
        body = conn.execute("SELECT body FROM cards WHERE path = 'bulk/7/card-7.md'").fetchone()[0]
        hits = conn.execute("SELECT rowid FROM cards_fts WHERE cards_fts MATCH 'marker7x'").fetchall()
        cjk_hits = conn.execute("SELECT count(*) FROM cards_fts WHERE cards_fts MATCH "
                                "'body:\"服务 务器\"'").fetchone()[0]
    finally:
        conn.close()
    assert kinds == [("text",)]
    assert "服务器 marker7x" in body
    assert len(hits) == 1 and cjk_hits == 120
