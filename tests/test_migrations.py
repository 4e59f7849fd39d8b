"""Schema upgrades on a real index file: an index written by an older memsync keeps working."""

import gzip
import json
import os
import shutil
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from memsync import api, cjk, config, notes, reading
from memsync.search.lexical import Query
from memsync.store import fts, migrations
from memsync.store.health import integrity_problems
from memsync.store.index import CARD_COLUMNS, Index
from memsync.watch import Watcher, lock

from .conftest import write_card
from .helpers import found, indexer, indexing, snapshot, sync

SCHEMA_2_COLUMNS = CARD_COLUMNS.replace(", summary", "")  # summary came with schema 8


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
            f"INSERT INTO cards (seq, {SCHEMA_2_COLUMNS}) VALUES ({', '.join('?' * 18)})",
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
        assert index._conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        assert index.read_stats(1002) == (5, "2026-01-02") and index.read_stats(1001)[0] == 3
        # en.md's title is its frontmatter's; jump.md's came from its heading: schema 4 marks only it
        # to be read again, but schema 10 (the frontmatter `project`) reads every file once more
        assert sorted(r[0] for r in index._conn.execute("SELECT path FROM files WHERE hash = ''")) == [
            "en.md", "jump.md", "ssh.md"]
        assert [tuple(r) for r in index._conn.execute(
            "SELECT path, inlinks, link_text FROM cards WHERE inlinks > 0")] == [("jump.md", 1, "跳板")]
    finally:
        index.close()
    assert "1 file(s) will be read once more" in capfd.readouterr().err
    assert sync().updated == 3  # the re-reads
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
        assert "upgrade memsync" in message and "running `memsync index` to rebuild" in message
        # the upgrade first; the rebuild only with what it loses
        assert message.index("upgrade memsync") < message.index("rebuild")
        assert "not the read counts, feedback and retrieval log" in message
    with closing(sqlite3.connect(home / "memsync.db")) as conn:  # left as it was
        assert conn.execute("PRAGMA user_version").fetchone()[0] == newer


SCHEMA_4 = Path(__file__).parent / "data" / "schema4"


