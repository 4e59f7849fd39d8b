import codecs

import pytest

from memsync import notes


def parse(text: str, rel="03-Knowledge/x.md"):
    return notes.parse(text.encode("utf-8"), rel)


def test_frontmatter_fields_are_read():
    card = parse(
        "---\ntitle: nginx 站点根目录位置\nkind: knowledge\ntags: [nginx, ops]\n"
        "created: 2026-09-12T10:30:00+08:00\n---\nbody"
    )
    assert card.title == "nginx 站点根目录位置"
    assert card.kind == "knowledge"
    assert card.tags == ("nginx", "ops")
    assert card.created == "2026-09-12T10:30:00+08:00"
    assert card.body == "body"


def test_a_content_key_does_not_break_parsing():
    card = parse("---\ntitle: t\ncontent: something\n---\nthe body")
    assert card.title == "t" and card.body == "the body"


def test_bom_is_stripped():
    card = notes.parse(b"\xef\xbb\xbf---\ntitle: with bom\n---\nbody", "a.md")
    assert card.title == "with bom" and card.problem is None


def test_no_frontmatter_title_is_the_file_name_and_headings_are_headings():
    card = parse("intro\n# The Heading\ntext\n## Part two ##", "notes/Home.md")
    assert card.title == "Home"
    assert card.headings == ((1, "The Heading"), (2, "Part two"))


def test_a_heading_inside_a_code_fence_is_not_a_heading():
    text = "```sh\n# Login\n```\n~~~~\n# Dog\n```\n~~~~\nbody"
    card = parse("---\naliases: [x]\n---\n" + text, "Headless Sync.md")
    assert card.title == "Headless Sync" and card.headings == ()


def test_frontmatter_lines_are_not_headings_and_a_title_key_wins():
    card = parse("---\ntitle: Real title\n# comment: x\n---\n# H1\n", "file.md")
    assert card.title == "Real title" and card.headings == ((1, "H1"),)


def test_inline_tags_outside_code_and_links_with_labels():
    card = parse("text #tag and #a/b `#code` #123 not#tag\n# Heading\n"
                 "see [[Note|label]], [[folder/Other#Part]] and ![[Embedded]]\n```\n#no [[No]]\n```")
    assert card.body_tags == ("tag", "a/b")
    assert card.links == (("Note", "label"), ("folder/Other", "Other Part"), ("Embedded", "Embedded"))


def test_aliases_as_a_string_or_a_list():
    assert parse("---\naliases: Obsidian settings\n---\nx").aliases == ("Obsidian settings",)
    assert parse("---\naliases:\n  - a b\n  - c\n---\nx").aliases == ("a b", "c")


def test_no_frontmatter_no_heading_title_from_stem():
    assert parse("just text", "notes/some-note.md").title == "some-note"


def test_broken_yaml_keeps_body_and_reports():
    card = parse("---\ntitle: [unclosed\n---\n# Fallback\nstill indexed")
    assert card.title == "x"  # the file name
    assert "still indexed" in card.body
    assert "---" not in card.body
    assert "YAML" in card.problem


def test_tags_as_string_or_list():
    assert parse('---\ntags: "a, b #c"\n---\nx').tags == ("a", "b", "c")
    assert parse("---\ntags:\n  - one\n  - two\n---\nx").tags == ("one", "two")


def test_aliases_are_read():
    assert parse("---\naliases: [别名, other name]\n---\nx").aliases == ("别名", "other name")


def test_dates_quoted_or_not_compare_the_same():
    a = parse("---\ncreated: 2026-01-02\n---\nx").created
    b = parse("---\ncreated: '2026-01-02'\n---\nx").created
    assert a == b == "2026-01-02"


def test_unreadable_date_is_none():
    assert parse("---\ncreated: yesterday\n---\nx").created is None


def test_kind_from_folder_when_not_given():
    assert parse("x", "08-Mistakes/oops.md").kind == "mistake"
    assert parse("x", "elsewhere/oops.md").kind is None


def test_non_utf8_bytes_are_replaced_and_reported():
    card = notes.parse(b"# Title\nbad \xff byte", "a.md")
    assert "bad" in card.body and "UTF-8" in card.problem


def test_frontmatter_that_is_not_a_mapping():
    card = parse("---\n- a\n- b\n---\nbody text")
    assert card.problem and card.body.strip() == "body text"


def test_lines_ended_by_a_lone_carriage_return_are_lines():
    card = notes.parse(b"---\rtitle: classic mac\rtags: [a]\r---\r# Setup\rbody\r", "m.md")
    assert (card.title, card.tags, card.headings) == ("classic mac", ("a",), ((1, "Setup"),))
    assert card.body == "# Setup\nbody" and card.problem is None


