"""The retrieval bench's own parts on a tiny Obsidian-style set written here: the set loader, the
plain FTS5 floor variants, and scoring memsync's real index of the vault's real files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench import evalsets, floor, ja_notes, obsidian, retrieval

from .test_boundaries import cycles, imports

BENCH = Path(__file__).resolve().parents[1] / "bench"

NOTES = {
    "Home.md": "Welcome to the garden. Start with [[Plugins/Daily notes]].\n",
    "Plugins/Daily notes.md": (
        "---\naliases:\n  - journal page\ncssclasses: wide\n---\n"
        "Open today's note from the ribbon.\n\n## Date format\nUse YYYY-MM-DD.\n"),
    "Plugins/Canvas.md": "---\npermalink: canvas\n---\n# Canvas\n\n## Cards and groups\nDrag notes onto the board.\n",
    "設定/外觀設定.md": "## 主題與字型\n選擇深色或淺色主題。\n",
}
QUERIES = [
    ("q1", "Date format", "heading", "Plugins/Daily notes.md"),
    ("q2", "journal page", "alias", "Plugins/Daily notes.md"),
    ("q3", "Cards and groups", "heading", "Plugins/Canvas.md"),
    ("q4", "主題與字型", "heading", "設定/外觀設定.md"),
]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSYNC_BENCH_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def built(tmp_path):
    """A folder laid out like build.py's output: LANG/vault, queries.jsonl, qrels.json."""
    root = tmp_path / "sets"
    folder = root / "de"
    for rel, text in NOTES.items():
        path = folder / "vault" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "vault" / ".obsidian").mkdir()
    (folder / "vault" / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    lines = [json.dumps({"id": i, "text": t, "meta": {"kind": k}}, ensure_ascii=False) for i, t, k, _ in QUERIES]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    qrels = {i: {rel: 1} for i, _, _, rel in QUERIES}
    (folder / "qrels.json").write_text(json.dumps(qrels, ensure_ascii=False), encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"commit": "abc1234def"}), encoding="utf-8")
    return root


def test_loader_reads_queries_judgements_and_the_notes_as_a_plain_indexer_sees_them(built):
    s = obsidian.sets(built, ["de"])["obsidian-de"]
    assert [q for q, _ in s.queries] == [t for _, t, _, _ in QUERIES]
    assert s.queries[3][1] == {"設定/外觀設定.md": 1} and s.kinds == ["heading", "alias", "heading", "heading"]
    docs = {rel: (title, body) for rel, title, body in s.floor_docs()}
    assert sorted(docs) == sorted(NOTES)  # subfolders kept, .obsidian/ left out
    title, body = docs["Plugins/Daily notes.md"]
    assert title == "Daily notes" and body.startswith("Open today") and "aliases" not in body


def test_only_development_languages_are_read(built):
    assert isinstance(obsidian.sets(built, ["fr"])["obsidian-fr"], str)  # not built: a reason, no crash
    with pytest.raises(SystemExit, match="not a development vault"):
        obsidian.sets(built, ["en"])


def test_every_floor_variant_finds_a_heading_and_andor_only_falls_back_when_and_is_empty(built):
    docs = obsidian.sets(built, ["de"])["obsidian-de"].floor_docs()
    tables = floor.all_variants(docs)
    assert len(floor.VARIANTS) == 8
    for variant in floor.VARIANTS:
        tokenizer, mode = variant.split()
        assert tables[tokenizer].ranked("Cards and groups", 3, mode)[0] == "Plugins/Canvas.md", variant
    u61 = tables["unicode61"]
    assert u61.ranked("主題與字型", 3, "andor") == ["設定/外觀設定.md"]  # a whole CJK run is one token
    assert tables["bigram"].ranked("字型", 3, "or") == ["設定/外觀設定.md"]  # bigrams find a word inside it
    assert u61.ranked("ribbon board", 5, "andor") == u61.ranked("ribbon board", 5, "or")
    assert set(u61.ranked("ribbon board", 5, "or")) == {"Plugins/Daily notes.md", "Plugins/Canvas.md"}
    assert u61.ranked("ribbon today", 5, "andor") == ["Plugins/Daily notes.md"]


def test_score_all_indexes_the_real_files_and_names_the_best_floor(built):
    results = retrieval.score_all(sets="obsidian-de", obsidian_sets=str(built), losses=True, log=False,
                                  systems={"memsync": retrieval.shipped, "twin": retrieval.shipped})
    r = results["sets"]["obsidian-de"]
    assert r["systems"]["twin"] == r["systems"]["memsync"]
    a = r["against_floor"]
    assert a["better"] + a["worse"] + a["same"] == 4 and len(a["lost"]) == a["worse"]
    assert (r["docs"], r["indexed"], r["queries"]) == (4, 4, 4)
    assert r["systems"]["memsync"]["ndcg@10"] > 0.5  # memsync reads the alias from the frontmatter
    assert r["best_floor"] in floor.VARIANTS and set(r["floor"]) == set(floor.VARIANTS)
    assert r["by_kind"]["memsync"]["alias"]["queries"] == 1 and r["floor_by_kind"]["heading"]["queries"] == 3
    assert "by kind (memsync / best floor for the kind): alias 1.0000 / " in retrieval.summary(results)
    assert set(results["skipped"]) == set()


