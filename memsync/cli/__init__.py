"""The `memsync` command line: a thin click layer over memsync.api.

Each command loads the config, makes one library call and prints the result: a table for people,
the same dict as JSON with `--json`. Errors become exit codes here and nowhere else:
0 ok, 1 no result or rejected, 2 bad environment or arguments, 3 title conflict rejected.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from .. import config as config_mod
from ..errors import MemsyncError


class Context:
    def __init__(self, home, db, vault):
        self._args = (home, db, vault)
        self._cfg = None

    @property
    def cfg(self) -> config_mod.Config:
        return self.loaded(warn=True)

    def loaded(self, warn: bool) -> config_mod.Config:
        """The config, loaded once; `warn` says on stderr what of config.json it ignores (not
        for `memsync doctor`, whose findings name it)."""
        if self._cfg is None:
            self._cfg = config_mod.load(*self._args)
            for what, fix in self._cfg.ignored_keys if warn else ():
                click.echo(f"memsync: warning: {what}; {fix}", err=True)
        return self._cfg


class CardId(click.ParamType):
    """A card id as typed: a whole number that SQLite can hold (ids are far smaller; a longer one
    is a typo, or two ids run together)."""

    name = "integer"

    def convert(self, value, param, ctx):
        number = click.INT.convert(value, param, ctx)
        if not -(2**63) <= number < 2**63:
            self.fail(f"{value} is too long to be a card id; find ids with `memsync search`", param, ctx)
        return number


CARD_ID = CardId()


def emit(data: dict, as_json: bool, human) -> None:
    if as_json:
        for piece in json_pieces(data):
            click.echo(piece, nl=False)
        click.echo()
    else:
        click.echo(human(data))


def json_pieces(data: dict, size: int = 1 << 16) -> Iterator[str]:
    """json.dumps(data) (ensure_ascii off, indent 2) in pieces of about `size` characters, to be
    written as they come: a consolidate plan over 100,000 cards is 21 MB of JSON, and made whole
    (its millions of small pieces, then the string, then its bytes) it took 110 MiB more."""
    batch: list[str] = []
    held = 0
    for chunk in json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(data):
        batch.append(chunk)
        held += len(chunk)
        if held >= size:
            yield "".join(batch)
            batch, held = [], 0
    yield "".join(batch)


def fail(err: MemsyncError, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(err.to_dict(), ensure_ascii=False))
    else:
        click.echo(f"memsync: {err.message}", err=True)
    sys.exit(err.exit_code)


def warn_ignored_sources(cfg: config_mod.Config) -> None:
    """Say on stderr which configured sources are left out, where indexing would otherwise
    quietly skip them."""
    for left_out in cfg.ignored_sources:
        click.echo(f"memsync: warning: {cfg.ignored_problem(left_out)}", err=True)


def warn_empty_vault(cfg: config_mod.Config) -> None:
    """Loudly, for a long-running process: it serves an empty vault while another has cards, or
    memsync's own empty folder because `memsync init` never named the vault."""
    from memsync.onboard import has_notes
    from memsync.store.vaults import empty_vault_warning

    warning = empty_vault_warning(cfg)
    if not warning and cfg.not_set_up() and not has_notes(cfg.vault.path):
        warning = (f"memsync is not set up here yet, so this serves memsync's own empty folder "
                   f"{cfg.vault.path}: stop it and run `memsync init`, which asks which folder is "
                   "your vault")
    if warning:
        click.secho(f"memsync: WARNING: {warning}", err=True, fg="yellow", bold=True)


def warn_semantic_unavailable(cfg: config_mod.Config) -> None:
    """A watcher started where config.json asks for a model that is not installed."""
    problem = cfg.semantic_problem()
    if problem:
        from ..semantic import install_hint

        click.echo(f"memsync: warning: {problem}; {install_hint()}", err=True)


def not_a_folder(path) -> str:
    """Why a path given for a folder is not one, in a few words."""
    return "not a folder" if os.path.lexists(os.path.expanduser(path)) else "no such folder"


