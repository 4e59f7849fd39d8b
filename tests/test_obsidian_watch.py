"""Obsidian's Excluded files followed live: editing `.obsidian/app.json` while `memsync watch`
runs takes newly excluded notes out of search and brings un-excluded ones back."""

from __future__ import annotations

import json
import os

from .watching import card_id, converge, mark, put


def _exclude(vault, filters: list[str], atomic: bool = False) -> None:
    app = vault / ".obsidian" / "app.json"
    app.parent.mkdir(exist_ok=True)
    data = json.dumps({"alwaysUpdateLinks": True, "userIgnoreFilters": filters}, indent=2)
    if atomic:  # some sync tools and editors replace the file instead of writing into it
        temp = app.with_name("app.json.tmp")
        temp.write_text(data)
        os.replace(temp, app)
    else:
        app.write_text(data)


def test_editing_excluded_files_while_watching_reconciles(vault, watcher):
    kept, template, drawing = mark(), mark(), mark()
    put(vault, "kept.md", kept)
    put(vault, "Templates/daily.md", template)
    put(vault, "art/sketch.excalidraw.md", drawing)
    proc = watcher()
    everything = {"kept.md": kept, "Templates/daily.md": template,
                  "art/sketch.excalidraw.md": drawing}
    converge(everything)
    template_id = card_id("Templates/daily.md")

    _exclude(vault, ["Templates/", "/\\.excalidraw\\.md$/"])
    converge({"kept.md": kept}, gone={template, drawing})
    assert "Obsidian's excluded files changed" in proc.stderr()

    put(vault, "Templates/weekly.md", later := mark())  # an edit under an excluded folder
    _exclude(vault, ["/\\.excalidraw\\.md$/"], atomic=True)
    converge({"kept.md": kept, "Templates/daily.md": template, "Templates/weekly.md": later},
             gone={drawing})
    assert card_id("Templates/daily.md") == template_id  # back under the id it had

    (vault / ".obsidian" / "app.json").unlink()
    converge({**everything, "Templates/weekly.md": later})
    assert proc.stop() == 0 and "Traceback" not in proc.stderr()


def test_a_half_written_app_json_keeps_the_filters_read_last(vault):
    from memsync.exclusions import Exclusions

    _exclude(vault, ["Templates/"])
    seen = Exclusions(str(vault))
    assert seen.excludes("Templates/a.md") and not seen.excludes("a.md")
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["Temp')  # mid-save
    seen.refresh()
    assert seen.excludes("Templates/a.md")
    _exclude(vault, ["Archive/"])
    seen.refresh()
    assert not seen.excludes("Templates/a.md") and seen.excludes("Archive/b.md")
    (vault / ".obsidian" / "app.json").unlink()
    seen.refresh()
    assert not seen.excludes("Archive/b.md")
