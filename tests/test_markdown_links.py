"""Markdown links to notes count as links, as wikilinks do: their label is indexed on the
target note and the target's in-link count includes the linking note. URLs and attachments
are not links to notes. Through a real vault, a real index and the CLI."""

from __future__ import annotations

from memsync import outline
from memsync.store import backlinks
from memsync.store.index import Index

from .conftest import write_card
from .helpers import found, sync
from .test_obsidian import _hits


def test_markdown_links_to_a_note_by_name_path_and_heading(cli, vault):
    write_card(vault, "Note.md", "Note", "The note about cache eviction.\n")
    write_card(vault, "Folder/Note Name.md", "Note Name", "Deep inside a folder.\n")
    write_card(vault, "Other.md", "Other", "Has a heading.\n\n## Heading\ntext\n")
    write_card(vault, "daily/today.md", "Today",
               "Read [quokka](Note.md), then [wombat](Folder/Note%20Name.md) and "
               "[numbat](Other.md#Heading) and [bilby](<Folder/Note Name.md>).\n")
    cli("index")
    assert found("quokka") == ["Note.md", "daily/today.md"]  # the target ranks above the mention
    assert found("wombat") == ["Folder/Note Name.md", "daily/today.md"]
    assert found("numbat") == ["Other.md", "daily/today.md"]
    assert found("bilby")[0] == "Folder/Note Name.md"
    inlinks = {h["path"]: h["inlinks"] for h in _hits(cli, "Note")}
    assert inlinks["Note.md"] == 1 and inlinks["Folder/Note Name.md"] == 1


def test_urls_and_attachments_are_not_links_to_notes(cli, vault):
    write_card(vault, "Note.md", "Note", "The note itself.\n")
    write_card(vault, "links.md", "Links",
               "[quokka](https://example.com/Note.md) [wombat](mailto:note@example.com) "
               "[numbat](obsidian://open?vault=v&file=Note) [bilby](Note.png) [potoroo](#Note)\n")
    cli("index")
    for label in ("quokka", "wombat", "numbat", "bilby", "potoroo"):
        assert found(label) == ["links.md"], label
    assert _hits(cli, "Note", "-n", "20")[0]["inlinks"] == 0


def test_an_edited_markdown_link_moves_its_label_and_count(cli, vault):
    write_card(vault, "a.md", "A", "First note.\n")
    write_card(vault, "b.md", "B", "Second note.\n")
    linking = write_card(vault, "hub.md", "Hub", "See [quokka](a.md).\n")
    cli("index")
    assert found("quokka") == ["a.md", "hub.md"]
    linking.write_text("See [wombat](b.md) and [[a]].\n")
    sync()
    assert found("quokka") == [] and found("wombat") == ["b.md", "hub.md"]
    hits = {h["path"]: h["inlinks"] for h in _hits(cli, "note")}
    assert hits["a.md"] == 1 and hits["b.md"] == 1


def test_links_are_found_in_text_order_and_not_in_code():
    lines = ["[[Wiki|w]] then [m](Note.md \"a title\") and `[c](Code.md)` and [up](../x/Up.md)",
             "[noext](Plain) [](Empty.md) [p](Note%20(draft).md) ![embed](Pic.md)"]
    assert outline.links(lines) == (
        ("Wiki", "w"), ("Note.md", "m"), ("x/Up.md", "up"), ("Plain", "noext"),
        ("Empty.md", "Empty"), ("Note (draft).md", "p"), ("Pic.md", "embed"))


def test_a_save_looks_up_the_links_of_its_names_not_every_card(tmp_path):
    # The links of the touched names drive the lookup, whatever the size of the index: a plan
    # that walks the cards of the source in path order instead made each save at 100,000 cards
    # cost 18 ms.
    index = Index(tmp_path / "plan.db")
    try:
        plan = " | ".join(row[3] for row in index._conn.execute(
            "EXPLAIN QUERY PLAN " + backlinks.LINKS_OF_NAMES, ('["a"]', "vault")))
    finally:
        index.close()
    assert plan.startswith("SEARCH l USING INDEX links_name"), plan
    assert "SEARCH c USING INTEGER PRIMARY KEY" in plan, plan


def test_a_hash_in_a_file_or_folder_name_is_part_of_the_name(cli, vault):
    """Only an entry of a memory file has a `#anchor` in its path; `C# tips.md` is a note."""
    (vault / "C# lang").mkdir()
    (vault / "C# lang" / "Generics.md").write_text("Type parameters in numbat code.\n")
    (vault / "C# tips.md").write_text("Prefer records for quokka data.\n")
    (vault / "links.md").write_text("See [[Generics]] for the numbat part.\n")
    cli("index")
    generics = {h["path"]: h for h in _hits(cli, "numbat")}["C# lang/Generics.md"]
    assert generics["title"] == "Generics" and generics["inlinks"] == 1
    assert [(h["path"], h["title"]) for h in _hits(cli, "quokka")] == [("C# tips.md", "C# tips")]


def test_the_file_of_a_card_path_drops_only_an_entrys_anchor():
    from memsync.adapters.base import anchor

    from memsync.pathnames import file_part, stem

    entry = f"GEMINI.md#{anchor('the staging box is called tern-3')}"
    assert file_part(entry) == "GEMINI.md" and stem(entry) == "GEMINI"
    assert file_part(f"C# notes/memory.jsonl#{anchor('x')}") == "C# notes/memory.jsonl"
    for note in ("C# tips.md", "C# lang/Generics.md", "Readme#draft.md", "plain.md"):
        assert file_part(note) == note
    assert stem("C# lang/Generics.md") == "Generics" and stem("C# tips.md") == "C# tips"
