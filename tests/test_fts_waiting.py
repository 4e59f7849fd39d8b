"""The full-text rows of the cards a transaction writes wait for its end (memsync.store.fts.Waiting),
when the links pointing at each card are known: a linked card's rows are written once, and the
index they make is the one writing each card's rows at once (then again once linked) made."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from memsync import adapters, config, reading, sync
from memsync.store import backlinks, fts
from memsync.store.health import integrity_problems
from memsync.store.index import Index
from memsync.sync import Indexer

from .conftest import write_card
from .helpers import indexing

NOTES = 40


def link_notes(vault: Path, first: int = 0, n: int = NOTES, word: str = "body") -> None:
    """Notes that each link the next one (and one far ahead), under anchor text of their own."""
    for i in range(first, first + n):
        write_card(vault, f"notes/n{i}.md", f"note {i}",
                   f"{word} {i} 服务器 marker{i}z\nsee [[n{(i + 1) % NOTES}|anchor{(i + 1) % NOTES}q]] "
                   f"and [[n{(i + 17) % NOTES}]]\n")


def indexer(db: Path) -> tuple[Index, Indexer]:
    index = Index(db)
    return index, Indexer(index, config.load().sources, workers=1)


@pytest.fixture
def deleted(monkeypatch) -> list[int]:
    """The seqs whose full-text rows are deleted (to be written again), as they are."""
    seqs: list[int] = []
    write = fts._write

    def counted(conn, command, seq, terms, body_tokens):
        seqs.extend([seq] if command == "delete" else [])
        write(conn, command, seq, terms, body_tokens)

    monkeypatch.setattr(fts, "_write", counted)
    return seqs


def full_text(db: Path) -> dict:
    """Every token instance (term, card, column, position) of each full-text table, whatever the
    segments FTS5 wrote them into, and the short fields' text."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table in fts.FTS_COLUMNS:
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, 'instance')")
            out[table] = conn.execute(f"SELECT term, doc, col, offset FROM temp.v_{table} "
                                      "ORDER BY 1, 2, 3, 4").fetchall()
        out["card_terms"] = conn.execute("SELECT * FROM card_terms ORDER BY seq").fetchall()
        out["cards"] = conn.execute("SELECT seq, path, link_text, inlinks FROM cards ORDER BY seq").fetchall()
        assert integrity_problems(conn) == []
        return out
    finally:
        conn.close()


def test_a_linked_cards_rows_are_written_once_with_their_links(vault, tmp_path, monkeypatch, deleted):
    link_notes(vault)
    index, work = indexer(tmp_path / "i.db")
    try:
        work.reconcile()  # one batch, one transaction
        assert deleted == []  # written at once, every card here was written, deleted, written again
        held = []
        hold = fts.Waiting.hold
        monkeypatch.setattr(fts.Waiting, "hold", lambda self, conn, seq, body: (held.append(seq),
                                                                                hold(self, conn, seq, body)))
        work.rebuild()  # each card is written at once with the links field it had: still right
        assert deleted == [] and held == [] and not index.waiting.seqs
    finally:
        index.close()
    conn = sqlite3.connect(tmp_path / "i.db")
    found = conn.execute("SELECT c.path FROM cards_fts f JOIN cards c ON c.seq = f.rowid "
                         "WHERE cards_fts MATCH 'links : anchor5q'").fetchall()
    assert found == [("notes/n5.md",)]  # the anchor text is in the linked card's own rows


def test_the_index_is_the_one_written_card_by_card(vault, tmp_path, monkeypatch):
    """Through a first index, changes (edits, new notes linking old ones, a removal) and a
    rebuild, which holds back the cards links pointed at before: token for token the same."""
    def steps(db: Path) -> list[dict]:
        index, work = indexer(db)
        seen = []
        try:
            link_notes(vault)
            work.reconcile()
            seen.append(full_text(db))
            link_notes(vault, 5, 3, word="edited")
            write_card(vault, "notes/late.md", "late", "new [[n3|latecomer]] and [[n30]]")
            (vault / "notes" / "n9.md").unlink()
            work.reconcile()
            seen.append(full_text(db))
            work.rebuild()
            seen.append(full_text(db))
            # links changed on disk since the index: the links fields a rebuild gives back
            # from the old rows are wrong for the cards they point at, and are set right
            write_card(vault, "notes/n20.md", "note 20", "relinked [[n21|newanchor]] [[n2]]")
            work.rebuild()
            seen.append(full_text(db))
        finally:
            index.close()
        return seen

    waiting = steps(tmp_path / "waiting.db")
    for path in vault.rglob("*.md"):
        path.unlink()
    insert = fts.insert
    monkeypatch.setattr(fts, "insert", lambda conn, seq, terms, body, waiting=None: insert(conn, seq, terms, body))
    assert steps(tmp_path / "at-once.db") == waiting


