"""`memsync init`: set this machine up in one command, and print how to connect the agents."""

from __future__ import annotations

import select
import sys
from pathlib import Path

import click

from .. import api, clients, configjson, discover, obsidian_vaults, onboard
from .. import config as config_mod
from .. import sources as sources_mod
from ..errors import BadArgument, MemsyncError
from ..store import vaults
from . import Context, command, emit, main, progress_bar, waiting_note

# ctx.meta: a question was put to stdin; stdin gave out, so nothing more is asked; that was said
ASKED, NO_ANSWERS, SAID = "memsync.init.asked", "memsync.init.no_answers", "memsync.init.said"
NO_ANSWERS_SAID = ("memsync: stdin is closed or at its end, so init asks nothing: the agent memory "
                   "files and session hooks it finds are left out, and not remembered as declined. "
                   "`memsync init --yes` adds them all; `memsync init` on a terminal asks about each")


def _at_end_of_input() -> bool:
    """Nobody can answer a question: no stdin, or one at its end (`< /dev/null`, a pipe its
    writer closed). A terminal always can, and so can a pipe with nothing in it yet (someone
    may still write): only input ready to read is peeked at, which takes nothing, so a piped
    answer stays for the question. A stream with no descriptor to look at (a test runner's),
    or where select() cannot (Windows), is asked, as before."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return True
    if stream.isatty():
        return False
    peek = getattr(getattr(stream, "buffer", None), "peek", None)
    try:
        ready = select.select([stream.fileno()], [], [], 0)[0]
    except (OSError, ValueError):
        return False
    if not ready or peek is None:
        return False
    try:
        return not peek(1)
    except (OSError, ValueError):  # a stdin that cannot be read
        return True


def _nobody_to_ask() -> bool:
    """Looked at before the first question only: once one was answered, the text layer above
    stdin may hold the next answers already, so an empty stdin says nothing; a question that
    then meets the end of input says so itself (_answer)."""
    meta = click.get_current_context().meta
    return bool(meta.get(NO_ANSWERS)) or (ASKED not in meta and _at_end_of_input())


def _answer(question, say: bool = True):
    """The answer `question()` gets; None when nobody can answer (no terminal, stdin closed or
    at its end): nothing is asked after that, and `say` says so once (the vault's question
    does not: init then refuses, saying what to run). Ctrl-C stops init instead: click raises
    Abort for both, from the EOFError or the KeyboardInterrupt it caught, so the interrupt is
    told apart by what the Abort came from."""
    meta = click.get_current_context().meta
    if not _nobody_to_ask():
        meta[ASKED] = True
        try:
            return question()
        except click.Abort as exc:
            click.echo(err=True)  # end the question's line
            if isinstance(exc.__context__, KeyboardInterrupt):
                raise
    meta[NO_ANSWERS] = True
    if say and not meta.get(SAID):
        meta[SAID] = True
        click.echo(NO_ANSWERS_SAID, err=True)
    return None


def _ask(found) -> bool | None:
    """One question per source found; None for no answer (no terminal, end of input), which
    adds nothing and is not remembered as a no."""
    s = found.source
    return _answer(lambda: click.confirm(f"Found {found.what} in {s.root}. Add it as the "
                                         f"read-only source {s.name!r}?", default=True, err=True))


def _choose_vault(choices: list[tuple[Path, str]]) -> Path | None:
    """Ask which folder is the vault; None when there is no answer (end of input)."""
    click.echo("Which folder is your vault? memsync indexes its notes (and writes the cards "
               "agents capture there):", err=True)
    for n, (path, what) in enumerate(choices, 1):
        click.echo(f"  {n}  {path}  ({what})", err=True)
    while True:
        answer = _answer(lambda: click.prompt("Number, or the path of another folder",
                                              default="1", err=True).strip(), say=False)
        if answer is None:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1][0]
        folder = Path(answer).expanduser()
        if folder.is_dir():
            return folder.absolute()
        click.echo(f"{answer} is neither a number from the list nor a folder", err=True)


def _named_folder(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Path | None:
    """An empty --vault is refused: click would take it for the current folder, and a script's
    `--vault "$VAULT"` with the variable unset would then index wherever it ran (the home folder,
    say) and remember that as the vault."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty path; give the vault's folder (an unset variable?)")
    return Path(value) if value is not None else None


@command(main, "init")
@click.option("--vault", "vault_dir", metavar="DIR", callback=_named_folder,
              type=click.Path(file_okay=False),
              help="The vault to use from now on (default: asks, offering Obsidian's vaults; "
                   "with no answer to give, as from a script, memsync's own folder if no Obsidian "
                   "vault is on offer, else init refuses and sets up nothing).")
@click.option("-y", "--yes", is_flag=True,
              help="Ask nothing: take the last opened Obsidian vault (else the folder in effect), "
                   "add every agent memory file found, and install the session hook of every client found "
                   "(not those declined before).")
@click.option("--ask-again", is_flag=True,
              help="Offer again the agent memory files and session hooks declined before.")
