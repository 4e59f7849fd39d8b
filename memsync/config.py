"""Where things live: the data home, the index, the vault and the read-only sources.

Each path is resolved CLI option > environment variable > config.json > default, and we remember
which layer won so `memsync paths` can say it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import memsync.adapters as adapters

from .errors import BadEnvironment
from .model import Source

ENV_HOME = "MEMSYNC_HOME"
ENV_DB = "MEMSYNC_DB"
ENV_VAULT = "MEMSYNC_VAULT"
SOURCE_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
SOURCE_NAME_RULE = "1-40 letters, digits, '-' or '_'"
RELOAD_WITHIN = 10.0  # seconds: a running watcher takes up a changed config.json by then


@dataclass(frozen=True)
class Setting:
    path: Path
    origin: str  # "cli" | "env" | "config" | "default"


@dataclass(frozen=True)
class Config:
    home: Setting
    db: Setting
    vault: Setting
    extra_sources: tuple[Source, ...] = field(default=())

    @property
    def config_file(self) -> Path:
        return self.home.path / "config.json"

    @property
    def lock_file(self) -> Path:
        return self.home.path / "watch.lock"

    @property
    def bench_queries(self) -> Path:
        return self.home.path / "bench_queries.json"

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
        known = ", ".join(s.name for s in self.sources)
        raise BadEnvironment(f"unknown source {name!r}; configured sources: {known}")

    def ensure_vault(self) -> Path:
        """A missing default vault is created on first use; a configured one must exist."""
        problem = self.vault_problem()
        if problem:
            raise BadEnvironment(problem)
        self.vault.path.mkdir(parents=True, exist_ok=True)
        return self.vault.path

    def vault_problem(self) -> str | None:
        path, origin = self.vault.path, self.vault.origin
        fix = "point --vault / MEMSYNC_VAULT (or \"vault\" in config.json) at a folder"
        if path.exists() and not path.is_dir():
            return f"vault {path} (from {origin}) is not a folder: a vault must be a directory; {fix}"
        if not path.exists() and origin != "default":
            return f"vault {path} (from {origin}) does not exist; create it or {fix}"
        return None

    def folder_problems(self) -> list[str]:
        """What stands in the way of indexing: a vault or source folder that is not a folder."""
        problems = [self.vault_problem()]
        for source in self.extra_sources:
            root = Path(source.root)
            if not root.is_dir():
                state = "is not a folder" if root.exists() else "does not exist"
                problems.append(f"source {source.name}: {root} {state}; it is not indexed")
        return [p for p in problems if p]


def _pick(cli: str | None, env_name: str, file_value: str | None, default: Path) -> Setting:
    if cli:
        return Setting(Path(cli).expanduser().absolute(), "cli")
    env = os.environ.get(env_name)
    if env:
        return Setting(Path(env).expanduser().absolute(), "env")
    if file_value:
        return Setting(Path(file_value).expanduser().absolute(), "config")
    return Setting(default, "default")


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


def _path_value(data: dict, key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadEnvironment(
            f"{where}: {key!r} must be a path (a non-empty string), not {_shown(value)}; "
            "fix it or remove the key"
        )
    return value


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
        root = str(Path(path).expanduser().absolute())
        out.append(Source(name=name, adapter=entry["adapter"], root=root))
    return tuple(out)


def load(home: str | None = None, db: str | None = None, vault: str | None = None) -> Config:
    home_setting = _pick(home, ENV_HOME, None, Path.home() / ".memsync")
    config_file = home_setting.path / "config.json"
    file_data = _read_config_file(config_file)
    where = str(config_file)
    return Config(
        home=home_setting,
        db=_pick(db, ENV_DB, _path_value(file_data, "db", where), home_setting.path / "memsync.db"),
        vault=_pick(vault, ENV_VAULT, _path_value(file_data, "vault", where),
                    home_setting.path / "vault"),
        extra_sources=_sources(file_data.get("sources"), config_file),
    )


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


def save_sources(cfg: Config, sources: list[Source]) -> None:
    """Write the read-only sources into config.json, keeping every other key; atomically."""
    data = _read_config_file(cfg.config_file)
    data["sources"] = [{"name": s.name, "adapter": s.adapter, "path": s.root} for s in sources]
    cfg.home.path.mkdir(parents=True, exist_ok=True)
    temp = cfg.config_file.with_name(f".config.json.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(temp, cfg.config_file)
    finally:
        temp.unlink(missing_ok=True)