def test_a_rolled_back_transaction_leaves_nothing_waiting(vault, tmp_path, monkeypatch):
    """Its waiting rows went with the rollback; the seqs it held are handed out again, and must
    not pass for waiting ones (their deletes would leave their full-text rows behind)."""
    link_notes(vault)
    db = tmp_path / "i.db"
    index, work = indexer(db)
    try:
        refresh = backlinks.refresh

        def fail_once(*args):
            monkeypatch.setattr(backlinks, "refresh", refresh)
            raise RuntimeError("killed before the commit")

        monkeypatch.setattr(backlinks, "refresh", fail_once)
        with pytest.raises(RuntimeError):
            work.reconcile()
        assert not index.waiting.seqs
        work.reconcile()
        link_notes(vault, 0, 10, word="edited")  # deletes of the cards the retry wrote
        work.reconcile()
    finally:
        index.close()
    link_notes(vault)  # the same steps again, with nothing failing
    clean = tmp_path / "clean.db"
    with indexing(clean, workers=1) as work:
        work.reconcile()
        link_notes(vault, 0, 10, word="edited")
        work.reconcile()
    assert full_text(db) == full_text(clean)


def test_a_card_removed_while_waiting_never_gets_rows(vault, tmp_path):
    write_card(vault, "gone.md", "gone", "here and gone [[kept]]")
    write_card(vault, "kept.md", "kept", "stays")
    index = Index(tmp_path / "i.db")
    try:
        markdown = adapters.get("markdown")
        with index.transaction():
            for rel in ("gone.md", "kept.md"):
                look = reading.look(str(vault), markdown, reading.MAX_FILE_BYTES, rel, None)
                index.replace_file("vault", rel, look.cards, look.fields, look.sig, look.digest, look.read_at)
            index.remove_file("vault", "gone.md")
    finally:
        index.close()
    conn = sqlite3.connect(tmp_path / "i.db")
    assert conn.execute("SELECT count(*) FROM cards_fts").fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM cards_fts WHERE cards_fts MATCH 'gone'").fetchone() == (0,)
    assert integrity_problems(conn) == []


def test_a_rebuild_of_a_new_index_holds_back_the_cards_earlier_files_link(vault, tmp_path, deleted):
    """With no old rows to say which cards are linked, the links of the files written so far
    do: a card an earlier file links waits; one only a later file links is written again."""
    write_card(vault, "a.md", "a", "links [[b]] ahead")
    write_card(vault, "b.md", "b", "linked from before")
    write_card(vault, "c.md", "c", "linked from after")
    write_card(vault, "d.md", "d", "links [[c]] behind")
    with indexing(tmp_path / "new.db", workers=1) as work:
        work.rebuild()
    cards = {path: (seq, text, inlinks) for seq, path, text, inlinks in full_text(tmp_path / "new.db")["cards"]}
    assert cards["b.md"][1:] == ("b", 1) and cards["c.md"][1:] == ("c", 1)
    assert deleted == [cards["c.md"][0]]


def web(vault: Path, n: int = 200) -> None:
    """Notes each linking three others, far apart: a bulk load in batches meets most links
    in a later batch than the card they point at."""
    for i in range(n):
        targets = [(i + step) % n for step in (1, 97, 151)]
        write_card(vault, f"web/w{i}.md", f"web {i}",
                   f"text {i} 数据库\n" + " ".join(f"[[w{t}|to{t}x]]" for t in targets) + "\n")


@pytest.fixture
def batches(monkeypatch):
    """Thresholds small enough that 200 files are a bulk load of several transactions (a first
    index too: it is one transaction up to ONE_LOAD_FILES files)."""
    for name, value in {"PARALLEL_FROM": 60, "WORKER_CHUNK": 10, "BATCH": 60, "ONE_LOAD_FILES": 0}.items():
        monkeypatch.setattr(sync, name, value)


def test_a_bulk_load_writes_a_cards_rows_again_once_at_most(vault, tmp_path, monkeypatch, batches, deleted):
    web(vault)
    index, work = indexer(tmp_path / "bulk.db")
    try:
        work.reconcile()
        assert index.meta(backlinks.UNSETTLED) is None
    finally:
        index.close()
    assert deleted and max(Counter(deleted).values()) == 1  # linked from later batches: once
    monkeypatch.setattr(sync, "PARALLEL_FROM", 10_000)  # not a bulk load: settled in each batch
    with indexing(tmp_path / "batches.db", workers=1) as work:
        work.reconcile()
    assert full_text(tmp_path / "bulk.db") == full_text(tmp_path / "batches.db")


