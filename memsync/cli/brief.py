"""`memsync brief`: what an agent should know when it starts work in a project (memsync.brief).
Kept light like `memsync search`: a session-start hook runs it before every session."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from memsync.brief import DEFAULT_BUDGET, make
from memsync.brief.hookrun import CLIENTS, asked_for, refusal, run
from memsync.errors import BadArgument

from . import ON_ERROR, Context, MemsyncCommand, command, emit, main, not_a_folder

FIX_THE_HOOK = ("fix the hook's command in the client's settings, or write it again with "
                "`memsync hooks install CLIENT`")


def answer_nothing(ctx: click.Context, reason: str) -> NoReturn:
    """A hook run that cannot brief: the empty answer every client takes, the reason on stderr
    and exit 0. A client takes exit 2, a usage error's, as a failed hook (Gemini CLI: a block)."""
    click.echo(refusal(reason), err=True)
    click.echo("{}")
    ctx.exit(0)


class HookCommand(MemsyncCommand):
    """`memsync brief`, whose command line click refuses (`--budget abc`, an option this memsync
    does not know) with exit 2, unless it asks for hook mode: that run answers nothing instead."""

    def parse_args(self, ctx, args):
        hook = asked_for(list(args))
        if hook:  # an argument refused after parsing too (memsync.cli.command)
            ctx.meta[ON_ERROR] = lambda message: answer_nothing(ctx, f"{message}; {FIX_THE_HOOK}")
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:
            if not hook:
                raise
            answer_nothing(ctx, f"{err.format_message().rstrip('.')}; {FIX_THE_HOOK}")


@command(main, "brief", cls=HookCommand)
@click.option("--project", "directory", metavar="DIR",
              help="The project's folder (default: the current directory; its git root counts).")
@click.option("--budget", type=int, default=DEFAULT_BUDGET, show_default=True,
              help="At most this many tokens (CJK character = 1, other text = 4 characters a token).")
# Not a click.Choice: an unknown client (a later memsync's) is told apart from a broken line, and
# its line on stderr names the clients this memsync knows.
@click.option("--hook", metavar="CLIENT",
              help=f"Run as CLIENT's session-start hook ({', '.join(CLIENTS)}): read its JSON "
                   "on stdin, print the context it takes; always exits 0, within 2 s.")
@click.option("--peek", is_flag=True, help="Do not move this agent's last-brief mark.")
def brief(obj: Context, as_json: bool, directory, budget, hook, peek):
    """Print a short Markdown brief for an agent starting work here: this project's cards, what
    changed since the last brief, the most used cards, and how to search and save more.

    \b
    Example:
      memsync brief --project ~/code/shop --budget 800
      memsync hooks install claude-code   # then every session starts with it
    """
    if hook:
        from memsync.store import connection

        connection.SAY_WAITS = False  # this one-shot process says one line on stderr, its own
        # nor the config.json keys it ignores: on exit 0 the clients read stdout, and its stderr
        # reaches a log or the user's screen at each start, where no one can act on it;
        # `memsync doctor` names them
        out, problem, stuck = run(hook, lambda where: make(obj.loaded(warn=False), where, budget=budget,
                                                           agent=hook, record=not peek)["text"])
        if problem:
            click.echo(problem, err=True)
        click.echo(out)
        if stuck:  # a worker still waiting on the disk must not hold the agent
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        return
    if directory is not None and not Path(directory).expanduser().is_dir():
        raise BadArgument(f"--project {directory}: {not_a_folder(directory)}; give the project's folder "
                          "(or run `memsync brief` inside it)")
    data = make(obj.cfg, directory, budget=budget, record=not peek)
    emit(data, as_json, lambda d: d["text"].rstrip("\n"))
