"""config.json as a file: read with each value checked, and edited in place.

The file is edited by hand: every value is checked here, so a wrong type is one clear message
naming the file and the key, never a traceback from deep inside some command. memsync.config
turns the checked values into the Config a command runs with.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import memsync.adapters as adapters
from memsync import private

from . import lifecycle_config
from .errors import BadEnvironment
from .lifecycle_config import shown
from .model import Source

# Every key memsync reads (docs/commands.md#configjson lists them for people). Any other is a
# typo ("vualt") or a newer memsync's: it is ignored, which is why it is named (ignored(): by
# `memsync doctor`, paths and stats, and on stderr by every other command) rather than refused:
# a command that reads none of it has no reason to stop.
KEYS = ("vault", "db", "sources", "semantic", "threads", *lifecycle_config.Settings._fields)
OWN_KEYS = ("declined",)  # written and read by `memsync init` for itself

SOURCE_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
SOURCE_NAME_RULE = "1-40 ASCII letters (a-z, A-Z), digits, '-' or '_'"


def absolute_path(path: Path) -> Path:
    """`path` made absolute, with no ".." left in it (`paths`, the watcher, every message and
    config.json show the folder itself, not home/../notes). A ".." is resolved as the kernel does,
    through any symlink before it; a path without one keeps its symlinks as written."""
    path = path.expanduser().absolute()
    return Path(os.path.realpath(path)) if ".." in path.parts else path


def _from_config_file(value: str, home: Path) -> Path:
    """A path written in config.json: `~` expanded, relative to the data home (the folder that
    holds config.json), never to the working directory of whichever process reads it."""
    return absolute_path(home / Path(value).expanduser())


def read(path: Path) -> dict:
    """The file's object as written ({} while there is no file)."""
    try:
        if not path.exists():
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except PermissionError:  # a home another user made, or one shut by a chmod
        raise BadEnvironment(f"cannot read {path} (permission denied): make the data home yours to "
                             f"read ({private.chmod_command([path.parent, path])}), or point --home / "
                             "MEMSYNC_HOME at a folder of your own") from None
    except (OSError, ValueError) as exc:
        raise BadEnvironment(f"{path} is not valid JSON ({exc}); fix or remove it") from None
    if not isinstance(data, dict):
        raise BadEnvironment(f"{path} must hold a JSON object with keys like db, vault, sources")
    return data


# --- the values, checked ---------------------------------------------------------------------

def path_value(data: dict, key: str, config_file: Path) -> Path | None:
    """A folder or file path under `key`, made absolute (None when the key is absent)."""
    where, value = str(config_file), data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadEnvironment(
            f"{where}: {key!r} must be a path (a non-empty string), not {shown(value)}; "
            "fix it or remove the key"
        )
    return _from_config_file(value, config_file.parent)


def sources(entries: object, config_file: Path) -> tuple[Source, ...]:
    """The read-only sources listed under "sources", in order."""
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise BadEnvironment(
            f"{config_file}: 'sources' must be a list of {{\"name\", \"adapter\", \"path\"}} "
            f"objects, not {shown(entries)}"
        )
    out: list[Source] = []
    for i, entry in enumerate(entries):
        where = f"{config_file}: sources[{i}]"
        if not isinstance(entry, dict):
            raise BadEnvironment(
                f"{where} must be an object with name, adapter and path, not {shown(entry)}"
            )
        missing = [key for key in ("name", "adapter", "path") if key not in entry]
        if missing:
            raise BadEnvironment(f"{where} lacks {', '.join(missing)}; a source needs name, "
                                 "adapter and path")
        name = entry["name"]
        if not isinstance(name, str) or not SOURCE_NAME.fullmatch(name):
            raise BadEnvironment(f"{where}: name must be {SOURCE_NAME_RULE}, not {shown(name)}")
        if name == "vault":
            raise BadEnvironment(f"{where}: the name 'vault' is reserved for the writable vault")
        if any(s.name == name for s in out):
            raise BadEnvironment(f"{where}: a second source named {name!r}; names must differ")
        if entry["adapter"] not in adapters.NAMES:
            raise BadEnvironment(f"{where}: adapter must be one of {', '.join(adapters.NAMES)}, "
                                 f"not {shown(entry['adapter'])}")
        path = entry["path"]
        if not isinstance(path, str) or not path.strip():
            raise BadEnvironment(
                f"{where}: path must be a folder path (a non-empty string), not {shown(path)}"
            )
        root = str(_from_config_file(path, config_file.parent))
        out.append(Source(name=name, adapter=entry["adapter"], root=root))
    return tuple(out)