def _unpack(data: Path, vault: Path, home: Path) -> Path:
    """A checked-in index from an older memsync and its notes, where the tests' config looks."""
    shutil.copytree(data / "vault", vault, dirs_exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    db = home / "memsync.db"
    db.write_bytes(gzip.decompress((data / "memsync.db.gz").read_bytes()))
    return db


def _a_rebuild_changes_nothing() -> None:
    """What the upgrade left equals what a rebuild from the files gives, ids included."""
    work, index = indexer()
    try:
        upgraded = snapshot(index)
        work.rebuild()
        assert snapshot(index) == upgraded
    finally:
        index.close()
QUERIES = ("nginx", "日志", "deploy rollback", "部署笔记", "Terms", "東京都", "검색", "the vault",
           "word list", "undoing a release")


def _hits(text: str) -> list[tuple]:
    hits = api.search(config.load(), Query(text))["hits"]
    return [(h["id"], h["path"], h["score"], h["snippet"], h["inlinks"]) for h in hits]


def test_a_schema_4_index_from_an_older_memsync_stores_its_text_once(vault, home):
    index = Index(_unpack(SCHEMA_4, vault, home))  # opening migrates
    try:
        conn = index._conn
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema")}
        assert "card_terms" in tables and not tables & {
            "cards_fts_content", "names_fts_content", "fields_fts_content"}
        assert dict(conn.execute("SELECT path, id FROM cards")) == {
            "03-Knowledge/nginx-站点根目录.md": 4040233112, "Glossary.md": 5528291254,
            "Home.md": 53188473186, "Notes/Deploy Notes.md": 16560436947}
        assert index.read_stats(4040233112)[0] == 2 and index.read_stats(53188473186)[0] == 1
        assert integrity_problems(conn) == []
        # Home.md's Markdown links now count: read again from the stored body (schema 6)
        assert dict(conn.execute("SELECT path, link_text FROM cards WHERE path IN "
                                 "('Glossary.md', 'Notes/Deploy Notes.md')")) == {
            "Glossary.md": "Glossary\nthe word list",
            "Notes/Deploy Notes.md": "部署笔记\nDeploy Notes\nundoing a release"}
    finally:
        index.close()
    migrated = {q: _hits(q) for q in QUERIES}
    assert all(migrated.values()) and "部署笔记" in migrated["nginx"][0][3]  # snippets from the body
    assert migrated["undoing a release"][0][1] == "Notes/Deploy Notes.md"
    # schemas 5-9 read no file; schema 10 (the frontmatter `project`) reads each once more
    assert sync().updated == 4 and sync().updated == 0
    _a_rebuild_changes_nothing()
    assert {q: _hits(q) for q in QUERIES} == migrated


def _back_to_schema_4(db: Path) -> None:
    """Rewrite an index's full-text tables as schema 4 kept them: three FTS5 tables, each with
    its own copy of the text."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT t.seq, t.title, t.h1, t.headings, t.tags, t.links, c.body "
                            "FROM card_terms t JOIN cards c USING (seq)").fetchall()
        for table in ("cards_fts", "names_fts", "fields_fts", "card_terms"):
            conn.execute(f"DROP TABLE {table}")
        for table, columns in fts.FTS_COLUMNS.items():
            conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(columns)}, "
                         f"tokenize = '{fts.TOKENIZE}')")
        for seq, title, h1, headings, tags, links, body in rows:
            conn.execute("INSERT INTO cards_fts (rowid, title, h1, headings, tags, links, body) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (seq, title, h1, headings, tags, links, cjk.to_index_text(body)))
            conn.execute("INSERT INTO names_fts (rowid, title, h1) VALUES (?, ?, ?)", (seq, title, h1))
            conn.execute("INSERT INTO fields_fts (rowid, headings, tags, links) VALUES (?, ?, ?, ?)",
                         (seq, headings, tags, links))
        conn.execute("PRAGMA user_version = 4")
        conn.commit()
        conn.execute("VACUUM")


def test_the_upgrade_gives_the_freed_pages_back(vault, home, capfd):
    words = ["东京都的检索", "search", "engine", "index", "vault", "note", "watcher"]
    for n in range(150):
        body = " ".join(words[(n * 7 + i) % len(words)] for i in range(400))
        write_card(vault, f"n{n}.md", f"note {n}", f"{body} [[n{(n + 1) % 150}|next {n}]]")
    assert sync().added == 150
    db = home / "memsync.db"
    before = snapshot_of(db)
    _back_to_schema_4(db)
    old_size = db.stat().st_size
    index = Index(db)
    index.close()
    assert "compacting the index" in capfd.readouterr().err
    assert db.stat().st_size < 0.7 * old_size
    assert snapshot_of(db) == before


def snapshot_of(db: Path) -> dict:
    index = Index(db)
    try:
        return snapshot(index)
    finally:
        index.close()


SCHEMA_6 = Path(__file__).parent / "data" / "schema6"


def _links_as_schema_6_kept_them(conn) -> list[tuple]:
    if "file" in {row[1] for row in conn.execute("PRAGMA table_info(links)")}:
        sql = "SELECT source, file, pos, target, name, text FROM links"
    else:
        sql = ("SELECT c.source, c.path, l.pos, coalesce(l.target, l.name), l.name, l.text "
               "FROM links l JOIN cards c USING (seq)")
    return [tuple(r) for r in conn.execute(sql + " ORDER BY 1, 2, 3")]


def _rows(conn, sql: str) -> list[tuple]:
    return [tuple(r) for r in conn.execute(sql)]


def test_a_schema_6_index_takes_its_links_and_exact_keys_over_unchanged(vault, home):
    db = _unpack(SCHEMA_6, vault, home)
    with closing(sqlite3.connect(db)) as conn:
        old_links = _links_as_schema_6_kept_them(conn)
        old_keys = _rows(conn, "SELECT key, seq, strength FROM exact_keys ORDER BY 1, 2")
        old_cards = _rows(conn, "SELECT seq, id, path, inlinks, link_text FROM cards ORDER BY 1")
    assert len(old_links) == 12 and ("vault", "Home.md", 2, "archive/deploy notes", "deploy notes",
                                     "the old checklist") in old_links
    index = Index(db)  # opening migrates
    try:
        conn = index._conn
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        assert _links_as_schema_6_kept_them(conn) == old_links
        # a target is stored only when it is more than its name: here the three with a folder
        assert conn.execute("SELECT count(*) FROM links WHERE target IS NOT NULL").fetchone()[0] == 3
        assert _rows(conn, "SELECT key, seq, strength FROM exact_keys ORDER BY 1, 2") == old_keys
        assert _rows(conn, "SELECT seq, id, path, inlinks, link_text FROM cards ORDER BY 1") == old_cards
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema")}
        assert {"links_name", "exact_keys_seq"} <= names
        assert not names & {"exact_keys_key", "links_v6", "exact_keys_v6"}
        assert index.read_stats(16560436947)[0] == 2 and index.read_stats(53188473186)[0] == 1
        assert integrity_problems(conn) == []
        # written with 4 KiB pages; the upgrade moved it to smaller ones, still in WAL mode
        assert conn.execute("PRAGMA page_size").fetchone()[0] == migrations.PAGE_SIZE < 4096
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        index.close()
    assert sync().updated == 5 and sync().updated == 0  # schema 10 reads each file once more
    _a_rebuild_changes_nothing()
    assert found("the old checklist")[0] == "Archive/Deploy Notes.md"
    assert found("访问日志")[0] == "03-Knowledge/nginx-站点根目录.md"


def test_an_upgrade_while_another_process_has_the_index_open_keeps_its_pages(vault, home, capfd):
    db = _unpack(SCHEMA_6, vault, home)
    with closing(sqlite3.connect(db)) as other:  # WAL mode cannot be left while it is open
        assert other.execute("SELECT count(*) FROM cards").fetchone()[0] == 5
        index = Index(db)
        try:
            conn = index._conn
            assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
            assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert integrity_problems(conn) == []
        finally:
            index.close()
        assert other.execute("SELECT count(*) FROM links").fetchone()[0] == 12  # it reads on
    assert "keeps its larger pages; `memsync index --rebuild`" in capfd.readouterr().err
    assert found("the old checklist")[0] == "Archive/Deploy Notes.md"
    _a_rebuild_changes_nothing()  # alone now: the rebuild moves it to the smaller pages
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == migrations.PAGE_SIZE
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT read_count FROM card_stats WHERE id = 16560436947").fetchone() == (2,)


def hashes_after_migrating_from(version: int, *as_it_was: str, key: str = "path") -> dict[str, str]:
    """The index set back to schema `version` (after the statements that make it look as that
    schema left it), opened (which migrates it), and each file's stored hash by `key`."""
    db = config.load().db.path
    with closing(sqlite3.connect(db)) as conn:
        for statement in as_it_was:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()
    Index(db).close()  # opening migrates
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        return dict(conn.execute(f"SELECT {key}, hash FROM files"))


def test_schema_11_reads_again_only_the_files_of_cards_with_a_summary(vault, home):
    write_card(vault, "a.md", "with a summary", "the body", summary="a failover drill")
    write_card(vault, "b.md", "without", "another body")
    sync()
    hashes = hashes_after_migrating_from(10)
    assert hashes["a.md"] == "" and hashes["b.md"] != ""
    assert sync().updated == 1


def test_schema_14_reads_again_only_the_files_with_a_hash_in_their_name(vault, home):
    (vault / "C# tips.md").write_text("Prefer records for quokka data.\n")
    write_card(vault, "plain.md", "plain", "another body")
    sync()
    # as schema 13 left it: titled by the part before '#'
    hashes = hashes_after_migrating_from(13, "UPDATE cards SET title = 'C', name = NULL WHERE path = 'C# tips.md'")
    assert hashes["C# tips.md"] == "" and hashes["plain.md"] != ""
    assert sync().updated == 1
    with closing(sqlite3.connect(config.load().db.path)) as conn:
        assert conn.execute("SELECT title, name FROM cards WHERE path = 'C# tips.md'").fetchone() == ("C# tips", "c# tips")


def test_schema_15_reads_again_the_files_of_sources_but_not_the_vaults(vault, home, tmp_path, cli):
    rules = tmp_path / "shop" / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.mdc").write_text("---\ndescription: React style\nglobs: *.tsx\n---\nUse hooks.\n")
    write_card(vault, "plain.md", "plain", "another body")
    assert cli("sources", "--add", "rules", "--adapter", "cursor", "--path", tmp_path / "shop")[0] == 0
    sync()
    hashes = hashes_after_migrating_from(14, key="source || ':' || path")
    assert hashes["rules:.cursor/rules/style.mdc"] == "" and hashes["vault:plain.md"] != ""


def _file_changes(db: Path) -> dict:
    with closing(sqlite3.connect(db)) as conn:
        return {(s, p): t for s, p, t in conn.execute("SELECT source, path, changed_ns FROM file_changes")}


def _rebuilt_file_changes(scratch: Path) -> dict:
    """The change times a rebuild of the same files into a new index gives."""
    fresh = scratch / "fresh.db"
    with indexing(fresh) as work:
        work.rebuild()
    return _file_changes(fresh)


def test_the_change_times_follow_the_files_a_memsync_of_schema_15_still_running_writes(vault, home, tmp_path):
    """A watcher or server started before an upgrade keeps running and writing `files` with the
    statements of schema 15 (below, as its Index.replace_file, remove_file and move_file had
    them), knowing nothing of file_changes: the times still follow its edits, deletes and moves."""
    for name in ("edited", "dropped", "moved"):
        write_card(vault, f"{name}.md", name, f"the {name} card, long enough to index")
    sync()
    hashes_after_migrating_from(15)  # the upgrade, the older watcher still running
    db = config.load().db.path
    edited = vault / "edited.md"
    edited.write_text(edited.read_text() + "\nan edit the old watcher saw\n")
    before = edited.stat().st_mtime_ns - 5 * 10**9  # a time the stored one is not
    os.utime(edited, ns=(before, before))
    (vault / "dropped.md").unlink()
    (vault / "moved.md").rename(vault / "renamed.md")
    st = edited.stat()
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
                     ("vault", "edited.md", st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                      reading.digest(edited.read_bytes()), time.time_ns()))
        conn.execute("DELETE FROM files WHERE source = 'vault' AND path = 'dropped.md'")
        conn.execute("UPDATE files SET path = 'renamed.md', hash = '' WHERE source = 'vault' AND path = 'moved.md'")
        conn.commit()
    sync()  # this memsync's look after them: renamed.md is read again, edited.md is as stored
    assert _file_changes(db) == _rebuilt_file_changes(tmp_path)
    assert _file_changes(db)[("vault", "edited.md")] == before
    # a watcher of this version starting holds the lock: no older one is left, the triggers go
    watcher = Watcher(config.load())
    watcher.start()
    watcher.stop()
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall() == []


