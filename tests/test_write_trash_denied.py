"""A trash folder memsync may not read or change (run without root's rights): restore, purge
and stats say which folder and the chmod that fixes it, and nothing in it is lost."""

from __future__ import annotations

import os

from . import trashing
from .trashing import BODY

card = trashing.card  # a fixture


def test_a_trash_folder_memsync_may_not_read_or_change_is_said_and_kept(cli, vault, card):
    """Run without root's rights: a restore or purge of a copy in a folder memsync may not look
    into says why and what to do, not "nothing at"; emptying the trash deletes what it can and
    names the folders it left as they were; nothing in them is lost."""
    from .test_denied_folders import memsync  # the installed memsync, without root's reads

    _, other = cli("capture", "--title", "prod db", "--body", BODY.replace("stage", "prod"), "--kind", "tool",
                   "--json")
    cli("delete", card["id"])
    cli("delete", other["id"])
    hidden, rel = vault / ".trash" / os.path.dirname(card["path"]), ".trash/" + card["path"]
    before = (vault / rel).read_bytes()
    hidden.chmod(0o000)
    try:
        for verb in ("--restore", "--purge"):
            code, out = memsync("delete", verb, rel, "--json")
            assert code == 2 and isinstance(out, dict), out
            assert out["error"]["code"] == "bad_environment"
            assert f"{rel} cannot be looked at" in out["error"]["message"]
            assert f"chmod u+rx {hidden}" in out["error"]["message"]
        code, out = memsync("delete", "--purge", "--all", "--yes", "--json")
        assert code == 0 and isinstance(out, dict), out
        assert out["purged"] == 1 and out["kept"] == [os.path.dirname(rel)]
        assert "may not be read or changed" in out["warnings"][0] and "chmod u+rwx" in out["warnings"][0]
        assert not (vault / ".trash" / other["path"]).exists()
    finally:
        hidden.chmod(0o755)
    assert (vault / rel).read_bytes() == before
    code, data = cli("delete", "--restore", rel, "--json")
    assert code == 0 and data["id"] == card["id"]


def test_a_trash_folder_memsync_may_not_change_keeps_its_copies_and_says_why(cli, vault, card):
    from .test_denied_folders import memsync  # the installed memsync, without root's rights

    cli("delete", card["id"])
    rel = ".trash/" + card["path"]
    locked = vault / os.path.dirname(rel)
    locked.chmod(0o555)
    try:
        code, out = memsync("delete", "--purge", rel, "--json")
        assert code == 2 and isinstance(out, dict), out
        assert f"{rel} cannot be deleted" in out["error"]["message"] and f"chmod u+w {locked}" in out["error"]["message"]
        code, out = memsync("delete", "--purge", "--all", "--yes", "--json")
        assert code == 0 and isinstance(out, dict), out
        assert out["purged"] == 0 and out["kept"] == [os.path.dirname(rel)]
    finally:
        locked.chmod(0o755)
    assert (vault / rel).is_file()


def test_stats_says_which_trash_folders_it_could_not_count(cli, vault, card):
    from .test_denied_folders import memsync  # the installed memsync, without root's reads

    cli("delete", card["id"])
    folder = ".trash/" + os.path.dirname(card["path"])
    assert cli("stats", "--json")[1]["trash"] == {"files": 1, "bytes": (vault / ".trash" / card["path"]).stat().st_size}
    (vault / folder).chmod(0o000)
    try:
        code, data = memsync("stats", "--json")
        assert code == 0 and isinstance(data, dict), data
        assert data["trash"] == {"files": 0, "bytes": 0, "unreadable_folders": [folder]}
        code, text = memsync("stats")
        assert f"trash: 0 files, 0 MiB; not counted: {folder}, which may not be read" in str(text)
    finally:
        (vault / folder).chmod(0o755)