def init(obj: Context, as_json: bool, vault_dir, yes, ask_again):
    """Set memsync up: data home, vault in config.json, agent memory sources, a first index.

    Without --vault, and before a vault is configured, it asks which folder is the vault,
    offering the vaults Obsidian knows (its obsidian.json) and the folder in effect; where
    nobody can answer (stdin closed or at its end, --json) it takes memsync's own folder when no
    Obsidian vault is on offer, and otherwise writes nothing and says which --vault to pass. Every later command, `memsync watch` and MCP
    servers started by desktop apps then use the same vault without env vars. It also looks for
    the memory files agents keep on this machine (~/.claude, ~/.gemini/GEMINI.md,
    ~/.codex/AGENTS.md or AGENTS.override.md, a memory.jsonl or memory.json, and AGENTS.md /
    CLAUDE.md / .claude/rules / .cursor/rules or .cursorrules in the current folder) and offers each as a read-only source; what you
    decline is not asked again. With stdin closed or at its end it asks nothing and says once
    what to run instead.
    Ends with the MCP set-up for Claude Code, Claude Desktop and Cursor, ready to paste. Safe to
    run again.

    \b
    Example:
      memsync init --vault ~/Obsidian/Main
      memsync init --yes        # the last opened Obsidian vault, every source found
    """
    cfg = obj.cfg
    target = vault_dir or (cfg.vault.path if cfg.vault.origin in ("cli", "env") else None)
    notes: list[str] = []
    obsidian = None  # Obsidian's vaults (obsidian.json), read once: for the choices, then the note
    if target is None and cfg.configured_vault is None:
        obsidian = obsidian_vaults.installed(Path.home())
        choices = onboard.vault_choices(cfg, obsidian)
        if yes:
            target = choices[0][0]
        elif not as_json and not _nobody_to_ask():  # else no_vault_chosen says what to run
            target = _choose_vault(choices)
        if target is None and len(choices) == 1:
            # Nothing to choose between (no Obsidian vault): the folder in effect, as Enter
            # takes it, so `make run` or a script sets memsync up without a terminal.
            target = choices[0][0]
            notes.append(onboard.only_choice_taken(target))
        if target is None:  # no answer: a vault nobody chose would be remembered for good
            raise BadArgument(onboard.no_vault_chosen(choices))
    cfg, changes = onboard.set_vault(cfg, target)
    offered: list[str] = []
    added, declined, skipped = [], [], 0
    said_no = configjson.declined(cfg.config_file)
    for found in discover.offers(Path.home(), Path.cwd(), (*cfg.sources, *cfg.listed_sources)):
        entry = onboard.offer_dict(found)
        key = onboard.declined_key(entry)
        if key in said_no and not ask_again:
            skipped += 1
            continue
        answer = True if yes else (None if as_json else _ask(found))
        if answer:
            sources_mod.add(cfg, found.source.name, found.source.adapter, found.source.root)
            changes.append(f"added {found.what} as the read-only source {found.source.name!r}")
            added.append(entry)
            cfg = config_mod.reload(cfg)
        else:
            declined.append(entry)
        if answer is not None:
            configjson.remember_answer(cfg.config_file, key, answer)
    with progress_bar("indexing", enabled=not as_json) as progress:
        report = api.reindex(cfg, progress=progress, waiting=waiting_note(cfg, progress))
    change = onboard.index_changed(report)
    if change:
        changes.append(change)
    if skipped:
        notes.append(f"{skipped} agent memory source(s) you declined before were not offered "
                     "again (`memsync init --ask-again` offers them)")
    empty = onboard.empty_vault_note(cfg.vault.path)
    if empty:  # name Obsidian's other vaults with the note: the notes may be there
        notes.append(empty)
        if obsidian is None:  # the vault was named: nothing was offered
            obsidian = obsidian_vaults.installed(Path.home())
        offered = [str(v.path) for v in obsidian if not vaults.same_folder(v.path, cfg.vault.path)]
        notes += onboard.obsidian_notes(offered)
    mcp = clients.snippets(clients.installed_command(), cfg.home.path)
    data = onboard.summary(cfg, changes, report, mcp, added, declined, notes, offered)
    data["hooks"], hooks_skipped = _hooks(cfg, yes, as_json, ask_again)
    if hooks_skipped:
        data["notes"].append(f"{hooks_skipped} session hook(s) you declined before were not "
                             "offered again (`memsync init --ask-again` offers them)")
    emit(data, as_json, onboard.render)


def _hooks(cfg, yes: bool, as_json: bool, ask_again: bool) -> tuple[list[dict], int]:
    """The session-start hook of each agent found in the home: installed with --yes or a yes;
    one declined before is not offered again. Also how many were not offered for that."""
    from .. import hooks

    said_no = configjson.declined(cfg.config_file)
    out, skipped = [], 0
    for name in hooks.detected(Path.home()):
        try:
            found = hooks.status(name, Path.home(), None)
            key = {"hook": name, "settings": found["settings"]}
            answer = None
            if found["status"] != "installed":
                if key in said_no and not ask_again:
                    skipped += 1
                else:
                    answer = True if yes else (None if as_json else _ask_hook(found))
            if answer:
                command_line = hooks.hook_command(clients.installed_command(), cfg.home.path, name)
                found = hooks.install(name, command_line, Path.home(), None)
            if answer is not None:
                configjson.remember_answer(cfg.config_file, key, answer)
        except MemsyncError as exc:  # one client's broken settings: the rest of the set-up stands
            out.append({"client": name, "status": "not installed", "problem": exc.message,
                        "install": f"memsync hooks install {name}"})
            continue
        out.append({"client": name, "status": "installed" if found["status"] != "not installed" else found["status"],
                    "settings": found["settings"], "install": f"memsync hooks install {name}"})
    return out, skipped


def _ask_hook(found: dict) -> bool | None:
    return _answer(lambda: click.confirm(
        f"Start every {found['title']} session with the memsync brief (a SessionStart hook in "
        f"{found['settings']}, backed up first)?", default=True, err=True))
