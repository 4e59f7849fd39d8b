"""Schema upgrades on a real index file: an index written by an older memsync keeps working."""

import sqlite3
from contextlib import closing

from memsync import migrations
from memsync.index import Index

from .conftest import write_card
from .helpers import found, indexer, snapshot, sync


def _as_version_1(db) -> None:
    """Put an index back to schema 1: CJK runs stored as bigrams only, user_version 1."""
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT rowid, title, tags, body FROM cards_fts").fetchall()
    conn.execute("DELETE FROM cards_fts")
    strip = lambda text: " ".join(t for t in text.split() if not (len(t) == 1 and ord(t) > 0x2FFF))  # noqa: E731
    conn.executemany("INSERT INTO cards_fts (rowid, title, tags, body) VALUES (?, ?, ?, ?)",
                     [(r, strip(a), strip(b), strip(c)) for r, a, b, c in rows])
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


def test_version_1_index_is_retokenized_for_single_character_queries(vault, home):
    write_card(vault, "ssh.md", "服务器登录", "登录使用私钥", tags=["运维"], aliases=["跳板机"])
    write_card(vault, "en.md", "English", "no chinese here")
    sync()
    work, index = indexer()
    expected = snapshot(index)
    index.close()
    db = home / "memsync.db"
    _as_version_1(db)
    with closing(sqlite3.connect(db)) as conn:  # what an old index holds: 钥 only inside the bigram 私钥
        assert conn.execute("SELECT count(*) FROM cards_fts WHERE cards_fts MATCH '\"钥\" *'").fetchone() == (0,)

    index = Index(db)  # opening migrates
    try:
        assert index.conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        assert snapshot(index) == expected  # the same FTS text a fresh index stores
    finally:
        index.close()
    assert found("钥") == ["ssh.md"]


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