def test_crlf_frontmatter_is_read():
    card = notes.parse(b"---\r\ntitle: windows card\r\ntags: [a]\r\n---\r\nbody\r\n", "w.md")
    assert card.title == "windows card" and card.tags == ("a",) and card.problem is None
    assert card.body.strip() == "body"


def test_a_date_field_that_is_no_date_is_quoted_as_the_file_writes_it():
    """YAML makes dates of `[2024-03-01, 2024-04-01]` and a bool of `true`: the problem (and the
    mark show prints) said `[datetime.date(2024, 3, 1), ...]` and `True`."""
    card = parse("---\ninvalid_at: [2024-03-01, 2024-04-01T10:00:00+08:00]\ncreated: true\n---\nbody")
    assert card.invalid_at == "[2024-03-01, 2024-04-01T10:00:00+08:00]"
    assert "invalid_at '[2024-03-01, 2024-04-01T10:00:00+08:00]' is not a date" in card.problem
    assert "created 'true' is not a date" in card.problem
    card = parse("---\ninvalid_at: {from: 2024-03-01}\ncreated: 1709280000\n---\nbody")
    assert card.invalid_at == "{from: 2024-03-01}" and "created '1709280000' is not" in card.problem
    assert "datetime" not in card.problem


@pytest.mark.parametrize("codec, bom", [
    ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-16-le", b""), ("utf-16-be", b""),
    ("utf-32-le", codecs.BOM_UTF32_LE), ("utf-32-be", codecs.BOM_UTF32_BE),
])
def test_a_utf16_or_utf32_note_is_read_as_such_and_reported(codec, bom):
    text = "---\ntitle: Windows 笔记\ntags: [ops]\n---\n# Setup\nthe nginx root lives in /srv\n"
    card = notes.parse(bom + text.encode(codec), "a.md")
    assert (card.title, card.tags) == ("Windows 笔记", ("ops",))
    assert card.body.startswith("# Setup\nthe nginx root") and "\x00" not in card.body
    assert "UTF-" in card.problem and "save it as UTF-8" in card.problem


def test_a_stray_nul_byte_does_not_make_a_note_utf16():
    card = notes.parse(b"---\ntitle: t\n---\nbefore \x00 after, a body of some length\n", "a.md")
    assert card.title == "t" and card.problem is None and "\x00" in card.body


def test_a_list_inside_the_tags_holds_tags_and_a_mapping_none():
    card = parse("---\ntags:\n  - a\n  - [b, c]\n  - {d: e}\n  - - f\n    - {g: [h]}\n"
                 "aliases: [[x, y], z]\n---\nbody")
    assert card.tags == ("a", "b", "c", "f") and card.aliases == ("x", "y", "z")
    assert card.problem.startswith("tags holds a key: value pair") and "list of words" in card.problem
    card = parse("---\ntags: {x: 1}\naliases: {y: 2}\n---\nbody")
    assert card.tags == card.aliases == () and card.problem.startswith("tags and aliases hold")


@pytest.mark.parametrize(("line", "field", "said"), [
    ("title: {a: b}", "title", "title '{a: b}' is not one value, so the card is titled by its file name"),
    ("title: [Deploy, prod]", "title", "title '[Deploy, prod]' is not one value"),
    ("kind:\n  a: b", "kind", "kind '{a: b}' is not one value, so the card's kind comes from its folder"),
    ("summary: {x: 1}", "summary", "summary '{x: 1}' is not one value, so the card has no summary"),
    ("project: {shop: 1}", "project", "project '{shop: 1}' is not one value, so the card names no project"),
    ("supersedes: {a: b}", "supersedes", "supersedes '{a: b}' is not one value"),
])
def test_a_one_value_field_written_as_a_mapping_or_list_is_reported(line, field, said):
    """Dropped (read as none) without a word, unlike the dates, tags and priority beside them."""
    card = parse(f"---\n{line}\n---\nbody")
    assert card.problem and card.problem.startswith(said) and "in quotes if it holds a colon" in card.problem
    assert getattr(card, field) == getattr(parse("body"), field)  # as if it were not there


def test_a_summary_as_a_list_of_lines_and_an_emptied_field_are_no_problem():
    card = parse("---\nsummary: [one, two]\ntitle: []\nkind: {}\n---\nbody")
    assert card.summary == "one two" and card.problem is None


@pytest.mark.parametrize("fenced, line", [
    ("title: a\n  bad: indent\nkind: x", 3),  # found where it is
    ("title: [unclosed", 2),  # found only at the end: where the `[` began
    ("title: a\nkind: tool\ntags: [x, y", 4),
    ('title: "open\nkind: x', 2),
])
def test_a_yaml_error_names_the_line_of_the_file_it_is_on(fenced, line):
    for newline in ("\n", "\r\n"):
        text = newline.join(["---", *fenced.split("\n"), "---", "the body"]) + newline
        assert notes.split_frontmatter(text)[2] == f"frontmatter is not valid YAML (line {line})"
