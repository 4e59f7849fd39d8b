"""Error types. Pure: no I/O. Each carries a stable code, an exit status and a message that says what to do.

The CLI maps them to exit codes in one place (cli.py); the MCP server maps them to tool errors.
"""


class MemsyncError(Exception):
    code = "error"
    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict:
        return {"error": {"code": self.code, "message": self.message}}


class BadArgument(MemsyncError):
    """The caller passed something malformed (a bad date, a path outside the vault)."""

    code = "bad_argument"
    exit_code = 2


def refuse_blank(name: str, value: str | None, instead: str) -> None:
    """An argument given as "" or spaces, where leaving it out has a meaning of its own: Python
    reads "" as false, so `kind or DEFAULT` took it for left out and wrote a card of the default
    kind. Refused by the flag's name (the MCP edge says the argument's, memsync.mcp.words), with
    `instead`: what to do, which each caller knows."""
    if value is not None and not value.strip():
        raise BadArgument(f"--{name} is empty; {instead}")


class BadEnvironment(MemsyncError):
    """The machine is not in a state we can work in (no index, unwritable home, lock held)."""

    code = "bad_environment"
    exit_code = 2


class Damaged(BadEnvironment):
    """The index file is malformed or truncated: `memsync doctor --fix` rebuilds it."""

    code = "index_damaged"


class MassRemoval(BadEnvironment):
    """A sync would remove most (or all) of a source's cards at once: an unmounted disk or a
    cloud folder not synced yet looks exactly like that, so nothing is removed until confirmed."""

    code = "mass_removal"


class NotFound(MemsyncError):
    code = "not_found"
    exit_code = 1


class Rejected(MemsyncError):
    """A write refused by a rule (body too short, secrets with reject_secrets, chained supersede)."""

    code = "rejected"
    exit_code = 1


class ReadOnlySource(MemsyncError):
    """A write to a card of a read-only source: refused by a rule, as a kind change is, so it
    exits as a rejected write does (1), not as a bad environment."""

    code = "read_only_source"
    exit_code = 1


class ReadOnlyNote(MemsyncError):
    """An edit of a vault note its owner made read-only (no write bit, or not ours to write):
    refused by a rule, as a read-only source's card is (exit 1)."""

    code = "read_only_note"
    exit_code = 1


class PathOutsideVault(BadArgument):
    code = "path_outside_vault"


class TitleConflict(MemsyncError):
    code = "title_conflict"
    exit_code = 3


class WriteFailed(BadEnvironment):
    """A file in the vault could not be written (disk full, read-only folder, file too large)."""

    code = "write_failed"
