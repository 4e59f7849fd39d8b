"""`memsync init`: make this machine's set-up explicit, so every process agrees without env vars.

It creates the home, writes the vault (absolute) into config.json, adds the agent memory files
the user accepted as read-only sources, and indexes. Each step says what it changed; a second
run changes nothing and says so. Asking the user is the CLI's job, not this module's.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from memsync import private
from memsync.store import vaults
from memsync.watch import lock

from . import config as config_mod
from . import configjson
from .errors import BadArgument, BadEnvironment


def set_vault(cfg: config_mod.Config, target: Path | None) -> tuple[config_mod.Config, list[str]]:
    """Make `target` (default: the vault in effect now) the configured vault; returns the config
    to go on with and what changed."""
    changes = []
    home = cfg.home.path
    if not home.is_dir():
        private.mkdir(home)
        changes.append(f"created the data home {home}")
    vault = configjson.absolute_path(Path(target)) if target else cfg.vault.path
    default_vault = home / "vault"
    if not vault.is_dir():
        if vault.exists():
            raise BadArgument(f"{vault} is not a folder: a vault is a folder of Markdown notes")
        if not vaults.same_folder(vault, default_vault):
            raise BadArgument(f"{vault} does not exist: create it first (mkdir -p "
                              f"{shlex.quote(str(vault))}) or check the path")
        vault.mkdir(parents=True)
        changes.append(f"created the vault folder {vault}")
    if configjson.configured_vault_text(cfg.config_file) != str(vault):
        configjson.write_vault(cfg.config_file, vault)
        changes.append(f"wrote the vault {vault} into {cfg.config_file}")
    if cfg.db.origin in ("default", "vault"):  # memsync.db goes with the configured vault
        if vaults.needs_swap(home, vault) and lock.status(cfg.lock_file).get("live"):
            raise BadEnvironment("a `memsync watch` (or the service) is running on this home: "
                                 "stop it first, then run `memsync init` again")
        moved = vaults.make_main(home, vault)
        if moved:
            changes.append(moved)
    db = str(cfg.db.path) if cfg.db.origin == "cli" else None
    return config_mod.load(str(home), db=db, vault=str(vault)), changes


def vault_choices(cfg: config_mod.Config, obsidian: list) -> list[tuple[Path, str]]:
    """What `init` offers as the vault: Obsidian's vaults, last opened first, then the folder in
    effect now (memsync's own default unless one was given); (folder, what it is)."""
    choices = [(v.path, "Obsidian vault" + (", last opened" if i == 0 else ""))
               for i, v in enumerate(obsidian)]
    own = cfg.vault.path
    if not any(vaults.same_folder(own, path) for path, _ in choices):
        what = "memsync's own folder" if cfg.vault.origin == "default" else f"from {cfg.vault.origin}"
        choices.append((own, what + ("" if has_notes(own) else ", empty")))
    return choices


def no_vault_chosen(choices: list[tuple[Path, str]]) -> str:
    """Why init set nothing up when nobody answered which folder is the vault, and the commands
    that name one: written into config.json, a vault taken by default is never asked about again."""
    each = "; ".join(f"`{use_vault(path)}` ({what})" for path, what in choices)
    return ("no vault chosen, so nothing was set up: `memsync init` asks which folder is your vault "
            "and had no answer (no terminal to ask on, or --json). Name it: "
            f"`{use_vault('DIR')}`, or one of those on offer: {each}. `--yes` takes the first "
            "and adds every agent memory file and session hook found")


def only_choice_taken(vault: Path) -> str:
    """What init says when nobody could be asked and the folder in effect was all it had."""
    return (f"nobody to ask which folder is the vault, and no Obsidian vault found: {vault} is "
            f"the vault; `{use_vault('DIR')}` names another")


def has_notes(folder: Path) -> bool:
    """Whether a folder holds at least one Markdown note outside dot-folders (stops at the first)."""
    for _root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if any(name.endswith(".md") and not name.startswith(".") for name in files):
            return True
    return False


def empty_vault_note(vault: Path) -> str | None:
    if has_notes(vault):
        return None
    return (f"the vault {vault} holds no notes yet: memsync is watching an empty folder. If your "
            "notes are elsewhere, point memsync at them with `memsync init --vault DIR`")


def use_vault(path: Path | str) -> str:
    """The command that makes `path` the vault, quoted for a shell: pasted, a folder whose name
    holds a space ("My Notes") must stay one argument."""
    return f"memsync init --vault {shlex.quote(str(path))}"


def obsidian_notes(paths: list[str]) -> list[str]:
    return [f"Obsidian knows the vault {path}: to use it, run `{use_vault(path)}`" for path in paths]


def declined_key(entry: dict) -> dict:
    return {"adapter": entry["adapter"], "path": entry["path"]}


def summary(cfg: config_mod.Config, changes: list[str], report: dict, mcp: dict,
            added: list[dict], declined: list[dict], notes: list[str] | None = None,
            vaults_offered: list[str] | None = None) -> dict:
    return {
        "status": "initialized" if changes else "unchanged",
        "home": str(cfg.home.path),
        "vault": str(cfg.vault.path),
        "config": str(cfg.config_file),
        "db": str(cfg.db.path),
        "cards": vaults.card_count(cfg.db.path),
        "changed": changes,
        "sources_added": added,
        "sources_offered": declined,
        "index": report,
        "mcp": mcp,
        "notes": notes or [],
        "vaults_offered": vaults_offered or [],
    }


def index_changed(report: dict) -> str | None:
    moved = {k: report.get(k, 0) for k in ("added", "updated", "removed", "moved")}
    if not any(moved.values()):
        return None
    return "indexed: " + ", ".join(f"{n} {k}" for k, n in moved.items() if n)


def render(data: dict) -> str:
    lines = []
    if data["status"] == "unchanged":
        lines.append("memsync is already set up here: nothing changed.")
    else:
        lines.append("memsync is set up:")
        lines += [f"  - {change}" for change in data["changed"]]
    lines += [
        "",
        f"  home   {data['home']}",
        f"  vault  {data['vault']}",
        f"  index  {data['db']} ({data['cards']} cards)",
    ]
    for note in data.get("notes", []):
        lines.append(f"  note: {note}")
    for offer in data["sources_offered"]:
        lines.append(f"  not added: {offer['what']}; add it later with `memsync sources --add "
                     f"{offer['name']} --adapter {offer['adapter']} --path "
                     f"{shlex.quote(str(offer['path']))}`")
    lines += ["", "Connect an agent (paste one; the paths are absolute):"]
    titles = {"claude_code": "Claude Code", "claude_desktop": "Claude Desktop", "cursor": "Cursor"}
    for key, title in titles.items():
        snippet = data["mcp"][key]
        lines += ["", f"{title} ({snippet['where']}):", *snippet["text"].splitlines()]
    hooks = data.get("hooks", [])
    if hooks:
        lines += ["", "Start each session with the memsync brief (the client's session-start hook):"]
        lines += [f"  {h['client']}: " + (f"installed in {h['settings']}" if h["status"] == "installed"
                                          else f"not installed: {h['problem']}" if h.get("problem")
                                          else f"`{h['install']}`") for h in hooks]
    lines += ["", "Keep the index live while you edit: `memsync watch` (or `memsync service "
              "install` to have it start at log-in)."]
    return "\n".join(lines)


def offer_dict(found) -> dict:
    s = found.source
    return {"name": s.name, "adapter": s.adapter, "path": s.root, "what": found.what}

