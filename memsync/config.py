"""Where things live: the data home, the index, the vault and the read-only sources.

Each path is resolved CLI option > environment variable > config.json > default, and we remember
which layer won so `memsync paths` can say it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import BadEnvironment
from .model import Source

ENV_HOME = "MEMSYNC_HOME"
ENV_DB = "MEMSYNC_DB"
ENV_VAULT = "MEMSYNC_VAULT"


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
        path = self.vault.path
        if not path.exists():
            if self.vault.origin != "default":
                raise BadEnvironment(
                    f"vault {path} (from {self.vault.origin}) does not exist; "
                    "create it or point --vault / MEMSYNC_VAULT at an existing folder"
                )
            path.mkdir(parents=True, exist_ok=True)
        return path


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


def _sources(entries: object, config_file: Path) -> tuple[Source, ...]:
    if not entries:
        return ()
    if not isinstance(entries, list):
        raise BadEnvironment(f"'sources' in {config_file} must be a list of {{name, adapter, path}}")
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or not {"name", "adapter", "path"} <= entry.keys():
            raise BadEnvironment(f"each source in {config_file} needs name, adapter and path")
        if entry["name"] == "vault":
            raise BadEnvironment("the source name 'vault' is reserved for the writable vault")
        root = str(Path(entry["path"]).expanduser().absolute())
        out.append(Source(name=entry["name"], adapter=entry["adapter"], root=root))
    return tuple(out)


def load(home: str | None = None, db: str | None = None, vault: str | None = None) -> Config:
    home_setting = _pick(home, ENV_HOME, None, Path.home() / ".memsync")
    file_data = _read_config_file(home_setting.path / "config.json")
    return Config(
        home=home_setting,
        db=_pick(db, ENV_DB, file_data.get("db"), home_setting.path / "memsync.db"),
        vault=_pick(vault, ENV_VAULT, file_data.get("vault"), home_setting.path / "vault"),
        extra_sources=_sources(file_data.get("sources"), home_setting.path / "config.json"),
    )


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
