"""Files at the edges of shape: text in a wide encoding, line ends of every kind, fields of any
length. Through the installed command, on a real vault."""

import codecs
import unicodedata

import pytest


def test_utf16_notes_are_found_by_their_words_and_reported(vault, run_cli):
    text = "---\ntitle: Notepad 笔记\n---\nthe backup runs nightly from cron\n"
    (vault / "le.md").write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    (vault / "bare.md").write_bytes(text.replace("Notepad", "Bare").encode("utf-16-le"))
    assert run_cli("index", "--json")[0] == 0
    code, found, _ = run_cli("search", "--json", "backup nightly")
    assert code == 0 and sorted(h["title"] for h in found["hits"]) == ["Bare 笔记", "Notepad 笔记"]
    assert all("\x00" not in h["snippet"] for h in found["hits"])
    problems = {p["path"]: p["message"] for p in run_cli("stats", "--json")[1]["problems"]}
    assert set(problems) == {"le.md", "bare.md"}
    assert all("UTF-16" in m and "save it as UTF-8" in m for m in problems.values())


def test_a_note_with_bytes_that_are_not_utf8_is_reported_with_what_to_do(vault, run_cli):
    (vault / "latin.md").write_bytes(b"Caf\xe9 cr\xe8me: the espresso machine is descaled weekly\n")
    assert run_cli("index", "--json")[0] == 0
    [problem] = run_cli("stats", "--json")[1]["problems"]
    assert problem["message"] == "not valid UTF-8 at byte 3 (indexed as \ufffd); save it as UTF-8"


def test_a_note_with_lone_carriage_returns_is_read_and_edited_line_by_line(vault, run_cli):
    path = vault / "mac.md"
    path.write_bytes(b"---\rtitle: Classic Mac note\rtags: [retro]\r---\r# Setup\rthe printer queue "
                     b"needs a restart after each upgrade\r")
    assert run_cli("index", "--json")[0] == 0
    code, found, _ = run_cli("search", "--json", "--tag", "retro", "printer")
    assert code == 0 and [h["title"] for h in found["hits"]] == ["Classic Mac note"]
    code, result, _ = run_cli("update", found["hits"][0]["id"], "--title", "Classic Mac printer", "--json")
    assert code == 0 and result["changed"] == ["title"]
    data = path.read_bytes()
    assert data.startswith(b"---\rtitle: Classic Mac printer\rtags: [retro]\rupdated: ")
    assert b"\n" not in data and data.count(b"---") == 2


def test_a_title_or_summary_of_any_length_is_shown_cut_in_hits_and_whole_by_show(vault, run_cli):
    title, summary = "T" * 100_000, "the summary goes on " * 2_500
    (vault / "long.md").write_text(f"---\ntitle: {title}\nsummary: {summary}\n---\nquokka body\n")
    (vault / "cjk.md").write_text(f"---\ntitle: {'长' * 100_000}\n---\nquokka 正文\n")
    assert run_cli("index", "--json")[0] == 0
    code, found, _ = run_cli("search", "--json", "quokka")
    assert code == 0 and len(found["hits"]) == 2
    for hit in found["hits"]:
        assert len(hit["title"]) == 201 and hit["title"].endswith("…")
        assert len(hit["snippet"]) <= 301
    assert len(run_cli("search", "quokka")[1]) < 2_000  # the terminal's page too
    shown = run_cli("show", next(h["id"] for h in found["hits"] if h["path"] == "long.md"), "--json")[1]
    assert shown["title"] == title


@pytest.mark.parametrize("word", ["한국어", "café"])
def test_a_title_typed_composed_or_decomposed_is_cut_at_the_same_character(vault, run_cli, word):
    """The cut counted code points: a title whose Hangul came as jamo (a macOS file name) was
    cut after a third of its syllables, inside one (`한` shown as `하`), and an accent, a skin
    tone or half a flag could be left behind."""
    title = " ".join([word] * 120)
    (vault / "nfc.md").write_text(f"---\ntitle: {unicodedata.normalize('NFC', title)}\n---\nquokka one\n")
    (vault / "nfd.md").write_text(f"---\ntitle: {unicodedata.normalize('NFD', title)}\n---\nquokka two\n")
    assert run_cli("index", "--json")[0] == 0
    hits = {h["path"]: h["title"] for h in run_cli("search", "--json", "quokka")[1]["hits"]}
    assert hits["nfc.md"] == hits["nfd.md"], hits
    shown = hits["nfc.md"].removesuffix("…").split(" ")
    assert len(" ".join(shown)) <= 200 and set(shown[:-1]) == {unicodedata.normalize("NFC", word)}
    assert unicodedata.normalize("NFC", word).startswith(shown[-1]), shown[-1]


def test_a_title_is_measured_as_it_reads_by_the_write_commands(vault, run_cli):
    title = unicodedata.normalize("NFD", "한국어 " * 45).strip()  # 179 characters, 491 code points
    code, out, _ = run_cli("capture", "--title", title, "--body", "a body long enough to be kept", "--json")
    assert code == 0 and out["status"] == "created", out
    code, out, _ = run_cli("capture", "--title", "가" * 201, "--body", "a body long enough to be kept", "--json")
    assert code == 2 and "201 characters" in out["error"]["message"]

def test_tags_nested_in_lists_are_found_as_tags(vault, run_cli):
    (vault / "nested.md").write_text("---\ntags:\n  - [ops, nginx]\n  - {team: infra}\n---\nquokka\n")
    assert run_cli("index", "--json")[0] == 0
    code, found, _ = run_cli("search", "--json", "--tag", "nginx", "quokka")
    assert code == 0 and [h["path"] for h in found["hits"]] == ["nested.md"]
    assert "key: value" in run_cli("stats", "--json")[1]["problems"][0]["message"]


def test_a_note_whose_yaml_aliases_explode_is_indexed_without_its_frontmatter(vault, run_cli):
    from .test_yamldata import laughs

    (vault / "lol.md").write_text(f"---\ntitle: laughs\n{laughs(7)}---\nquokka in the body\n")
    code, report, _ = run_cli("index", "--json", timeout=30)
    assert code == 0 and "aliases" in report["problems"][0]["message"]
    hit = run_cli("search", "--json", "quokka")[1]["hits"][0]
    card = run_cli("show", hit["id"], "--json")[1]
    assert card["tags"] == [] and card["title"] == "lol"
