"""Temp files of memsync writers killed mid-write: `memsync doctor` names them, `--fix` removes
them, and only those whose process is gone (a running writer's file is in use)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memsync import config

from .conftest import write_card

STAGE = """import sys, time
from pathlib import Path
from memsync.write import atomic
atomic._no_tmpfile()  # as on a file system without unnamed temp files (O_TMPFILE)
print(atomic.Staged(Path(sys.argv[1]), b"half a card").path, flush=True)
time.sleep(120)
"""


def staging(folder: Path) -> tuple[subprocess.Popen, Path]:
    """A real process that has staged a card in `folder` and not yet named it."""
    proc = subprocess.Popen([sys.executable, "-c", STAGE, str(folder)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    temp = Path(proc.stdout.readline().strip())
    proc.stdout.close()
    return proc, temp


def stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


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
        code, out = cli("doctor", "--json")
        assert code == 1, out
        [finding] = out["findings"]
        assert finding["check"] == "leftover" and finding["fixable"]
        assert sorted(finding["paths"]) == sorted([str(killed_temp), str(config_temp)])
        code, out = cli("doctor", "--fix", "--json")
        assert code == 0 and out["fixed"] == ["removed 2 temp files of killed memsync processes"]
        assert not killed_temp.exists() and not config_temp.exists() and live_temp.exists()
    finally:
        stop(live)
    code, out = cli("doctor", "--fix", "--json")  # its writer gone too: now it goes
    assert code == 0 and not live_temp.exists()
    assert [p.name for p in (vault / "03-Knowledge").iterdir()] == ["a.md"]
