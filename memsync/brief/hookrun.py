"""`memsync brief --hook CLIENT`: the brief as a client's session-start hook runs it.

The client pipes a JSON object on stdin (its session id, `cwd`, what started the session) and
reads the hook's stdout. Claude Code, Codex and Gemini CLI all take the same answer for this
event: `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": TEXT}}`,
whose TEXT they add to the model's context. A hook must never stand in the agent's way: whatever
goes wrong (no index, a broken one, a slow disk, a locked database), it prints `{}`, says why in
one line on stderr and exits 0, and all of it, stdin included, runs under a hard time limit.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import IO

CLIENTS = ("claude-code", "codex", "gemini")
TIME_LIMIT_S = 2.0
# Where each client names the project when the JSON on stdin does not (it normally does: `cwd`).
PROJECT_ENV = {"claude-code": "CLAUDE_PROJECT_DIR", "gemini": "GEMINI_PROJECT_DIR"}
STDIN_CAP = 1 << 20


def answer(context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                              "additionalContext": context}}, ensure_ascii=False)


def read_payload(stream: IO[str] | None) -> dict:
    """The client's JSON, or {} when there is none (a terminal, nothing piped, not JSON)."""
    if stream is None or stream.isatty():
        return {}
    try:
        data = json.loads(stream.read(STDIN_CAP) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def directory(client: str, payload: dict) -> str:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    return os.environ.get(PROJECT_ENV.get(client, ""), "") or os.getcwd()


def asked_for(args: list[str]) -> bool:
    """Whether a command line asks for hook mode: `--hook` among its options (before a `--`).
    Looked at only where click has refused the line, so no value it parsed can say so."""
    options = args[:args.index("--")] if "--" in args else args
    return any(arg == "--hook" or arg.startswith("--hook=") for arg in options)


def refusal(reason: str) -> str:
    """The one line on stderr of a hook run that prints `{}`."""
    return f"memsync brief: no brief this time ({_one_line(reason)}); the session starts without it"


def run(client: str, brief: Callable[[str], str], stdin: IO[str] | None = None,
        limit: float = TIME_LIMIT_S) -> tuple[str, str | None, bool]:
    """(what to print on stdout, the one line for stderr or None, whether the work is still
    running). `brief(directory)` makes the text; it runs in a worker thread so that the limit
    holds whatever it waits on."""
    if client not in CLIENTS:  # a hook written by hand, or by a later memsync that knows more
        return "{}", refusal(f"--hook {client!r} is no client memsync knows; give one of "
                             f"{', '.join(CLIENTS)}: `memsync hooks install CLIENT` writes the hook again"), False
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            payload = read_payload(stdin if stdin is not None else sys.stdin)
            outcome["text"] = brief(directory(client, payload))
        except BaseException as exc:  # fail open: the hook never stops a session from starting
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="memsync-brief-hook", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        return "{}", refusal(f"it took longer than {limit:g} s"), True
    if "error" in outcome:
        return "{}", refusal(_reason(outcome["error"])), False
    return answer(str(outcome["text"])), None, False


def _reason(exc: object) -> str:
    return str(getattr(exc, "message", None) or str(exc) or type(exc).__name__)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]