def test_schema_18_puts_right_the_change_times_an_older_memsync_left_behind(vault, home, capfd):
    write_card(vault, "a.md", "a card", "a card body long enough to index")
    write_card(vault, "b.md", "b card", "b card body long enough to index")
    sync()
    # as a watcher of schema 15 left them, writing while the index was at 17 (no triggers yet)
    hashes_after_migrating_from(
        17, *(f"DROP TRIGGER IF EXISTS {t}" for t in ("file_read", "file_dropped", "file_moved")),
        "DELETE FROM file_changes WHERE path = 'a.md'", "INSERT INTO file_changes VALUES ('vault', 'gone.md', 1)")
    assert set(_file_changes(config.load().db.path)) == {("vault", "a.md"), ("vault", "b.md")}
    assert "the change times of 2 file(s) that an older memsync wrote" in capfd.readouterr().err


def _triggers(db: Path) -> list:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()


def test_an_index_run_with_no_watcher_ends_the_upgrade_window_and_one_beside_a_watcher_does_not(vault, home, cli):
    """Schema 18's triggers stand while a watcher of an older memsync may still write; a CLI user
    who runs no watcher would otherwise keep them (and their cost to every load) for good."""
    write_card(vault, "a.md", "a card", "a card body long enough to index")
    sync()
    hashes_after_migrating_from(17)  # the upgrade adds the triggers
    db = config.load().db.path
    assert len(_triggers(db)) == 3
    held = lock.WatchLock(config.load().lock_file, str(vault))
    held.acquire()  # as a watcher started before the upgrade holds it
    try:
        assert cli("index")[0] == 0
        assert len(_triggers(db)) == 3
    finally:
        held.release()
    assert cli("index")[0] == 0
    assert _triggers(db) == []


