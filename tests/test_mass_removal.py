"""A vault that lost most of its files since the last index (an unmounted disk, a cloud folder
not synced yet) is not emptied: `index` and `watch` stop with a warning naming the count and the
flag that confirms it; ids and read counts stay."""

from __future__ import annotations

import shutil
import subprocess
from contextlib import closing

from memsync import config
from memsync.store.index import Index
from memsync.sync import mass_removal

from .conftest import MEMSYNC_BIN, write_card


def cards_of(vault, n: int) -> None:
    for i in range(n):
        write_card(vault, f"notes/n{i}.md", f"note {i}", f"note number {i} about the server rack-{i}")


def indexed_ids() -> dict[str, int]:
    with closing(Index(config.load().db.path)) as index:
        return {r["path"]: r["id"] for r in index.cards()}


def test_the_rule():
    assert mass_removal(2, 2) and mass_removal(6, 10) and mass_removal(50, 50)
    assert not mass_removal(1, 1) and not mass_removal(5, 10) and not mass_removal(4, 9)


def test_an_emptied_vault_is_not_emptied_in_the_index(vault, run_cli):
    cards_of(vault, 12)
    assert run_cli("index")[0] == 0
    ids = indexed_ids()
    assert run_cli("show", ids["notes/n3.md"])[0] == 0
    shutil.rmtree(vault / "notes")  # the disk went away
    code, out, err = run_cli("index")
    assert code == 2 and "Traceback" not in err
    assert "12 of the 12 files of vault indexed before are gone" in err
    assert "--allow-mass-removal" in err and "nothing was removed" in err
    assert indexed_ids() == ids
    code, found, _err = run_cli("search", "rack-3", "--json")
    assert code == 0 and found["hits"][0]["id"] == ids["notes/n3.md"]
    code, out, err = run_cli("index", "--rebuild")
    assert code == 2 and "--allow-mass-removal" in err and indexed_ids() == ids
    cards_of(vault, 12)  # it came back: nothing to confirm
    assert run_cli("index")[0] == 0 and indexed_ids() == ids
    with closing(Index(config.load().db.path)) as index:
        assert index.read_stats(ids["notes/n3.md"])[0] == 1


def indexed_then_lost(vault, run_cli, lost: int) -> None:
    """12 notes indexed, then `lost` of them gone from the disk."""
    cards_of(vault, 12)
    assert run_cli("index")[0] == 0
    for i in range(lost):
        (vault / f"notes/n{i}.md").unlink()


def test_more_than_half_gone_stops_and_the_flag_confirms(vault, run_cli):
    indexed_then_lost(vault, run_cli, 7)
    code, out, _err = run_cli("index", "--json")
    assert code == 2 and out["error"]["code"] == "mass_removal"
    assert "7 of the 12 files" in out["error"]["message"]
    code, out, _err = run_cli("index", "--allow-mass-removal", "--json")
    assert code == 0 and out["removed"] == 7
    assert len(indexed_ids()) == 5


def test_a_few_files_gone_are_removed_as_always(vault, run_cli):
    indexed_then_lost(vault, run_cli, 3)
    code, out, _err = run_cli("index", "--json")
    assert code == 0 and out["removed"] == 3


def test_watch_stops_before_emptying_the_index(vault, run_cli):
    cards_of(vault, 12)
    assert run_cli("index")[0] == 0
    ids = indexed_ids()
    shutil.rmtree(vault / "notes")
    proc = subprocess.run([MEMSYNC_BIN, "watch"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--allow-mass-removal" in proc.stderr
    assert "Traceback" not in proc.stderr and indexed_ids() == ids


def test_an_exclusion_over_most_of_the_vault_is_applied_not_refused(vault, run_cli):
    """Files still on disk but excluded in Obsidian's settings were removed on purpose: only
    files missing from the disk count toward the guard."""
    cards_of(vault, 12)
    write_card(vault, "keep.md", "keep", "the note that stays in search")
    assert run_cli("index")[0] == 0
    (vault / ".obsidian").mkdir(exist_ok=True)
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["notes/"]}')
    code, out, _err = run_cli("index", "--json")
    assert code == 0 and out["removed"] == 12
    assert list(indexed_ids()) == ["keep.md"]
    assert run_cli("index", "--rebuild")[0] == 0
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": []}')
    shutil.rmtree(vault / "notes")  # and the guard still holds for files that are gone
    cards_of(vault, 12)
    assert run_cli("index")[0] == 0
    shutil.rmtree(vault / "notes")
    code, out, _err = run_cli("index", "--json")
    assert code == 2 and "12 of the 13 files of vault indexed before are gone" in out["error"]["message"]
