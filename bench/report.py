"""Render bench/RESULTS.md from the JSON results (never typed by hand).

    python -m bench.report
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import markers, readme_tables
from .machine import RESULTS
from .markdown import number, stamp, table
from .perf_tables import embedding_lines, render_tables
from .retrieval_tables import retrieval_md, semantic_md

OUT = Path(__file__).resolve().parent / "RESULTS.md"


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


# Sections of RESULTS.md that stay out of docs/benchmarks.md (it keeps one row per set).
DETAIL_HEADINGS = ("### Every floor variant", "### Detail", "### Tuning grid", "### Index bytes by table")


# --- performance ----------------------------------------------------------------------------


def perf_md(data: dict) -> list[str]:
    return ["## Performance", "", stamp(data), "", *render_tables(data)]


# --- index size (bench/index_size.py) -------------------------------------------------------

# Tables and indexes shown by name in the detail; the rest are summed as "other".
SIZE_PARTS = ("cards", "cards_fts_data", "card_terms", "links", "links_name", "exact_keys",
              "exact_keys_seq", "fields_fts_data")


def _vault_name(label: str) -> str:
    """`/x/obsidian/zh-TW/vault` -> `zh-TW`; `generated 10000` -> `generated 10,000`."""
    if label.startswith("generated "):
        return f"generated {int(label.split()[1]):,}"
    path = Path(label)
    return path.parent.name if path.name == "vault" else path.name


def index_size_md(data: dict) -> list[str]:
    vaults = data["vaults"]
    rows = [[_vault_name(label), f"{v['cards']:,}", f"{v['note_bytes']:,}", f"{v['index_bytes']:,}",
             f"{v['ratio']:.2f}×", "met" if v["ratio"] <= v["target_ratio"] else "NOT met"]
            for label, v in vaults.items()]
    lines = ["## Index size", "", stamp(data), "",
             "Bytes of a fresh index (memsync.db after a checkpoint) against the notes' bytes, each vault "
             "indexed from scratch (`python -m bench.index_size --sizes 10000 --vault DIR ...`); the "
             "Obsidian rows are the Obsidian Help development vaults. Target (issue 11): ≤ 3×.", "",
             *table(["vault", "cards", "notes, bytes", "index, bytes", "index ÷ notes", "≤ 3×"], rows)]
    with_tables = {label: v for label, v in vaults.items() if v.get("tables")}
    if with_tables:
        lines += ["", "### Index bytes by table", "",
                  "SQLite's dbstat, as multiples of the notes' bytes.", ""]
        header = ["vault", *SIZE_PARTS, "other"]
        body = []
        for label, v in with_tables.items():
            parts = [v["tables"].get(name, 0) for name in SIZE_PARTS]
            other = sum(v["tables"].values()) - sum(parts)
            body.append([_vault_name(label), *(f"{b / v['note_bytes']:.2f}" for b in (*parts, other))])
        lines += table(header, body)
    return lines


# --- MCP context budget (bench/mcp_budget.py) ---------------------------------------------


def mcp_budget_md(data: dict) -> list[str]:
    from .mcp_budget import BYTES_PER_TOKEN, table

    targets = ", ".join(f"{name} ≤ {t['limit']:,} bytes: {'met' if t['met'] else 'NOT met'}"
                        for name, t in data["targets"].items())
    return ["## MCP context budget", "", stamp(data), "",
            "Bytes an agent's context pays for `memsync mcp` on a 30-card vault (`python -m bench.mcp_budget`), "
            f"≈ tokens at {BYTES_PER_TOKEN} bytes each. A reply's size is the whole JSON-RPC message as the "
            "server wrote it on stdout. By default a reply is its compact text only; `memsync mcp "
            "--structured` adds structured content, and a client passes the model one of the two, not "
            "both (Claude Code the structured content; see docs/mcp.md), so \"model reads\" counts the "
            "larger. \"before\" is the same client on the tree before issue 12.", "", *table(data), "",
            f"Targets: {targets}."]


# --- memory hygiene (bench/hygiene.py) ----------------------------------------------------


def hygiene_md(data: dict) -> list[str]:
    if "date" not in data:  # the first results nested the run's stamp under "machine"
        data = {**data, **data["machine"]}
    vault, audit, shipped = data["vault"], data["audit"], data["shipped_threshold"]
    rows = [[f"**{r['threshold']:.2f} (shipped)**" if r["threshold"] == shipped else f"{r['threshold']:.2f}",
             number(r["precision"], 3), number(r["recall"], 3), r["false_groups_untouched"], r["groups"]]
            for r in data["sweep"] if 0.45 <= r["threshold"] <= 0.75]
    return ["## Memory hygiene (`memsync audit`)", "", stamp(data), "",
            f"`python -m bench.hygiene`: {vault['cards']:,} cards (every SciFact train abstract and "
            f"CMRC 2018 trial passage, mosaic cards of three sentences of three others), "
            f"{vault['planted_groups']} planted groups ({vault['chinese_groups']} Chinese) of a card and "
            "one or two copies reworded by rules (a sentence cut, two swapped, one added, words "
            "swapped). A predicted group is right only when it is exactly a planted group; false "
            "groups hold no planted card.", "",
            *table(["threshold", "group precision", "group recall", "false groups", "groups"], rows), "",
            f"`memsync audit --json` over the {vault['cards']:,} cards as a whole process: "
            f"{audit['cpu_s']} s CPU, {audit['wall_s']} s wall at load average {audit['load_average']} "
            f"on this machine, peak RSS {audit['peak_rss_mib']} MiB."]


def render() -> list[str]:
    """The lines of RESULTS.md, from whichever results exist."""
    parts = ["# memsync benchmarks", "",
             "Generated by `python -m bench.report` from `bench/results/*.json`; do not edit by hand. "
             "Regenerate with `make bench`.", ""]
    retrieval = _load("retrieval")
    perf = _load("perf")
    if retrieval:
        parts += retrieval_md(retrieval) + [""]
    if perf:
        parts += perf_md(perf) + [""]
    big = _load("perf-100k")
    if big and not (perf and "100000" in perf["sizes"]):  # `bench.perf --big` puts 100k in perf
        parts += ["### 100,000 cards (`python -m bench.perf --sizes '' --big`, a separate run)", "",
                  stamp(big), "", *render_tables(big, extras=False), ""]
    embedding = _load("embedding")
    if embedding:
        parts += ["### Embedding on every core (`python -m bench.perf --embedding-only`, a separate run)", "",
                  stamp(embedding), *embedding_lines(embedding["embedding"]), ""]
    size = _load("index_size")
    if size:
        parts += index_size_md(size) + [""]
    semantic = _load("semantic")
    if semantic:
        parts += semantic_md(semantic, _load("semantic_perf")) + [""]
    hygiene = _load("hygiene")
    if hygiene:
        parts += hygiene_md(hygiene) + [""]
    budget = _load("mcp_budget")
    if budget:
        parts += mcp_budget_md(budget) + [""]
    return parts


def write() -> Path:
    parts = render()
    OUT.write_text("\n".join(parts), encoding="utf-8")
    write_docs(parts)
    readme_tables.write(_load)
    return OUT


DOCS = OUT.parent.parent / "docs" / "benchmarks.md"
START, END = "<!-- bench-results:start -->", "<!-- bench-results:end -->"


def docs_tables(parts: list[str]) -> str:
    """What docs/benchmarks.md shows between its markers: RESULTS.md without its title and
    without the detail sections (one row per set there; the details stay in RESULTS.md)."""
    kept, skipping = [], False
    for line in parts[4:]:
        if line.startswith("#"):
            skipping = line.startswith(DETAIL_HEADINGS)
        if not skipping:
            kept.append(line)
    return "\n".join(kept).strip()


def write_docs(parts: list[str]) -> None:
    """Put the tables into docs/benchmarks.md, between its markers."""
    markers.replace(DOCS, START, END, docs_tables(parts))


if __name__ == "__main__":
    print(write(), file=sys.stderr)
