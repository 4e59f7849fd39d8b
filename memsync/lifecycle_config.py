"""The lifecycle keys of config.json, checked. Pure: a dict in, a Settings out (or a message).

    "log_searches": true          keep the retrieval log (false: no search is written down)
    "log_cap": 5000               log entries kept, and as many feedback verdicts; the oldest go first
    "summary_threshold": 500      a body longer than this (characters) wants a summary
    "stale_days": 90              audit: a card not returned for this many days is listed
    "duplicate_threshold": 0.55   audit: shingle similarity from which two cards are duplicates
    "folder_rules": {"mistake": "08-Mistakes"}   kind -> folder its cards belong in (none built in)
    "use_prior": false            let helpful cards move past near-ties (memsync.lifecycle.prior);
                                  off: the retrieval bench has no use to show it helps
"""

import json
from typing import NamedTuple

# Chosen on bench/hygiene.py (bench/results/hygiene.json): at 10,000 cards with 300 planted groups,
# 0.55 gave group precision 0.97 and recall 0.96 (0.50: 0.92 / 0.98; 0.60: 0.96 / 0.90).
DUPLICATE_THRESHOLD = 0.55
LARGEST = 10**9  # log entries, characters: more than any vault or log holds
LONGEST_DAYS = 36_500  # a century: a day that many days back is still on the calendar


class Settings(NamedTuple):
    log_searches: bool = True
    log_cap: int = 5000
    summary_threshold: int = 500
    stale_days: int = 90
    duplicate_threshold: float = DUPLICATE_THRESHOLD
    folder_rules: tuple[tuple[str, str], ...] = ()  # (kind, folder), in config order
    use_prior: bool = False


DEFAULT = Settings()


def shown(value: object) -> str:
    """A config.json value as a message quotes it (as JSON, cut short): here, the leaf both
    checkers of config.json import (memsync.configjson imports this module)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def read(data: dict, where: str) -> Settings:
    """Settings from config.json's object; ValueError with the key and the fix when one is wrong."""
    def number(key: str, default, low, high, kind=int):
        # Bounded above as well: 1e400 reads as infinity and NaN as NaN (Python's json takes
        # both), and a log_cap past SQLite's integers or stale_days past the calendar ended every
        # search or audit in a traceback.
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high \
                or (kind is int and value != int(value)):
            what = "a whole number" if kind is int else "a number"
            raise ValueError(f"{where}: {key!r} must be {what} from {low:,} to {high:,}, not {shown(value)}")
        return kind(value)

    def flag(key: str, default: bool) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            raise ValueError(f"{where}: {key!r} must be true or false, not {shown(value)}")
        return value
    threshold = number("duplicate_threshold", DUPLICATE_THRESHOLD, 0.05, 1, float)
    rules = data.get("folder_rules") or {}
    if not isinstance(rules, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip("/ ") for k, v in rules.items()):
        raise ValueError(f"{where}: 'folder_rules' must map a kind to a folder, e.g. "
                         f"{{\"mistake\": \"08-Mistakes\"}}, not {shown(rules)}")
    for kind, folder in rules.items():
        parts = folder.strip("/ ").split("/")
        # a card moved into a dot-folder (.trash, .obsidian) would leave search, by `..` the vault
        if any(not part or part.startswith(".") for part in parts):
            raise ValueError(f"{where}: the folder_rules folder of {kind!r} ({folder!r}) must be a "
                             "folder inside the vault, not hidden (no part may start with a dot)")
    return Settings(
        log_searches=flag("log_searches", True),
        use_prior=flag("use_prior", False),
        log_cap=number("log_cap", 5000, 1, LARGEST),
        summary_threshold=number("summary_threshold", 500, 1, LARGEST),
        stale_days=number("stale_days", 90, 1, LONGEST_DAYS),
        duplicate_threshold=threshold,
        folder_rules=tuple((k, v.strip("/ ")) for k, v in rules.items()),
    )