def test_a_system_is_named_by_module_and_function():
    assert retrieval._factory("twin=bench.retrieval:shipped") == ("twin", retrieval.shipped)
    with pytest.raises(SystemExit, match="NAME=module:function"):
        retrieval._factory("bench.retrieval:shipped")


def test_set_names_expand_and_unknown_ones_are_refused():
    assert evalsets.expand("cmrc,obsidian-ko") == ["cmrc-passage", "cmrc-sentence", "obsidian-ko"]
    assert len(evalsets.expand("all")) == 12 and "ja-notes" in evalsets.expand("all")
    assert evalsets.expand("locomo") == ["locomo-session", "locomo-turn"]


def test_a_scoped_set_ranks_each_query_among_its_scope_only(tmp_path):
    docs = [("conv-1/a.md", "", "the dog barked at night"), ("conv-2/b.md", "", "the dog slept all day")]
    s = evalsets.EvalSet("scoped", tmp_path, [("dog", {"conv-1/a.md": 1}), ("dog", {"conv-2/b.md": 1})],
                         docs, lambda p: p, scopes=["conv-1", "conv-2"], scope_of=lambda p: p.split("/")[0])
    runs = retrieval.floor_runs(s, "unicode61 or")
    assert [ranked for ranked, _ in runs] == [["conv-1/a.md"], ["conv-2/b.md"]]
    figures, _ = retrieval.floor_scores(s, fresh=True)
    assert figures["unicode61 or"]["ndcg@10"] == 1.0 and figures["unicode61 or"]["queries"] == 2
    with pytest.raises(SystemExit, match="unknown set"):
        evalsets.expand("obsidian-en")


def test_the_floor_is_measured_once_per_input_and_again_when_the_input_changes(built):
    s = obsidian.sets(built, ["de"])["obsidian-de"]
    docs = s.floor_docs()
    first, cached = floor.score_cached(docs, s.queries, 10)
    assert not cached
    again, cached = floor.score_cached(docs, s.queries, 10)
    assert cached and again == first
    assert not floor.score_cached(docs[:-1], s.queries, 10)[1]
    assert not floor.score_cached(docs, s.queries, 10, fresh=True)[1]


def test_the_bench_has_no_import_cycle():
    found = {("bench." + ".".join(p.relative_to(BENCH).with_suffix("").parts)).removesuffix(".__init__"): p
             for p in BENCH.rglob("*.py")}
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}
    assert "bench.perf_tables" in graph["bench.report"]  # the graph sees bench's own imports
    assert cycles(graph) == []


@pytest.mark.skipif(not obsidian.build_script().exists(), reason="shared/datasets/obsidian-help/build.py not here")
def test_sets_are_built_from_a_git_snapshot_once_per_commit(tmp_path, monkeypatch):
    repo = tmp_path / "help"
    for rel, text in NOTES.items():
        path = repo / "de" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (repo / "en").mkdir()
    (repo / "en" / "Kept back.md").write_text("## Not for us\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "snapshot"], check=True)
    monkeypatch.setenv("MEMSYNC_OBSIDIAN_CACHE", str(tmp_path / "cache"))
    root, why = obsidian.locate(None, str(repo / ".git"))
    assert why is None and sorted(p.name for p in root.iterdir()) == sorted(obsidian.DEV_LANGS)
    s = obsidian.sets(root, ["de"])["obsidian-de"]
    assert ("Date format", {"Plugins/Daily notes.md": 1}) in s.queries
    assert sorted(p.relative_to(s.vault).as_posix() for p in s.vault.rglob("*.md")) == sorted(NOTES)
    marker = root / "de" / "manifest.json"
    before = marker.stat().st_mtime_ns
    assert obsidian.build(repo / ".git", tmp_path / "cache", ["de"]) == root
    assert marker.stat().st_mtime_ns == before  # built once per snapshot commit
    with pytest.raises(SystemExit, match="not a development vault"):
        obsidian.build(repo / ".git", tmp_path / "cache", ["en"])


def test_the_japanese_set_loads_and_every_judgement_names_a_note_of_its_vault():
    s = evalsets.japanese()
    notes = {rel for rel, _, _ in s.floor_docs}
    assert len(notes) == 72 and 150 <= len(s.queries) <= 250
    assert set(s.kinds) == {"title", "heading", "alias", "keyword", "question"}
    for (text, relevant), kind in zip(s.queries, s.kinds):
        assert relevant and set(relevant) <= notes, (kind, text)
        assert kind == "keyword" or len(relevant) == 1, (kind, text)
    assert all(s.doc_id(rel) == rel for rel in notes)


def test_the_japanese_queries_are_the_ones_the_vault_gives():
    """queries.jsonl and qrels.json are what `python -m bench.ja_notes` derives now: a note edited
    without regenerating them would leave judgements that no longer hold."""
    queries_text, qrels_text = ja_notes.render(ja_notes.build())
    assert (ja_notes.ROOT / "queries.jsonl").read_text(encoding="utf-8") == queries_text
    assert (ja_notes.ROOT / "qrels.json").read_text(encoding="utf-8") == qrels_text
    keyword = next(q for q in ja_notes.build() if q[0] == "keyword" and q[1] == "ワクチン")
    assert set(keyword[2]) == {"生活/猫の予防接種.md", "生活/防災グッズ.md"}  # every note holding it