def waiting_note(cfg: config_mod.Config, progress=None):
    """What `memsync index` (and every command that catches the index up) says when it waits its
    turn behind another process's reindex of the same index (memsync.reindexlock): on stderr, on
    a line of its own past a progress bar."""

    def say(pid: int | None) -> None:
        by = f" (pid {pid})" if pid else ""
        click.echo(("\n" if progress else "") + f"memsync: waiting for another reindex of {cfg.db.path}"
                   f"{by} to end; this one then indexes what is left (Ctrl-C stops waiting)", err=True)

    return say


FINISHING = "finishing"


@contextmanager
def progress_bar(label: str, enabled: bool = True, unit: str = "files"):
    """A progress callback `(done, total)` drawing a bar on stderr when it is a terminal, else
    None: done/total, the rate in `unit`s per second and the time left. Once every item is done
    the bar says FINISHING until the block ends: a rebuild still settles links, makes indexes,
    merges and commits then (9 s at 100,000 cards), which a bar standing full would hide. Leaving
    the block ends the bar's line with the overall rate and shows the cursor again, so whatever
    is printed next starts on a line of its own; a block that ends normally has done its work,
    so its bar ends full even when there was nothing to do (no bar is left standing at 0 %).
    A report of nothing done, while the bar still stands at 0, starts the rate's clock over: a
    reindex makes one once its turn is taken (api.reindex), so a wait for another's is not counted."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    import time

    started = time.monotonic()

    def rate(done: int) -> str | None:
        elapsed = time.monotonic() - started
        return f"{done / elapsed:,.1f} {unit}/s" if done and elapsed > 0 else None

    with click.progressbar(length=1, label=label, file=sys.stderr, show_pos=True,
                           item_show_func=lambda item: item) as bar:

        def show(done: int, item: str | None) -> None:
            step = done - bar.pos
            bar.update(step, item)
            if not step:  # click draws only on a step; the item changed all the same
                bar.render_progress()

        def progress(done: int, total: int) -> None:
            nonlocal started
            if not done and not bar.pos:  # the work begins now: what came before was waiting
                started = time.monotonic()
            bar.length = max(total, 1)
            show(done, FINISHING if total and done >= total else rate(done))

        yield progress
        show(bar.length or 1, rate(bar.pos))  # length is set: 1, then each total


# A command may answer its own errors (ctx.meta): `brief --hook` must exit 0 whatever happens.
ON_ERROR = "memsync.on_error"


def command(group: click.Group, name: str, **kwargs):
    """Register a command with a `--json` flag and the one place errors become exit codes."""

    def wrap(fn):
        @group.command(name, **kwargs)
        @click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
        @click.pass_obj
        @functools.wraps(fn)
        def run(obj: Context, as_json: bool, **params):
            try:
                _refuse_undecodable(params)
                return fn(obj, as_json, **params)
            except MemsyncError as err:
                on_error = click.get_current_context().meta.get(ON_ERROR)
                if on_error:
                    on_error(err.message)
                fail(err, as_json)

        return run

    return wrap


PATH_METAVARS = ("DIR", "FILE", "PATH")  # a file name need not be UTF-8; a text does


def _refuse_undecodable(params: dict) -> None:
    """A text argument the shell passed as bytes that are not UTF-8 (Python keeps them as lone
    surrogates) is refused by name: it could be neither searched, logged nor written to a card.
    File and folder arguments are let through: such names are valid on Linux."""
    from ..errors import BadArgument
    from ..pathnames import storable

    for param in click.get_current_context().command.params:
        if isinstance(param.type, click.Path) or param.metavar in PATH_METAVARS:
            continue
        value = params.get(param.name or "")
        for text in (value if isinstance(value, tuple) else (value,)):
            if isinstance(text, str) and not text.isascii() and not storable(text):
                what = (param.opts[0] if isinstance(param, click.Option)
                        else f"the {(param.metavar or param.name or '').strip('[].').lower()}")
                raise BadArgument(f"{what} is not UTF-8 text (bytes {os.fsencode(text)[:40]!r}); give "
                                  "it as UTF-8, as a terminal set to a UTF-8 locale types it")


GLOBAL_OPTIONS = ("--home", "--db", "--vault")


class MemsyncCommand(click.Command):
    """A global option given after the command (`memsync search x --vault DIR`) is answered
    with where it goes, and text that begins with a dash with how to pass it, not with click's
    bare "no such option"."""

    def parse_args(self, ctx, args):
        given = list(args)  # the parser consumes `args`
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as err:
            if err.option_name in GLOBAL_OPTIONS:
                # err.message is Final in click's types; replaced in place
                err.message = (f"{err.option_name} is a global option; global options go before "  # type: ignore[misc]
                               f"the command: {_moved(ctx.info_name, given, err.option_name)}")
            else:
                hint = self.dash_hint(ctx.info_name, err.option_name or "", given)
                if hint:
                    err.message = f"{err.message.rstrip('.')}. {hint}"  # type: ignore[misc]
            raise

    def dash_hint(self, name: str, option: str, given: list[str]) -> str | None:
        """What to say of an unknown `option`: text with a space that begins with a dash (a
        Markdown list item given as a body) was meant as a value, not as an option."""
        if any(" " in arg and arg.startswith(option) for arg in given):
            return f"A value that begins with '-' goes after `--`, which ends the options: memsync {name} … -- '- …'"
        return None


def _moved(name: str, args: list[str], option: str) -> str:
    """The command line with `option` (and its value) moved in front of the command."""
    rest, value, i = [], None, 0
    while i < len(args):
        arg = args[i]
        if arg == option and value is None:
            value = args[i + 1] if i + 1 < len(args) else "DIR"
            i += 2
            continue
        if arg.startswith(option + "=") and value is None:
            value = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return " ".join(["memsync", option, value or "DIR", name, *rest])


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (COMMANDS below), so `memsync
    search` loads neither the write side nor the watcher's logging; help, completion and an
    unknown name load them all."""

    def _load(self, modules) -> None:
        for module in modules:
            importlib.import_module(f"{__name__}.{module}")

    def parse_args(self, ctx, args):
        given = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:
            # `memsync --home HOME brief --hook CLIENT`, as a hook writes it, refused before
            # `brief` could answer: a client may take exit 2 as a block, so brief answers here.
            if "brief" in given:
                from .brief import FIX_THE_HOOK, answer_nothing, asked_for

                if asked_for(given[given.index("brief"):]):
                    answer_nothing(ctx, f"{err.format_message().rstrip('.')}; {FIX_THE_HOOK}")
            raise

    def get_command(self, ctx, name):
        if name not in self.commands:
            self._load([MODULE_OF[name]] if name in MODULE_OF else COMMANDS)
        return super().get_command(ctx, name)

    def list_commands(self, ctx):
        self._load(COMMANDS)
        return super().list_commands(ctx)