def test_a_bulk_load_killed_before_its_end_is_settled_by_the_next(vault, tmp_path, monkeypatch, batches):
    web(vault)
    settle = backlinks.Carried.settle

    def killed(self, conn, waiting=None):
        raise RuntimeError("killed")

    monkeypatch.setattr(backlinks.Carried, "settle", killed)
    db = tmp_path / "killed.db"
    index, work = indexer(db)
    try:
        with pytest.raises(RuntimeError):
            work.reconcile()
        assert index.meta(backlinks.UNSETTLED) == "1"  # committed with the batches that carried
        lagging = full_text(db)
        monkeypatch.setattr(backlinks.Carried, "settle", settle)
        work.reconcile()  # nothing changed on disk: only the mark says what to do
        assert index.meta(backlinks.UNSETTLED) is None
    finally:
        index.close()
    clean = tmp_path / "clean.db"
    with indexing(clean, workers=1) as work:
        work.reconcile()
    assert lagging["cards"] != full_text(clean)["cards"]  # the links fields lagged
    assert full_text(db) == full_text(clean)


def test_a_rebuild_settles_what_a_killed_bulk_load_left(vault, tmp_path, monkeypatch, batches):
    web(vault)
    monkeypatch.setattr(backlinks.Carried, "settle", lambda self, conn, waiting=None: 1 / 0)
    index, work = indexer(tmp_path / "i.db")
    try:
        with pytest.raises(ZeroDivisionError):
            work.reconcile()
        work.rebuild()  # every links field made anew
        assert index.meta(backlinks.UNSETTLED) is None
    finally:
        index.close()


def rebuilt_and_first(tmp_path: Path, change) -> tuple[dict, dict]:
    """full_text of an index made, then rebuilt after `change()` to the files, and of a first
    index of the files as they end."""
    with indexing(tmp_path / "rebuilt.db", workers=1) as work:
        work.reconcile()
        change()
        work.rebuild()
    with indexing(tmp_path / "first.db", workers=1) as work:
        work.reconcile()
    return full_text(tmp_path / "rebuilt.db"), full_text(tmp_path / "first.db")


def test_a_rebuild_gives_the_index_a_first_index_gives(vault, tmp_path):
    """A rebuild gives each card back the links field it had, and sets right those that links
    changed on disk since: the same index as a first index of the same files."""
    link_notes(vault)

    def relink():
        write_card(vault, "notes/n20.md", "note 20", "relinked [[n21|newanchor]] [[n2]]")
        (vault / "notes" / "n33.md").unlink()

    rebuilt, first = rebuilt_and_first(tmp_path, relink)
    assert rebuilt == first


def test_a_rebuild_clears_the_links_field_of_a_card_no_link_points_at_any_more(vault, tmp_path):
    """A rebuild gives a card back the links field it had, then settles the links of only the
    cards some link points at: one whose last in-link is gone must be settled too."""
    write_card(vault, "notes/lone.md", "lone", "a note one other note links")
    write_card(vault, "notes/pointer.md", "pointer", "see [[lone|the lone one]]")
    rebuilt, first = rebuilt_and_first(
        tmp_path, lambda: write_card(vault, "notes/pointer.md", "pointer", "links nothing any more"))
    assert ("notes/lone.md", "", 0) in [row[1:] for row in rebuilt["cards"]]
    assert rebuilt == first


def test_a_rebuild_settles_the_links_of_the_linked_cards_only(vault, tmp_path, monkeypatch):
    """The cards no link points at, that had no links field, are left out of the refresh: it
    would read every card again to find them as they are."""
    for i in range(30):
        write_card(vault, f"plain/p{i}.md", f"plain {i}", f"no links in {i}")
    write_card(vault, "notes/lone.md", "lone", "linked once")
    write_card(vault, "notes/pointer.md", "pointer", "see [[lone]]")
    index, work = indexer(tmp_path / "index.db")
    asked: list[set] = []
    refresh = backlinks.refresh

    def recorded(conn, touched, waiting=None):
        asked.append(set(touched))
        return refresh(conn, touched, waiting)

    try:
        work.reconcile()
        monkeypatch.setattr(backlinks, "refresh", recorded)
        work.rebuild()
    finally:
        index.close()
    assert asked == [{("vault", "lone")}]
