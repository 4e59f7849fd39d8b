"""Where things live: the data home, the index, the vault and the read-only sources.

Each path is resolved CLI option > environment variable > config.json > default, and we remember
which layer won so `memsync paths` can say it. A relative path in config.json is relative to the
folder that holds config.json, so a watcher, an MCP server started by a desktop app and the CLI
read the same folders whatever directory each was started in.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import memsync.adapters as adapters
from memsync import private
from memsync.store import vaults

from . import lifecycle_config
from .errors import BadEnvironment
from .model import IgnoredSource, Source
from .overlap import sort_out

ENV_HOME = "MEMSYNC_HOME"
ENV_DB = "MEMSYNC_DB"
ENV_VAULT = "MEMSYNC_VAULT"
SOURCE_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
SOURCE_NAME_RULE = "1-40 letters, digits, '-' or '_'"
RELOAD_WITHIN = 10.0  # seconds: a running watcher takes up a changed config.json by then


class Setting(NamedTuple):
    path: Path
    origin: str  # "cli" | "env" | "config" | "default"; for db also "vault" (its own index)


@dataclass(frozen=True)
class Config:
    home: Setting
    db: Setting
    vault: Setting
    listed_sources: tuple[Source, ...] = field(default=())  # as config.json lists them, in order
    semantic: bool = False  # config.json "semantic": hybrid search by default (memsync[semantic])
    configured_vault: Path | None = None  # config.json's "vault", whatever is in use now
    lifecycle: lifecycle_config.Settings = lifecycle_config.DEFAULT  # memsync.lifecycle
    # config.json "threads": cores a foreground rebuild or embedding may use (None: all usable)
    threads: int | None = None

    @property
    def config_file(self) -> Path:
        return self.home.path / "config.json"

    @property
    def lock_file(self) -> Path:
        return self.home.path / "watch.lock"

    @property
    def bench_queries(self) -> Path:
        return self.home.path / "bench_queries.json"

    @cached_property
    def _sorted_out(self) -> tuple[tuple[Source, ...], tuple[IgnoredSource, ...]]:
        # Worked out on first use, not at load: `memsync search` never needs it, and checking a
        # nested pair of sources loads their adapters (and with them the YAML parser).
        return sort_out(self.vault_source, self.listed_sources)

    @property
    def extra_sources(self) -> tuple[Source, ...]:
        """The read-only sources in use."""
        return self._sorted_out[0]

    @property
    def ignored_sources(self) -> tuple[IgnoredSource, ...]:
        """Listed in config.json but left out: they would read files of the vault or of an
        earlier source. Kept apart so `paths`/`stats` can say so and `sources --remove` works."""
        return self._sorted_out[1]

    @property
    def vault_source(self) -> Source:
        return Source(name="vault", adapter="markdown", root=str(self.vault.path), writable=True)

    @property
    def sources(self) -> tuple[Source, ...]:
        return (self.vault_source, *self.extra_sources)

    def source(self, name: str) -> Source:
        for source in self.sources:
            if source.name == name:
                return source
        for left_out in self.ignored_sources:
            if left_out.source.name == name:
                raise BadEnvironment(self.ignored_problem(left_out))
        known = ", ".join(s.name for s in self.sources)
        raise BadEnvironment(f"unknown source {name!r}; configured sources: {known}")

    def ensure_vault(self) -> Path:
        """A missing default vault is created on first use; a configured one must exist."""
        problem = self.vault_problem()
        if problem:
            raise BadEnvironment(problem)
        if self.vault.path.is_relative_to(self.home.path):  # the default vault: the home first,
            private.mkdir(self.home.path)  # or mkdir would make it with the umask's modes
        self.vault.path.mkdir(parents=True, exist_ok=True)
        self.settle_home()
        if self.db.origin in ("default", "vault"):  # memsync.store.vaults: whose index this is
            vaults.claim(self.db.path, self.vault.path)
        return self.vault.path

    def settle_home(self) -> None:
        """Once, for a home an older memsync left open, by the commands that write into it (never
        by a reader, nor by `memsync doctor`, which reports it); a vault or source kept below it
        is the user's own folder of cards and keeps its modes."""
        private.settle_home(self.home.path, skip=(self.vault.path, *(Path(s.root) for s in self.sources)))

    def vault_problem(self) -> str | None:
        path, origin = self.vault.path, self.vault.origin
        fix = "point --vault / MEMSYNC_VAULT (or \"vault\" in config.json) at a folder"
        if path.exists() and not path.is_dir():
            return f"vault {path} (from {origin}) is not a folder: a vault must be a directory; {fix}"
        if not path.exists() and origin != "default":
            return f"vault {path} (from {origin}) does not exist; create it or {fix}"
        return None

    def ignored_problem(self, left_out: IgnoredSource) -> str:
        name = left_out.source.name
        return (f"source {name} is ignored: {left_out.reason}; remove it with `memsync sources "
                f"--remove {name}` or give it another path in {self.config_file}")

    def folder_problems(self) -> list[str]:
        """What stands in the way of indexing: a vault or source folder that is not a folder, or
        a source left out because it would read files another source reads."""
        problems = [self.vault_problem()]
        for source in self.extra_sources:
            root = Path(source.root)
            if not root.is_dir():
                state = "is not a folder" if root.exists() else "does not exist"
                problems.append(f"source {source.name}: {root} {state}; it is not indexed")
        problems += [self.ignored_problem(left_out) for left_out in self.ignored_sources]
        return [p for p in problems if p]

    def semantic_problem(self) -> str | None:
        """config.json turns semantic search on where its model is not installed: every search
        then fails (saying how to install it) and nothing is embedded."""
        from .semantic import available

        if not self.semantic or available():
            return None
        return (f"{self.config_file} turns semantic search on (\"semantic\": true), but "
                "memsync[semantic] is not installed: searches use keywords only and nothing is "
                "embedded until it is")


