"""Schema upgrades on a real index file: an index written by an older memsync keeps working."""

import json
import sqlite3
from contextlib import closing

from memsync import cjk, migrations, notes, reading
from memsync.index import CARD_COLUMNS, Index

from .conftest import write_card
from .helpers import found, indexer, snapshot, sync


def _schema_2_index(db, vault, cards) -> None:
    """An index as memsync wrote it at schema 2: titles from the first `# heading`, three FTS
    columns, no note fields. `cards` are (path, id, stored title, read count)."""
    conn = sqlite3.connect(db)
    for step in migrations.MIGRATIONS[:2]:
        step(conn)
    for seq, (path, card_id, title, reads) in enumerate(cards, start=1):
        data = (vault / path).read_bytes()
        card = notes.parse(data, path)
        st = (vault / path).stat()
        conn.execute("INSERT INTO card_ids VALUES (?, 'vault', ?)", (card_id, path))
        conn.execute("INSERT INTO card_stats VALUES (?, ?, '2026-01-02')", (card_id, reads))
        conn.execute("INSERT INTO files VALUES ('vault', ?, ?, ?, ?, ?, ?, ?)",
                     (path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                      reading.digest(data), st.st_mtime_ns + 10**9))
        conn.execute(
            f"INSERT INTO cards (seq, {CARD_COLUMNS}) VALUES ({', '.join('?' * 18)})",
            (seq, card_id, "vault", path, path, title, card.kind, json.dumps(list(card.tags), ensure_ascii=False),
             json.dumps(list(card.aliases), ensure_ascii=False), card.created, card.updated, card.invalid_at,
             card.superseded_by, card.supersedes, card.priority, card.ttl, card.body, card.problem))
        conn.execute("INSERT INTO cards_fts (rowid, title, tags, body) VALUES (?, ?, ?, ?)",
                     (seq, *cjk.index_fields(title, card.aliases, card.tags, card.body)))
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()


def test_a_schema_2_index_is_upgraded_keeping_ids_and_read_counts(vault, home, capfd):
    write_card(vault, "ssh.md", "服务器登录", "登录使用私钥，跳板机见 [[jump|跳板]]", tags=["运维"],
               aliases=["跳板机"])
    (vault / "jump.md").write_text("# Jump host\n\nThe jump host is 198.51.100.9, #ops/ssh\n")
    write_card(vault, "en.md", "English", "no chinese here\n# A heading that is not the title")
    db = home / "memsync.db"
    home.mkdir(parents=True, exist_ok=True)
    _schema_2_index(db, vault, [("ssh.md", 1001, "服务器登录", 3), ("jump.md", 1002, "Jump host", 5),
                                ("en.md", 1003, "English", 0)])
    index = Index(db)  # opening migrates
    try:
        assert index.conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        assert index.read_stats(1002) == (5, "2026-01-02") and index.read_stats(1001)[0] == 3
        # en.md's title is its frontmatter's; jump.md's came from its heading: only it is re-read
        assert [r[0] for r in index.conn.execute("SELECT path FROM files WHERE hash = ''")] == ["jump.md"]
        assert [tuple(r) for r in index.conn.execute(
            "SELECT path, inlinks, link_text FROM cards WHERE inlinks > 0")] == [("jump.md", 1, "跳板")]
    finally:
        index.close()
    assert "1 file(s) will be read once more" in capfd.readouterr().err
    assert sync().updated == 1  # the one re-read
    work, index = indexer()
    try:
        upgraded = snapshot(index)
        assert {(row["path"], row["id"], row["title"]) for row in upgraded.values()} == {
            ("ssh.md", 1001, "服务器登录"), ("jump.md", 1002, "jump"), ("en.md", 1003, "English")}
        work.rebuild()
        assert snapshot(index) == upgraded  # what a rebuild from the files gives
        assert index.read_stats(1002)[0] == 5
    finally:
        index.close()
    assert sorted(found("跳板")) == ["jump.md", "ssh.md"] and found("ops", tag="ops/ssh") == ["jump.md"]


def test_an_index_written_by_a_newer_memsync_is_refused_with_what_to_do(vault, home, run_cli):
    write_card(vault, "a.md", "a card", "a card body long enough to index")
    assert run_cli("index")[0] == 0
    newer = len(migrations.MIGRATIONS) + 1
    with closing(sqlite3.connect(home / "memsync.db")) as conn:
        conn.execute(f"PRAGMA user_version = {newer}")
    for args in (["search", "card"], ["index"], ["stats"]):
        code, out, _err = run_cli(*args, "--json")
        assert code == 2, args
        message = out["error"]["message"]
        assert out["error"]["code"] == "bad_environment"
        assert f"newer memsync (schema {newer}, this one knows {len(migrations.MIGRATIONS)})" in message
        assert "upgrade memsync" in message and "run `memsync index` to rebuild" in message
    with closing(sqlite3.connect(home / "memsync.db")) as conn:  # left as it was
        assert conn.execute("PRAGMA user_version").fetchone()[0] == newer
