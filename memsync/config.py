"""Where things live: the data home, the index, the vault and the read-only sources.

Each path is resolved CLI option > environment variable > config.json > default, and we remember
which layer won so `memsync paths` can say it. A relative path in config.json is relative to the
folder that holds config.json, so a watcher, an MCP server started by a desktop app and the CLI
read the same folders whatever directory each was started in. memsync.configjson reads the
file, checks each value, and edits it.
"""

import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

from memsync import private
from memsync.store import vaults

from . import configjson, lifecycle_config
from .configjson import absolute_path
from .errors import BadEnvironment
from .model import IgnoredSource, Source
from .overlap import sort_out

ENV_HOME = "MEMSYNC_HOME"
ENV_DB = "MEMSYNC_DB"
ENV_VAULT = "MEMSYNC_VAULT"
RELOAD_WITHIN = 10.0  # seconds: a running watcher takes up a changed config.json by then


class Setting(NamedTuple):
    path: Path
    origin: str  # "cli" | "env" | "config" | "default"; for db also "vault" (its own index)


@dataclass(frozen=True)
class Config:
    """The paths and settings one memsync process runs with, each with the layer it came from."""

    home: Setting
    db: Setting
    vault: Setting
    listed_sources: tuple[Source, ...] = field(default=())  # as config.json lists them, in order
    semantic: bool = False  # config.json "semantic": hybrid search by default (memsync[semantic])
    configured_vault: Path | None = None  # config.json's "vault", whatever is in use now
    lifecycle: lifecycle_config.Settings = lifecycle_config.DEFAULT  # memsync.lifecycle
    # config.json "threads": cores a foreground rebuild or embedding may use (None: all usable)
    threads: int | None = None
    # (what, what to do) for each key of config.json memsync ignores (configjson.ignored)
    ignored_keys: tuple[tuple[str, str], ...] = ()

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

    def no_index(self) -> str:
        """What a command that needs the index says when there is none yet. Before `memsync init`
        (no vault named anywhere) `memsync index` would index memsync's own empty folder, so the
        first step is init, which asks which folder is the vault."""
        if self.not_set_up():
            return (f"no index at {self.db.path}: memsync is not set up here yet; run `memsync "
                    "init` (it asks which folder is your vault)")
        problem = self.vault_problem()
        if problem:  # `memsync index` would refuse it: a misspelt --vault or MEMSYNC_VAULT, say
            return f"no index at {self.db.path}: the {problem}"
        return f"no index at {self.db.path} yet: run `memsync index` (or start `memsync watch`)"

    def not_set_up(self) -> bool:
        """No vault named anywhere: neither config.json (`memsync init`) nor --vault / env."""
        return self.vault.origin == "default" and self.configured_vault is None

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
            found = on_disk(root)
            if found != "folder":
                state = {"file": "is a file, not a folder (a source is the folder that holds its files)",
                         "missing": "does not exist"}.get(found, "is not a folder")
                problems.append(f"source {source.name}: {root} {state}; it is not indexed")
        problems += [self.ignored_problem(left_out) for left_out in self.ignored_sources]
        return [p for p in problems if p]

    def key_problems(self) -> list[str]:
        """What of config.json memsync ignores (most likely a setting misspelt), with its fix."""
        return [f"{what}; {fix}" for what, fix in self.ignored_keys]

    def semantic_problem(self) -> str | None:
        """config.json turns semantic search on where its model is not installed: every search
        then fails (saying how to install it) and nothing is embedded."""
        from .semantic import available

        if not self.semantic or available():
            return None
        return (f"{self.config_file} turns semantic search on (\"semantic\": true), but "
                "memsync[semantic] is not installed: searches use keywords only and nothing is "
                "embedded until it is")


def _pick(cli: str | None, env_name: str, file_value: Path | None, default: Path) -> Setting:
    if cli:
        return Setting(absolute_path(Path(cli)), "cli")
    env = os.environ.get(env_name)
    if env:
        return Setting(absolute_path(Path(env)), "env")
    if file_value:
        return Setting(file_value, "config")
    return Setting(default, "default")


def load(home: str | None = None, db: str | None = None, vault: str | None = None) -> Config:
    home_setting = _pick(home, ENV_HOME, None, Path.home() / ".memsync")
    _refuse_a_file_for_home(home_setting)
    config_file = home_setting.path / "config.json"
    file_data = configjson.read(config_file)
    configured = configjson.path_value(file_data, "vault", config_file)
    vault_setting = _pick(vault, ENV_VAULT, configured, home_setting.path / "vault")
    cfg = Config(
        home=home_setting,
        db=_index_for(vault_setting.path, home_setting.path,
                      _pick(db, ENV_DB, configjson.path_value(file_data, "db", config_file),
                            home_setting.path / vaults.DEFAULT_DB)),
        vault=vault_setting,
        listed_sources=configjson.sources(file_data.get("sources"), config_file),
        semantic=configjson.flag(file_data, "semantic", config_file),
        configured_vault=configured,
        lifecycle=configjson.lifecycle(file_data, config_file),
        threads=configjson.count(file_data, "threads", config_file),
        ignored_keys=tuple(configjson.ignored(file_data, config_file)),
    )
    return cfg


def _refuse_a_file_for_home(home: Setting) -> None:
    """A home that is a file (a typo, the index's path given for it) would otherwise meet each
    command deep in its work: `no index, run memsync init`, then a traceback from init."""
    if os.path.isdir(home.path) or not os.path.lexists(home.path):
        return
    where = {"cli": "--home", "env": ENV_HOME}.get(home.origin)
    fix = (f"point {where} at a folder (memsync makes one that is missing)" if where else
           f"move it aside, or point --home / {ENV_HOME} at a folder")
    raise BadEnvironment(f"the data home {home.path} is not a folder; {fix}")


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


def on_disk(root: Path) -> str:
    """What is at a source's path: "folder" (a link to one too), "file", "missing" or "other"
    (a socket, a device), so a path that names a file is not called a missing folder."""
    if root.is_dir():
        return "folder"
    if root.is_file():
        return "file"
    return "other" if root.exists() else "missing"