def absolute_path(path: Path) -> Path:
    """`path` made absolute, with no ".." left in it (`paths`, the watcher, every message and
    config.json show the folder itself, not home/../notes). A ".." is resolved as the kernel does,
    through any symlink before it; a path without one keeps its symlinks as written."""
    path = path.expanduser().absolute()
    return Path(os.path.realpath(path)) if ".." in path.parts else path


def _pick(cli: str | None, env_name: str, file_value: Path | None, default: Path) -> Setting:
    if cli:
        return Setting(absolute_path(Path(cli)), "cli")
    env = os.environ.get(env_name)
    if env:
        return Setting(absolute_path(Path(env)), "env")
    if file_value:
        return Setting(file_value, "config")
    return Setting(default, "default")


def _from_config_file(value: str, home: Path) -> Path:
    """A path written in config.json: `~` expanded, relative to the data home (the folder that
    holds config.json), never to the working directory of whichever process reads it."""
    return absolute_path(home / Path(value).expanduser())


def _read_config_file(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadEnvironment(f"{path} is not valid JSON ({exc}); fix or remove it") from None
    if not isinstance(data, dict):
        raise BadEnvironment(f"{path} must hold a JSON object with keys like db, vault, sources")
    return data


# config.json is edited by hand: every value is checked here, so a wrong type is one clear
# message naming the file and the key, never a traceback from deep inside some command.


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def _path_value(data: dict, key: str, config_file: Path) -> Path | None:
    where, value = str(config_file), data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadEnvironment(
            f"{where}: {key!r} must be a path (a non-empty string), not {_shown(value)}; "
            "fix it or remove the key"
        )
    return _from_config_file(value, config_file.parent)


def _sources(entries: object, config_file: Path) -> tuple[Source, ...]:
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise BadEnvironment(
            f"{config_file}: 'sources' must be a list of {{\"name\", \"adapter\", \"path\"}} "
            f"objects, not {_shown(entries)}"
        )
    out: list[Source] = []
    for i, entry in enumerate(entries):
        where = f"{config_file}: sources[{i}]"
        if not isinstance(entry, dict):
            raise BadEnvironment(
                f"{where} must be an object with name, adapter and path, not {_shown(entry)}"
            )
        missing = [key for key in ("name", "adapter", "path") if key not in entry]
        if missing:
            raise BadEnvironment(f"{where} lacks {', '.join(missing)}; a source needs name, "
                                 "adapter and path")
        name = entry["name"]
        if not isinstance(name, str) or not SOURCE_NAME.fullmatch(name):
            raise BadEnvironment(f"{where}: name must be {SOURCE_NAME_RULE}, not {_shown(name)}")
        if name == "vault":
            raise BadEnvironment(f"{where}: the name 'vault' is reserved for the writable vault")
        if any(s.name == name for s in out):
            raise BadEnvironment(f"{where}: a second source named {name!r}; names must differ")
        if entry["adapter"] not in adapters.NAMES:
            raise BadEnvironment(f"{where}: adapter must be one of {', '.join(adapters.NAMES)}, "
                                 f"not {_shown(entry['adapter'])}")
        path = entry["path"]
        if not isinstance(path, str) or not path.strip():
            raise BadEnvironment(
                f"{where}: path must be a folder path (a non-empty string), not {_shown(path)}"
            )
        root = str(_from_config_file(path, config_file.parent))
        out.append(Source(name=name, adapter=entry["adapter"], root=root))
    return tuple(out)


def load(home: str | None = None, db: str | None = None, vault: str | None = None) -> Config:
    home_setting = _pick(home, ENV_HOME, None, Path.home() / ".memsync")
    config_file = home_setting.path / "config.json"
    file_data = _read_config_file(config_file)
    configured = _path_value(file_data, "vault", config_file)
    vault_setting = _pick(vault, ENV_VAULT, configured, home_setting.path / "vault")
    cfg = Config(
        home=home_setting,
        db=_index_for(vault_setting.path, home_setting.path,
                      _pick(db, ENV_DB, _path_value(file_data, "db", config_file),
                            home_setting.path / vaults.DEFAULT_DB)),
        vault=vault_setting,
        listed_sources=_sources(file_data.get("sources"), config_file),
        semantic=_flag(file_data, "semantic", config_file),
        configured_vault=configured,
        lifecycle=_lifecycle(file_data, config_file),
        threads=_count(file_data, "threads", config_file),
    )
    return cfg


def _lifecycle(data: dict, config_file: Path) -> lifecycle_config.Settings:
    try:
        return lifecycle_config.read(data, str(config_file))
    except ValueError as exc:
        raise BadEnvironment(f"{exc}; fix it or remove the key") from None


def _flag(data: dict, key: str, config_file: Path) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise BadEnvironment(f"{config_file}: {key!r} must be true or false, not {_shown(value)}")
    return value


def _count(data: dict, key: str, config_file: Path) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadEnvironment(f"{config_file}: {key!r} must be a whole number of at least 1, "
                             f"not {_shown(value)}")
    return value


def _index_for(vault: Path, home: Path, chosen: Setting) -> Setting:
    """One index per vault (memsync.store.vaults): memsync.db serves the vault it belongs to (the
    first indexed in this home, or the one `memsync init` chose); any other vault gets its own,
    so a one-off --vault can never take those cards out of search. An index named outright
    (--db, MEMSYNC_DB, "db" in config.json) is used whatever the vault."""
    if chosen.origin != "default":
        return chosen
    holder = vaults.owner(chosen.path)
    if holder is None or vaults.same_folder(holder, vault):
        return chosen
    return Setting(vaults.own_index(home, vault), "vault")


def reload(cfg: Config) -> Config:
    """`cfg` as config.json says now. What the command line chose still wins, and so does the
    environment (a running process cannot see it change anyway)."""
    fresh = load(
        str(cfg.home.path),
        db=str(cfg.db.path) if cfg.db.origin == "cli" else None,
        vault=str(cfg.vault.path) if cfg.vault.origin == "cli" else None,
    )
    return replace(fresh, home=cfg.home)


def file_signature(path: Path) -> tuple | None:
    """Changes whenever the file is rewritten or replaced; None while it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def append_source_entry(cfg: Config, source: Source) -> None:
    """Add a read-only source at the end of config.json's list."""
    data = _read_config_file(cfg.config_file)
    entry = {"name": source.name, "adapter": source.adapter, "path": source.root}
    data["sources"] = [*(data.get("sources") or []), entry]
    _write_config_file(cfg, data)


def remove_source_entry(cfg: Config, name: str) -> None:
    """Take the source named `name` out of config.json's list."""
    data = _read_config_file(cfg.config_file)
    data["sources"] = [e for e in data.get("sources") or [] if e.get("name") != name]
    _write_config_file(cfg, data)


# Both edit the entries as written: the others keep their order, their paths as the user wrote
# them (relative or with ~) and any key memsync does not know.


def _write_config_file(cfg: Config, data: dict) -> None:
    """Write config.json atomically."""
    private.mkdir(cfg.home.path)
    temp = cfg.config_file.with_name(f".config.json.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        private.restrict(temp)
        os.replace(temp, cfg.config_file)
    finally:
        temp.unlink(missing_ok=True)


def configured_vault_text(cfg: Config) -> str | None:
    """config.json's "vault" exactly as written (None when absent)."""
    value = _read_config_file(cfg.config_file).get("vault")
    return value if isinstance(value, str) else None


def write_vault(cfg: Config, vault: Path) -> None:
    """Make `vault` (absolute) the configured vault in config.json; every other key is kept."""
    data = _read_config_file(cfg.config_file)
    data["vault"] = str(vault)
    _write_config_file(cfg, data)


def declined_sources(cfg: Config) -> list[dict]:
    """The agent memory sources the user said no to in `memsync init` ({"adapter", "path"}),
    so a second run does not ask again."""
    entries = _read_config_file(cfg.config_file).get("declined")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def write_declined(cfg: Config, entries: list[dict]) -> None:
    data = _read_config_file(cfg.config_file)
    data["declined"] = entries
    _write_config_file(cfg, data)
