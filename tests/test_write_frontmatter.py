"""Line-level frontmatter edits, file names and card rendering. Pure: no disk."""

from __future__ import annotations

import string
import sys

import pytest
import yaml
from frontmatter.default_handlers import SafeLoader
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync import notes
from memsync.errors import BadArgument
from memsync.model import KIND_FOLDERS
from memsync.write import frontmatter_edit as fe
from memsync.write import rules
from memsync.write.vault import render

HAND_WRITTEN = (
    "---\n"
    "title: 'Quoted: title'\n"
    "# a comment a person wrote\n"
    "aliases:\n"
    "  - first\n"
    "  - second\n"
    "tags:\n"
    "- ops\n"
    "- nginx\n"
    "created: 2024-01-02\n"
    "custom_key:   {nested: [1, 2]}   # keep me\n"
    "---\n"
    "\n"
    "Body line one.\n"
)


def test_set_keys_rewrites_only_the_named_keys():
    out = fe.set_keys(HAND_WRITTEN, {"tags": "[a, b]", "updated": "2026-01-01T00:00:00+00:00"})
    assert out == HAND_WRITTEN.replace("tags:\n- ops\n- nginx\n", "tags: [a, b]\n").replace(
        "custom_key:   {nested: [1, 2]}   # keep me\n",
        "custom_key:   {nested: [1, 2]}   # keep me\nupdated: 2026-01-01T00:00:00+00:00\n",
    )


def test_set_keys_keeps_the_spacing_after_the_colon_and_can_drop_a_key():
    text = "---\ntitle:    Old\nttl: 30d\nz: 1\n---\nbody\n"
    assert fe.set_keys(text, {"title": "New"}) == "---\ntitle:    New\nttl: 30d\nz: 1\n---\nbody\n"
    assert fe.set_keys(text, {"ttl": None}) == "---\ntitle:    Old\nz: 1\n---\nbody\n"


def test_lone_carriage_returns_survive_an_edit():
    text = "---\rtitle: Old\rother: x\r---\r\rbody\r"
    out = fe.set_keys(text, {"title": "New", "priority": "5"})
    assert out == "---\rtitle: New\rother: x\rpriority: 5\r---\r\rbody\r"
    assert fe.set_body(out, "one\ntwo") == "---\rtitle: New\rother: x\rpriority: 5\r---\r\rone\rtwo\r"


def test_crlf_and_bom_survive_an_edit():
    text = "\ufeff---\r\ntitle: Old\r\nother: x\r\n---\r\nbody\r\n"
    out = fe.set_keys(text, {"title": "New", "priority": "5"})
    assert out == "\ufeff---\r\ntitle: New\r\nother: x\r\npriority: 5\r\n---\r\nbody\r\n"
    assert fe.set_body(out, "one\ntwo") == "\ufeff---\r\ntitle: New\r\nother: x\r\npriority: 5\r\n---\r\none\r\ntwo\r\n"


def test_a_note_without_frontmatter_gets_one_holding_only_the_new_keys():
    text = "# Heading\n\nplain note\n"
    assert fe.set_keys(text, {"updated": "2026-01-01"}) == "---\nupdated: 2026-01-01\n---\n# Heading\n\nplain note\n"


def test_set_body_keeps_the_frontmatter_and_the_blank_line_after_it():
    out = fe.set_body(HAND_WRITTEN, "New body.")
    assert out == HAND_WRITTEN.replace("Body line one.\n", "New body.\n")


def test_a_dashed_line_in_the_body_is_not_a_fence():
    text = "---\ntitle: T\n---\nabove\n---\nbelow\n"
    assert fe.set_keys(text, {"title": "U"}) == "---\ntitle: U\n---\nabove\n---\nbelow\n"


SCALARS = ["plain words", "nginx 站点根目录", "yes", "null", "2024-01-01", "5", "a: b", "#tag", "- x",
           "'quoted'", '"dq"', "trailing ", " leading", "tab\tinside", "[x]", "{x}", "@at", "`tick`",
           "x # y", "\u2028", "\x7f", "%percent", "!bang", "*star", "&amp", "?q", "|pipe", ">gt",
           "~", "<<", "=", "a: &x", "--- x", "... x", "x:", ".nan", "0o17", "1_0"]


@pytest.mark.parametrize("value", SCALARS)
def test_scalar_reads_back_as_the_same_string(value):
    loaded = fe._loads(f"k: {fe.scalar(value)}")
    assert loaded == {"k": value}


def test_the_unprintable_search_refuses_what_printable_refuses_for_every_code_point():
    refused = [o for o in range(sys.maxunicode + 1) if not fe._printable(chr(o))]
    found = [o for o in range(sys.maxunicode + 1) if fe._UNPRINTABLE.search(chr(o))]
    assert found == refused


def _scalar_by_load(value: str) -> str:
    """scalar as it was first written: each character checked by a call, the value by PyYAML. A
    value YAML reads as a date that cannot be (2024-02-30) is quoted, as one it cannot read."""
    plain = value and value == value.strip() and all(fe._printable(c) for c in value)
    try:
        loaded = yaml.load(f"k: {value}", Loader=SafeLoader) if plain else None  # noqa: S506 - safe
    except (yaml.YAMLError, ValueError):
        loaded = None
    return value if loaded == {"k": value} else fe.quoted(value)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=20), st.sampled_from([*SCALARS, "2024-02-30"]),
                 st.builds("".join, st.lists(st.sampled_from(["a", " ", ":", "#", "-", "'", '"', "[", "]",
                                                              "{", "}", ",", "&", "*", "!", "|", ">", "?",
                                                              "%", "@", "`", "~", "1", ".", "中", "\t"]),
                                             max_size=8))))
