"""`memsync hooks install | uninstall | status`: wire `memsync brief` into a client's own
session-start hook, reversibly (memsync.hooks.clients says what each client takes).

The settings file is the user's: it is edited in place (memsync.hooks.jsonc: only the bytes of
our entry change), backed up first (`FILE.memsync-backup`, the file as it was before memsync
first touched it), written whole through a temp file renamed into place, and never rewritten
when nothing changes. `uninstall` takes our entry out again; if the file is then what the backup
holds, the backup's bytes are put back exactly and the backup goes. A file memsync created is
removed again when nothing but our entry was ever in it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from memsync.errors import BadArgument, BadEnvironment
from memsync.hooks import jsonc
from memsync.hooks.clients import CLIENTS, EVENT, Client, entry, notes

BACKUP_SUFFIX = ".memsync-backup"
OURS = re.compile(r"memsync\S*(?:\s.*)?\sbrief\s+--hook\s+(?:claude-code|codex|gemini)\b")
END_OF_SESSION = ("no end-of-session hook is installed: none of these clients has one that can "
                  "still reach the model, so the brief's last line asks the agent to save what it "
                  "learnt (memory_capture), and it is said again at every resume, clear and compaction")


def client(name: str) -> Client:
    try:
        return CLIENTS[name]
    except KeyError:
        raise BadArgument(f"unknown client {name!r}: one of {', '.join(CLIENTS)}") from None


def hook_command(executable: Path, home: Path, client_name: str) -> str:
    return " ".join(shlex.quote(part) for part in
                    (str(executable), "--home", str(home), "brief", "--hook", client_name))


def _read(path: Path) -> str | None:
    try:  # newline="": a CRLF file keeps its line ends through an edit and in the backup
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise BadEnvironment(f"{path} is a folder, where the client keeps a settings file: move it "
                             "aside (or remove it if it is empty), then run this again") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadEnvironment(f"cannot read {path}: {exc}") from None


def _parse(path: Path, text: str) -> jsonc.Node:
    try:
        root = jsonc.parse(text)
    except jsonc.JSONCError as exc:
        raise BadEnvironment(f"{path} is not valid JSON ({exc}): fix it first; memsync changed nothing") from None
    if root.kind != "object":
        raise BadEnvironment(f"{path} does not hold a JSON object: memsync changed nothing")
    return root


def _write(path: Path, text: str, mode: int | None = None) -> None:
    """All or nothing (memsync.write.atomic): a client reading its settings meanwhile sees the old
    file or the new one. An existing file keeps its permission bits, a new one takes `mode`; a
    settings file that is a symbolic link (into a dotfiles folder, say) is written where it
    points, and stays a link."""
    from memsync.write import atomic

    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    # a new file is linked into place; one made by someone else meanwhile is replaced whole
    if path.exists() or not atomic.create(path, data, mode):
        atomic.replace(path, data)


def _ours(hook: jsonc.Node) -> bool:
    command = hook.get("command") if hook.kind == "object" else None
    return bool(command and isinstance(command.value, str) and OURS.search(command.value))


def _found(root: jsonc.Node) -> list[str]:
    """The commands of our hooks in this settings file."""
    hooks = root.get("hooks")
    groups = hooks.get(EVENT) if hooks and hooks.kind == "object" else None
    out = []
    for group in groups.items if groups and groups.kind == "array" else []:
        inner = group.get("hooks") if group.kind == "object" else None
        for hook in inner.items if inner and inner.kind == "array" else []:
            if _ours(hook):
                out.append(hook.get("command").value)  # type: ignore[union-attr]
    return out


def _our_groups(root: jsonc.Node) -> list:
    hooks = root.get("hooks")
    groups = hooks.get(EVENT) if hooks and hooks.kind == "object" else None
    out = []
    for group in groups.items if groups and groups.kind == "array" else []:
        inner = group.get("hooks") if group.kind == "object" else None
        if inner and inner.kind == "array" and any(_ours(hook) for hook in inner.items):
            out.append(group.plain())
    return out


def _without_ours(text: str, drop: int = 2) -> str:
    """The text with every hook of ours taken out, and each group that held only ours, then of
    the list and the object left empty by that the first `drop` (the list, then "hooks")."""
    while True:
        root = jsonc.parse(text)
        hooks = root.get("hooks")
        groups = hooks.get(EVENT) if hooks and hooks.kind == "object" else None
        if not groups or groups.kind != "array":
            return text
        changed = None
        for gi, group in enumerate(groups.items):
            inner = group.get("hooks") if group.kind == "object" else None
            items = inner.items if inner and inner.kind == "array" else []
            mine = [i for i, hook in enumerate(items) if _ours(hook)]
            if not mine:
                continue
            if len(mine) == len(items) and [n for n, _ in group.members] in (["matcher", "hooks"], ["hooks"]):
                changed = jsonc.remove_item(text, groups, gi)
                if len(groups.items) == 1:  # the list held only ours: it goes, then "hooks"
                    changed = _drop_empty(changed, drop)
            else:
                changed = jsonc.remove_item(text, inner, mine[0])  # type: ignore[arg-type]
            break
        if changed is None:
            return text
        text = changed


def _drop_empty(text: str, drop: int) -> str:
    """Of a key written twice only the last counts (jsonc.Node.get): one left empty stays, as
    taking it out would bring the earlier one back into effect."""
    root = jsonc.parse(text)
    hooks = root.get("hooks")
    if (drop < 1 or hooks is None or hooks.get(EVENT) is None or hooks.count(EVENT) > 1
            or hooks.get(EVENT).plain() != []):  # type: ignore[union-attr]
        return text
    text = jsonc.remove_member(text, hooks, EVENT)
    root = jsonc.parse(text)
    hooks = root.get("hooks")
    if drop > 1 and hooks is not None and hooks.kind == "object" and not hooks.members and root.count("hooks") == 1:
        text = jsonc.remove_member(text, root, "hooks")
    return text


def _with_ours(text: str, group: dict) -> str:
    if not text.strip():  # a new file
        return json.dumps({"hooks": {EVENT: [group]}}, ensure_ascii=False, indent=2) + "\n"
    root = jsonc.parse(text)
    hooks = root.get("hooks")
    if hooks is None:
        return jsonc.add_member(text, root, "hooks", {EVENT: [group]})
    if hooks.kind != "object":
        raise BadEnvironment('"hooks" in this settings file is not an object: memsync changed nothing')
    groups = hooks.get(EVENT)
    if groups is None:
        return jsonc.add_member(text, hooks, EVENT, [group])
    if groups.kind != "array":
        raise BadEnvironment(f'"hooks.{EVENT}" in this settings file is not a list: memsync changed nothing')
    return jsonc.append_item(text, groups, group)


def install(name: str, command: str, home: Path, project: Path | None) -> dict:
    """Add our SessionStart hook to the client's settings (user-wide, or the project's)."""
    spec = client(name)
    path = spec.settings(home, project)
    before = _read(path)
    text = before or ""
    root = _parse(path, text)
    group = entry(spec, command)
    if _our_groups(root) == [group]:
        return _result(spec, path, "unchanged", home, project)
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if before is not None and not backup.exists():  # as private as the file (it may hold tokens)
        _write(backup, before, os.stat(path).st_mode & 0o7777)
    new = _with_ours(_without_ours(text), group)  # an older entry of ours (another path) is replaced
    _write(path, new)
    return _result(spec, path, "installed", home, project)


def uninstall(name: str, home: Path, project: Path | None) -> dict:
    spec = client(name)
    path = spec.settings(home, project)
    text = _read(path)
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if text is None or not _found(_parse(path, text)):
        return _result(spec, path, "not installed", home, project)
    after = _without_ours(text)
    saved = _read(backup)
    # the backup again, but for what install added (an empty list or "hooks" of the user's kept)
    if saved is not None and any(_same(saved, _without_ours(text, drop)) for drop in (2, 1, 0)):
        _write(path, saved)  # the file as it was, byte for byte
        backup.unlink()
    elif saved is None and not jsonc.loads(after):
        path.unlink()  # memsync created it: nothing else was ever in it
        # and the client's folder too when that leaves it empty (install made it, for a client
        # not used here): left, `memsync init` would take the client for one in use
        # (detected) and offer its hook again, or with --yes install it
        with contextlib.suppress(OSError):
            path.parent.rmdir()
    else:
        _write(path, after)
    return _result(spec, path, "uninstalled", home, project)


def _same(a: str, b: str) -> bool:
    """The same values and the same comments (an edit to a comment made since the install is
    the user's, and is kept)."""
    try:
        return jsonc.loads(a) == jsonc.loads(b) and jsonc.comments(a) == jsonc.comments(b)
    except jsonc.JSONCError:
        return False


def status(name: str, home: Path, project: Path | None, this: Path | None = None) -> dict:
    """`this`: the memsync executable asking. A hook whose command runs another one (an old
    venv, another install) is said to be so, as the brief it gives may be that one's."""
    spec = client(name)
    path = spec.settings(home, project)
    text = _read(path)
    commands = _found(_parse(path, text)) if text is not None else []
    out = _result(spec, path, "installed" if commands else "not installed", home, project, commands)
    out["elsewhere"] = [c for c in commands if this is not None and c not in out["missing"]
                        and not _same_file(Path(shlex.split(c)[0]), this)]
    if this is not None:
        out["this"] = str(this)
    if out["missing"] or out["elsewhere"]:
        out["reinstall"] = f"memsync hooks install {name}" + (f" --project {shlex.quote(str(project))}"
                                                               if project else "")
    return out


def _same_file(a: Path, b: Path) -> bool:
    """The same executable, by path or through a link (a pipx or `uv tool` link on PATH)."""
    try:
        return os.path.abspath(a) == os.path.abspath(b) or os.path.samefile(a, b)
    except OSError:  # `this` gone, or not readable: not provably the same
        return False


def _result(spec: Client, path: Path, state: str, home: Path, project: Path | None,
            commands: list[str] | None = None) -> dict:
    text = _read(path)
    settings = jsonc.loads(text) if text else {}
    out = {
        "client": spec.name,
        "title": spec.title,
        "status": state,
        "scope": "project" if project else "user",
        "settings": str(path),
        "event": EVENT,
        "notes": notes(spec, settings if isinstance(settings, dict) else {}, _codex_config(home)),
        "end_of_session": END_OF_SESSION,
        "docs": spec.docs,
    }
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if backup.exists():
        out["backup"] = str(backup)
    if commands is not None:
        out["commands"] = commands
        out["missing"] = [c for c in commands if not Path(shlex.split(c)[0]).exists()]
    return out


def _codex_config(home: Path) -> dict | None:
    """~/.codex/config.toml, read only (to say whether hooks are on); None where Python has no
    TOML reader (3.10) or the file is missing or broken."""
    try:  # by name: Python 3.10 (and mypy checking for it) has no tomllib
        tomllib: Any = importlib.import_module("tomllib")
    except ImportError:
        return None
    try:
        with open(home / ".codex" / "config.toml", "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return None


def detected(home: Path) -> list[str]:
    """The clients whose folder is in the user's home: the ones `memsync init` offers a hook for."""
    return [spec.name for spec in CLIENTS.values() if (home / spec.detect).is_dir()]
