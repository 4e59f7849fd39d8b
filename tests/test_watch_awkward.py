"""`memsync watch` and awkward files: broken YAML, text and names that are not UTF-8, empty
files and files too large to index are reported or indexed, and never stop the watcher."""

from __future__ import annotations

import os
import time

import pytest

from memsync import api

from .watching import (
    DEADLINE,
    cfg,
    converge,
    mark,
    put,
    text,
)

# --- awkward files ------------------------------------------------------------------------------


def test_malformed_yaml_is_indexed_by_its_body_and_reported(vault, live_watcher, run_cli):
    m = mark()
    (vault / "broken.md").write_text(f"---\ntitle: [unclosed\n---\nstill findable {m}\n")
    converge({"broken.md": m})
    rc, stats, _ = run_cli("stats", "--json")
    assert rc == 0
    assert any(p["path"] == "broken.md" for p in stats["problems"])
    live_watcher.wait_for("broken.md: frontmatter")  # a warning on stderr


def test_non_utf8_content_and_names_do_not_stop_the_watcher(vault, live_watcher):
    m, after = mark(), mark()
    (vault / "latin1.md").write_bytes(f"caf\xe9 {m}\n".encode("latin-1"))
    os.mkdir(os.path.join(os.fsencode(vault), b"bad\xffdir"))
    for name in (b"bad\xffname.md", b"bad\xffdir/inner.md"):
        with open(os.path.join(os.fsencode(vault), name), "wb") as handle:
            handle.write(b"a card whose name is not UTF-8\n")
    os.rename(os.path.join(os.fsencode(vault), b"bad\xffdir"),
              os.path.join(os.fsencode(vault), b"bad\xfedir"))
    put(vault, "after.md", after)
    converge({"latin1.md": m, "after.md": after})
    with api.open_index(cfg()) as index:
        messages = {p["message"] for p in index.problems()}
    assert any("not valid UTF-8" in msg for msg in messages)


def _problem_paths() -> set[str]:
    with api.open_index(cfg()) as index:
        return {p["path"] for p in index.problems()}


def _until(check, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"still {_problem_paths()}")
        time.sleep(0.05)


def test_a_bad_name_renamed_or_deleted_takes_its_problem_along(vault, live_watcher):
    raw = os.fsencode(vault)
    marks = {name: mark() for name in (b"r\xe9sum\xe9.md", b"gone\xff.md", b"bad\xffdir/inner.md")}
    for name, m in marks.items():
        os.makedirs(os.path.dirname(os.path.join(raw, name)), exist_ok=True)
        with open(os.path.join(raw, name), "wb") as handle:
            handle.write(text(m).encode())
    _until(lambda: len(_problem_paths()) == 3)
    os.rename(os.path.join(raw, b"r\xe9sum\xe9.md"), vault / "résumé.md")
    os.unlink(os.path.join(raw, b"gone\xff.md"))
    os.rename(os.path.join(raw, b"bad\xffdir"), vault / "gooddir")  # its parent is reconciled
    _until(lambda: not _problem_paths())
    converge({"résumé.md": marks[b"r\xe9sum\xe9.md"], "gooddir/inner.md": marks[b"bad\xffdir/inner.md"]},
             gone={marks[b"gone\xff.md"]})


def test_empty_file_is_a_card(vault, live_watcher):
    m = mark()
    (vault / f"{m}.md").write_bytes(b"")
    converge({f"{m}.md": m})  # its title is its file name


def test_large_files_are_indexed_only_when_complete(vault, live_watcher):
    """A card written in 1 MiB chunks is indexed whole once it is stable; one over the size
    limit (20 MB) is reported and not indexed, and never leaves a half-written card behind."""
    line = ("lorem ipsum dolor sit amet " * 40 + "\n").encode()
    chunk = line * ((1 << 20) // len(line))  # ~1 MiB
    big, huge = mark(), mark()
    with open(vault / "big.md", "wb") as handle:
        handle.write(b"# big\n")
        for _ in range(2):
            handle.write(chunk)
            handle.flush()
        handle.write(f"the end {big}\n".encode())
    with open(vault / "huge.md", "wb") as handle:
        handle.write(f"# huge {huge}\n".encode())
        while handle.tell() < 20 * 1024 * 1024:
            handle.write(chunk)
            handle.flush()
    after = mark()
    put(vault, "after.md", after)
    converge({"big.md": big, "after.md": after}, gone={huge})
    with api.open_index(cfg()) as index:
        assert any(p["path"] == "huge.md" and "limit" in p["message"] for p in index.problems())
