"""Each client's session-start hook, as its own documentation describes it (data, no I/O).

- Claude Code: `hooks.SessionStart` in settings.json (`~/.claude/settings.json`; a project's own,
  not committed: `.claude/settings.local.json`), groups `{matcher, hooks: [{type: command,
  command, timeout (s)}]}`; the matcher is the session's source, startup|resume|clear|compact.
  stdout, or the JSON `hookSpecificOutput.additionalContext`, is added to the model's context.
- Codex: the same shape in `hooks.json` beside its config (`~/.codex/hooks.json`, a project's
  `.codex/hooks.json`), timeout in seconds; `hookSpecificOutput.additionalContext` goes to the
  model. Hooks are on by default in current versions; older ones need `[features] codex_hooks =
  true` in config.toml, and `[features] hooks = false` turns them off.
- Gemini CLI: `hooks.SessionStart` in settings.json (`~/.gemini/settings.json`, a project's
  `.gemini/settings.json`; JSON with comments), the same groups, timeout in milliseconds; a
  lifecycle matcher is an exact string, so ours has none (every start: startup, resume, clear).
  Its stdout must be JSON only; `hookSpecificOutput.additionalContext` is added to the history.
  Versions where hooks are still experimental need `hooksConfig.enabled` (older: `tools.enableHooks`).

None of them has an end-of-session hook that can still reach the model: Claude Code's SessionEnd
and Gemini's SessionEnd run after the model is done, and a Stop hook runs after every turn (it
can only block the turn). So the end-of-session reminder to save what was learnt is the brief's
last line, sent again at every resume, clear and compaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Client:
    name: str  # as `memsync hooks install NAME` takes it
    title: str
    user_file: str  # relative to the user's home
    project_file: str  # relative to the project's folder
    matcher: str | None
    timeout: int  # in the client's unit
    detect: str  # a folder (relative to home) whose presence says the client is used here
    comments: bool  # the client reads the file as JSON with comments
    docs: str

    def settings(self, home: Path, project: Path | None) -> Path:
        return project / self.project_file if project else home / self.user_file


CLIENTS: dict[str, Client] = {c.name: c for c in (
    Client("claude-code", "Claude Code", ".claude/settings.json", ".claude/settings.local.json",
           "startup|resume|clear|compact", 10, ".claude", False,
           "https://code.claude.com/docs/en/hooks#sessionstart"),
    Client("codex", "Codex", ".codex/hooks.json", ".codex/hooks.json",
           "startup|resume|clear|compact", 10, ".codex", False,
           "https://developers.openai.com/codex/hooks"),
    Client("gemini", "Gemini CLI", ".gemini/settings.json", ".gemini/settings.json",
           None, 10_000, ".gemini", True,
           "https://geminicli.com/docs/hooks/reference"),
)}
EVENT = "SessionStart"


def entry(client: Client, command: str) -> dict:
    """The hook group memsync adds to the client's SessionStart list."""
    hook: dict = {"type": "command", "command": command, "timeout": client.timeout}
    if client.name == "gemini":
        hook = {"name": "memsync-brief", **hook, "description": "memsync: the session brief"}
    elif client.name == "codex":
        hook["statusMessage"] = "Loading the memsync brief"
    group: dict = {"matcher": client.matcher} if client.matcher else {}
    return {**group, "hooks": [hook]}


def notes(client: Client, settings: dict, config_toml: dict | None) -> list[str]:
    """What may keep an installed hook from running, read from the client's own settings."""
    out = []
    if client.name == "gemini":
        enabled = settings.get("hooksConfig", {}).get("enabled") if isinstance(settings.get("hooksConfig"), dict) else None
        if enabled is False:
            out.append("hooksConfig.enabled is false in this settings.json: Gemini CLI runs no hook")
        else:
            out.append("Gemini CLI versions where hooks are still experimental run them only with "
                       "\"hooksConfig\": {\"enabled\": true} in settings.json")
    if client.name == "codex":
        features = (config_toml or {}).get("features", {})
        if isinstance(features, dict) and (features.get("hooks") is False or features.get("codex_hooks") is False):
            out.append("[features] turns hooks off in ~/.codex/config.toml: Codex runs no hook")
        elif not (isinstance(features, dict) and (features.get("hooks") or features.get("codex_hooks"))):
            out.append("Codex versions from before hooks were on by default need "
                       "`[features] codex_hooks = true` in ~/.codex/config.toml")
    return out