def test_scalar_renders_as_a_whole_load_would_decide(value):
    assert _outcome(fe.scalar, value) == _outcome(_scalar_by_load, value)


def _outcome(render, value: str):
    try:
        return render(value)
    except ValueError as exc:  # YAML takes 2024-02-30 for a date, and no such day is
        return type(exc)


def test_flow_list_reads_back_as_the_same_items():
    items = ["a", "b, c", "[x]", "yes", "1", "中文", "#h", "a:b", "a: b"]
    assert fe._loads(f"k: {fe.flow_list(items)}") == {"k": items}
    assert fe.flow_list(["nginx", "ops"]) == "[nginx, ops]"


@pytest.mark.parametrize(
    ("title", "stem"),
    [
        # issue 19: spaces stay, as Obsidian names a note, so [[nginx 站点根目录位置]] resolves
        ("nginx 站点根目录位置", "nginx 站点根目录位置"),
        ("a/b\\c:d*e?f\"g<h>i|j", "a b c d e f g h i j"),
        ("../../etc/passwd", "etc passwd"),
        ("...hidden name", "hidden name"),
        (". .env", "env"),
        ("tabs\tand\nnewlines", "tabs and newlines"),
        ("bell\x07and\x1besc", "bell and esc"),
        ("wiki [[link]] #tag ^block", "wiki link tag block"),
        ("???", "untitled"),
        ("CON", "CON-note"),
        ("aux.config", "aux-note.config"),
        ("lpt1 ", "lpt1-note"),
        ("trailing dots...", "trailing dots"),
        ("trailing space . ", "trailing space"),
        ("Keep Case", "Keep Case"),
        ("ecs-prod deploy", "ecs-prod deploy"),
        ("plan --title draft", "plan title draft"),
        ("-rf everything", "rf everything"),
    ],
)
def test_slug(title, stem):
    assert rules.slug(title) == stem


def test_a_captured_note_resolves_by_its_title_as_a_wikilink(cli, vault):
    from .conftest import write_card

    _, made = cli("capture", "--title", "nginx 站点根目录位置", "--body", "ecs-prod 上 nginx 的站点根目录是 /srv/www", "--json")
    assert made["path"] == "03-Knowledge/nginx 站点根目录位置.md"
    write_card(vault, "03-Knowledge/ops index.md", "ops index", "see [[nginx 站点根目录位置]] for the web root")
    cli("index")
    _, hits = cli("search", "站点根目录位置", "--json")
    assert [(h["id"], h["inlinks"]) for h in hits["hits"] if h["id"] == made["id"]] == [(made["id"], 1)]


def test_slug_fits_a_file_name_even_in_cjk():
    stem = rules.slug("东京都" * 200)
    assert len(stem) <= rules.MAX_STEM_CHARS and len(stem.encode()) <= rules.MAX_STEM_BYTES
    assert len((rules.numbered(stem, 999)).encode()) < 255


def test_titles_and_tags_are_cleaned_and_an_empty_title_is_refused():
    assert rules.clean_title("  two   spaces\nand a line  ") == "two spaces and a line"
    assert rules.clean_tags("#nginx, ops,,nginx , ") == ["nginx", "ops"]
    for flow in ("[nginx, ops]", '["nginx", "ops"]', " ['nginx','#ops'] "):  # a list sent as a string
        assert rules.clean_tags(flow) == ["nginx", "ops"], flow
    assert rules.clean_tags("[]") == [] and rules.clean_tags("[a]b") == ["[a]b"]
    with pytest.raises(BadArgument):
        rules.clean_title(" \n ")


def test_the_body_threshold_is_twenty_characters():
    assert rules.body_problem("x" * 19)
    assert rules.body_problem("x" * 20) is None


# --- the property: what capture writes, the parser reads back unchanged ---------------------

title_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(
    lambda t: rules._drop_controls(t).split()
)
tag_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
body_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
tricky_body = st.sampled_from(["---\nnot a fence\n---", "...\n", "# heading", "key: value", "  indented", "x"])


@settings(max_examples=300, deadline=None)
@given(title_text, st.sampled_from(sorted(KIND_FOLDERS)), st.lists(tag_text, max_size=5),
       st.one_of(body_text, tricky_body), st.none() | st.just("03-Knowledge/old card.md"))
def test_parse_of_render_gives_back_every_field(title, kind, tags, body, supersedes):
    title, tags, body = rules.clean_title(title[:200]), rules.clean_tags(tags), rules.clean_body(body)
    when = "2026-09-12T10:30:00+08:00"
    text = render(title, kind, tags, when, body, supersedes=supersedes)
    card = notes.parse(text.encode("utf-8"), "03-Knowledge/x.md")
    assert card.problem is None
    assert (card.title, card.kind, list(card.tags), card.body) == (title, kind, tags, body)
    assert (card.created, card.updated, card.supersedes) == (when, when, supersedes)


@settings(max_examples=200, deadline=None)
@given(st.text(string.printable + "中文ß\u00a0\u3000", min_size=1, max_size=40))
def test_an_edited_title_reads_back_exactly(title):
    title = rules.clean_title(title) if rules._drop_controls(title).split() else "x"
    base = render("start", "knowledge", ["a"], "2026-09-12T10:30:00+08:00", "a body long enough to keep")
    edited = fe.set_keys(base, {"title": fe.scalar(title)})
    assert notes.parse(edited.encode(), "x.md").title == title
    assert edited.replace(f"title: {fe.scalar(title)}\n", "title: start\n") == base
