"""Temp files of memsync writers killed mid-write: `memsync doctor` names them, `--fix` removes
them, and only those whose process is gone (a running writer's file is in use)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memsync import config
from memsync.watch.lock import index_lock_file

from .conftest import write_card

STAGE = """import sys, time
from pathlib import Path
from memsync.write import atomic
atomic._no_tmpfile()  # as on a file system without unnamed temp files (O_TMPFILE)
print(atomic.Staged(Path(sys.argv[1]), b"half a card").path, flush=True)
time.sleep(120)
"""


def made_by(script: str, at: Path) -> tuple[subprocess.Popen, Path]:
    """A real process running `script`, once it has made the file whose path it prints."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(at)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    temp = Path(proc.stdout.readline().strip())
    proc.stdout.close()
    return proc, temp


def staging(folder: Path) -> tuple[subprocess.Popen, Path]:
    """A real process that has staged a card in `folder` and not yet named it."""
    return made_by(STAGE, folder)


def stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


def found_then_removed(cli, temps: list[Path]) -> None:
    """`doctor` names these temp files, and no other finding; `doctor --fix` removes them."""
    code, out = cli("doctor", "--json")
    assert code == 1, out
    [finding] = out["findings"]
    assert finding["check"] == "leftover" and finding["fixable"]
    assert sorted(finding["paths"]) == sorted(map(str, temps))
    code, out = cli("doctor", "--fix", "--json")
    assert code == 0 and out["fixed"] == [f"removed {len(temps)} temp files of killed memsync processes"]
    assert not any(temp.exists() for temp in temps)


def test_doctor_names_and_fix_removes_temp_files_of_killed_writers_only(vault, cli):
    write_card(vault, "03-Knowledge/a.md", "a card", "a card already in the index, and sound")
    assert cli("index")[0] == 0
    killed, killed_temp = staging(vault / "03-Knowledge")
    live, live_temp = staging(vault / "03-Knowledge")
    try:
        stop(killed)
        # a config.json write killed between its temp file and the rename
        config_temp = config.load().home.path / f".config.json.{killed.pid}.tmp"
        config_temp.write_text("{")
        config_temp.chmod(0o600)  # as memsync makes it
        assert killed_temp.exists() and live_temp.exists()
        found_then_removed(cli, [killed_temp, config_temp])
        assert live_temp.exists()
    finally:
        stop(live)
    code, out = cli("doctor", "--fix", "--json")  # its writer gone too: now it goes
    assert code == 0 and not live_temp.exists()
    assert [p.name for p in (vault / "03-Knowledge").iterdir()] == ["a.md"]


# A watcher killed as it took a lock: its record made aside, as WatchLock.acquire makes it, and
# never linked into place.
LOCKING = """import sys, time
from pathlib import Path
from memsync import lockfile
from memsync.watch.lock import aside_of
aside = aside_of(Path(sys.argv[1]))
lockfile.opened(aside, new=True)
print(aside, flush=True)
time.sleep(120)
"""


def locking(lock: Path) -> tuple[subprocess.Popen, Path]:
    """A real watcher process that has made its record for `lock` and not yet put it in place."""
    return made_by(LOCKING, lock)


def test_a_watcher_killed_while_it_took_its_locks_leaves_records_doctor_removes(vault, cli):
    write_card(vault, "a.md", "a card", "a card already in the index, and sound")
    assert cli("index")[0] == 0
    cfg = config.load()
    home_lock, home_aside = locking(cfg.lock_file)
    index_lock, index_aside = locking(index_lock_file(cfg.db.path))
    live, live_aside = locking(cfg.lock_file)
    try:
        stop(home_lock)
        stop(index_lock)
        found_then_removed(cli, [home_aside, index_aside])
        assert live_aside.exists()
    finally:
        stop(live)


def test_a_new_index_a_killed_repair_was_building_is_named_and_removed(vault, cli):
    """salvage.recover builds the new index beside the damaged one under its pid's name, and
    renames it into place only when complete: a repair killed first leaves it behind."""
    write_card(vault, "03-Knowledge/a.md", "a card", "a card already in the index, and sound")
    assert cli("index")[0] == 0
    killed = subprocess.Popen([sys.executable, "-c", "pass"])
    killed.wait()
    db = config.load().db.path
    staged = db.with_name(f".{db.name}.{killed.pid}.salvaged")
    wal = staged.with_name(staged.name + "-wal")
    for part in (staged, wal):
        part.write_bytes(b"SQLite format 3\x00 half a new index")
        part.chmod(0o600)
    found_then_removed(cli, [staged, wal])
    assert db.exists()