def ignored(data: dict, config_file: Path) -> list[tuple[str, str]]:
    """What in config.json memsync ignores, as (what, what to do): a key it does not know, and
    a "declined" it cannot read (only init reads it, and would then ask everything again)."""
    found = []
    for key in data:
        if key not in KEYS and key not in OWN_KEYS:
            import difflib  # only here: `memsync search` does not load it

            like = difflib.get_close_matches(key, KEYS, n=1)
            found.append((f"{config_file}: {key!r} is not a setting memsync knows, so it is ignored",
                          f"rename it to {like[0]!r}" if like else
                          f"remove it (the settings are {', '.join(KEYS)})"))
    said_no = data.get("declined")
    if said_no is not None and not (isinstance(said_no, list) and all(isinstance(e, dict) for e in said_no)):
        found.append((f"{config_file}: 'declined' (the offers of `memsync init` you said no to) "
                      f"must be a list of objects, not {shown(said_no)}, so it is ignored",
                      "remove the key (init then offers those again)"))
    return found


def lifecycle(data: dict, config_file: Path) -> lifecycle_config.Settings:
    try:
        return lifecycle_config.read(data, str(config_file))
    except ValueError as exc:
        raise BadEnvironment(f"{exc}; fix it or remove the key") from None


def flag(data: dict, key: str, config_file: Path) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise BadEnvironment(f"{config_file}: {key!r} must be true or false, not {shown(value)}")
    return value


def count(data: dict, key: str, config_file: Path) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadEnvironment(f"{config_file}: {key!r} must be a whole number of at least 1, "
                             f"not {shown(value)}")
    return value


# --- edits -----------------------------------------------------------------------------------
# Each edits the entries as written: the others keep their order, their paths as the user wrote
# them (relative or with ~) and any key memsync does not know.

def append_source_entry(config_file: Path, source: Source) -> None:
    """Add a read-only source at the end of config.json's list."""
    data = read(config_file)
    entry = {"name": source.name, "adapter": source.adapter, "path": source.root}
    data["sources"] = [*(data.get("sources") or []), entry]
    _write(config_file, data)


def remove_source_entry(config_file: Path, name: str) -> None:
    """Take the source named `name` out of config.json's list."""
    data = read(config_file)
    data["sources"] = [e for e in data.get("sources") or [] if e.get("name") != name]
    _write(config_file, data)


def _write(config_file: Path, data: dict) -> None:
    """Write config.json atomically."""
    private.mkdir(config_file.parent)  # the data home
    temp = config_file.with_name(f".config.json.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        private.restrict(temp)
        os.replace(temp, config_file)
    finally:
        temp.unlink(missing_ok=True)


def configured_vault_text(config_file: Path) -> str | None:
    """config.json's "vault" exactly as written (None when absent)."""
    value = read(config_file).get("vault")
    return value if isinstance(value, str) else None


def write_vault(config_file: Path, vault: Path) -> None:
    """Make `vault` (absolute) the configured vault in config.json; every other key is kept."""
    data = read(config_file)
    data["vault"] = str(vault)
    _write(config_file, data)


def declined(config_file: Path) -> list[dict]:
    """What the user said no to in `memsync init`: agent memory sources ({"adapter", "path"})
    and session hooks ({"hook", "settings"}), so a second run does not ask again."""
    entries = read(config_file).get("declined")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def remember_answer(config_file: Path, key: dict, yes: bool) -> None:
    """Record a no to one of init's offers; a yes forgets an earlier no."""
    entries = declined(config_file)
    if yes and key in entries:
        entries.remove(key)
    elif not yes and key not in entries:
        entries.append(key)
    else:
        return
    data = read(config_file)
    data["declined"] = entries
    _write(config_file, data)
