"""The vaults Obsidian knows on this machine, for `memsync init` to offer.

Obsidian keeps its list of vaults in `obsidian.json`, one object per vault id:
`{"vaults": {"<id>": {"path": "/home/me/Notes", "ts": 1700000000000, "open": true}}}` (`ts` is
when the vault was last opened, in milliseconds). Where that file lives depends on the system
and on how Obsidian was installed; every known place is looked at, so a test can lay out any of
them under a fake home. Parsing is pure; `installed` is the one function that reads files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ObsidianVault:
    path: Path
    ts: int  # last opened, ms since the epoch (0 when Obsidian did not say)
    open: bool  # open in an Obsidian window when Obsidian last wrote its list


def config_files(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Every place obsidian.json may be, most usual first."""
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    places = [
        xdg / "obsidian",  # Linux (AppImage, .deb)
        home / ".config" / "obsidian",
        home / ".var" / "app" / "md.obsidian.Obsidian" / "config" / "obsidian",  # flatpak
        home / "snap" / "obsidian" / "current" / ".config" / "obsidian",  # snap
        home / "Library" / "Application Support" / "obsidian",  # macOS
    ]
    if env.get("APPDATA"):
        places.append(Path(env["APPDATA"]) / "obsidian")  # Windows
    return list(dict.fromkeys(folder / "obsidian.json" for folder in places))


def parse(text: str) -> list[ObsidianVault]:
    """The vaults one obsidian.json lists, last opened first; [] for anything unreadable (the
    file is Obsidian's, not ours: a format we do not know is no vault, never an error)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    entries = data.get("vaults") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return []
    found = []
    for entry in entries.values():
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry["path"]:
            continue
        ts = entry.get("ts")
        found.append(ObsidianVault(Path(entry["path"]).expanduser(),
                                   ts if isinstance(ts, int) and not isinstance(ts, bool) else 0,
                                   entry.get("open") is True))
    return by_last_opened(found)


def by_last_opened(found: list[ObsidianVault]) -> list[ObsidianVault]:
    """Last opened first (an open one wins a tie); one entry per folder."""
    ordered = sorted(found, key=lambda v: (v.ts, v.open), reverse=True)
    seen: set[Path] = set()
    out = []
    for vault in ordered:
        if vault.path not in seen:
            seen.add(vault.path)
            out.append(vault)
    return out


def installed(home: Path, env: Mapping[str, str] | None = None) -> list[ObsidianVault]:
    """The vaults of every obsidian.json found that still exist as folders, last opened first."""
    found = []
    for config in config_files(home, os.environ if env is None else env):
        try:
            text = config.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found += [v for v in parse(text) if v.path.is_dir()]
    return by_last_opened(found)