def test_schema_19_reads_again_the_notes_read_wrong_before_it(vault, home):
    (vault / "wide.md").write_bytes("\ufeff---\ntitle: wide\n---\nbody\n".encode("utf-16-le"))
    (vault / "bare.md").write_bytes("---\ntitle: bare\n---\nbody\n".encode("utf-16-le"))
    (vault / "mac.md").write_bytes(b"---\rtitle: mac\r---\rbody\r")
    (vault / "windows.md").write_bytes(b"---\r\ntitle: windows\r\n---\r\nbody\r\nmore\r\n")
    write_card(vault, "nested.md", "nested", "body", tags=["a", ["b", "c"]])
    write_card(vault, "plain.md", "plain", "another body", tags=["a", "b"], aliases=["x"])
    (vault / "date.md").write_text("---\ntitle: date\ncreated: 2024-02-30\n---\nbody\n")
    (vault / "mark.md").write_text("---\ntitle: mark\ninvalid_at: [2024-03-01]\n---\nbody\n")
    sync()
    # as schema 18 left them: read as UTF-8, reported or not, NUL bytes in the body; lone CRs
    # kept, the frontmatter part of the body; a list in the tags one tag of Python's text
    hashes = hashes_after_migrating_from(
        18, "UPDATE cards SET problem = 'not valid UTF-8 at byte 0' WHERE path = 'wide.md'",
        "UPDATE cards SET body = 'b' || char(0) || 'o' || char(0) WHERE path = 'bare.md'",
        "UPDATE cards SET body = '---' || char(13) || 'title: mac' WHERE path = 'mac.md'",
        """UPDATE cards SET tags = '["a", "[''b'', ''c'']"]' WHERE path = 'nested.md'""",
        # the same release: a date that cannot be cost the whole frontmatter; a mark that is no
        # date was quoted as Python writes it
        "UPDATE cards SET title = 'date', problem = 'frontmatter could not be read: day is out of "
        "range for month' WHERE path = 'date.md'",
        "UPDATE cards SET problem = 'invalid_at ''[datetime.date(2024, 3, 1)]'' is not a date' "
        "WHERE path = 'mark.md'")
    assert hashes["wide.md"] == hashes["bare.md"] == hashes["mac.md"] == hashes["nested.md"] == ""
    assert hashes["date.md"] == hashes["mark.md"] == ""
    assert hashes["plain.md"] != "" and hashes["windows.md"] != ""
    assert sync().updated == 6