LazyGroup.command_class = MemsyncCommand


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", metavar="DIR", help="Data home (default ~/.memsync; env MEMSYNC_HOME).")
@click.option("--db", metavar="FILE", help="Index file (env MEMSYNC_DB).")
@click.option("--vault", metavar="DIR", help="Vault folder (env MEMSYNC_VAULT).")
@click.version_option(package_name="memsync")
@click.pass_context
def main(ctx: click.Context, home, db, vault):
    """memsync: one live, local, searchable index over your agents' memories.

    \b
    Example:
      memsync index && memsync search nginx
    """
    ctx.obj = Context(home, db, vault)


# The modules that define commands and the commands each defines, imported when a command of
# theirs runs (LazyGroup): a new command goes here.
COMMANDS = {
    "read": ("paths", "index", "search", "show", "stats"),  # the fast path, loaded alone
    "write": ("capture", "update", "supersede", "delete"),
    "bench": ("bench",),
    "serve": ("mcp",),  # the SDK loads inside the command
    "watch": ("watch",),
    "sources": ("sources",),
    "init": ("init",),
    "service": ("service",),
    "doctor": ("doctor",),
    "lifecycle": ("log", "feedback", "audit", "consolidate"),
    "brief": ("brief",),  # run by session-start hooks: as light as read
    "hooks": ("hooks",),
}
MODULE_OF = {name: module for module, names in COMMANDS.items() for name in names}