def test_schema_20_reads_again_the_notes_whose_invalid_at_is_no_date_or_empty(vault, home):
    (vault / "feb.md").write_text("---\ntitle: feb\ninvalid_at: 2026-02-30\n---\nbody\n")
    (vault / "empty.md").write_text("---\ntitle: empty\ninvalid_at: []\n---\nbody\n")
    (vault / "dated.md").write_text("---\ntitle: dated\ninvalid_at: 2026-02-28T10:00:00+08:00\n---\nbody\n")
    (vault / "plain.md").write_text("---\ntitle: plain\n---\nbody\n")
    sync()
    # as schema 19 left them: the impossible day taken as a date, the empty list as a mark
    hashes = hashes_after_migrating_from(
        19, "UPDATE cards SET problem = NULL WHERE path = 'feb.md'",
        "UPDATE cards SET invalid_at = '[]', problem = 'invalid_at ''[]'' is not a date, so the card "
        "counts as no longer valid' WHERE path = 'empty.md'")
    assert hashes["feb.md"] == hashes["empty.md"] == ""
    assert hashes["dated.md"] != "" and hashes["plain.md"] != ""
    assert sync().updated == 2
    with closing(sqlite3.connect(config.load().db.path)) as conn:
        rows = dict(conn.execute("SELECT path, coalesce(invalid_at, '-') || ' ' || coalesce(problem, '-') "
                                 "FROM cards WHERE path IN ('feb.md', 'empty.md')"))
    assert rows["empty.md"] == "- -" and rows["feb.md"].startswith("2026-02-30 invalid_at '2026-02-30' is not")
