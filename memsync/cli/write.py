"""Write-side commands: capture, update, supersede, delete.

Each makes one memsync.write.vault call. The vault module (and with it YAML and the rules) is imported
inside the commands, so the read path never loads it. The exit status comes from the result:
0 written or nothing to do, 1 rejected by a rule, 3 title conflict refused.
"""

from __future__ import annotations

import sys

import click

from .. import output
from ..errors import BadArgument
from ..model import KIND_FOLDERS
from . import CARD_ID, Context, command, complete, emit, main


class KindChoice(click.Choice):
    """The kinds, except that a blank one is passed on for the library to refuse: click said
    only that '' is none of them, where the library also says what leaving --kind out does."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            return value
        return super().convert(value, param, ctx)


KINDS = KindChoice(list(KIND_FOLDERS))


def _done(result: dict, as_json: bool) -> None:
    from memsync.write import vault

    emit(result, as_json, output.write_result)
    code = vault.exit_code_for(result)
    if code:
        sys.exit(code)


def _body_from_stdin() -> str:
    stream = sys.stdin
    if stream is None or stream.isatty():
        raise BadArgument("give the body with --body, or pipe it in: echo '...' | memsync capture --title T")
    raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadArgument(f"the body piped in is not UTF-8 text (byte {raw[err.start]:#04x} at offset "
                          f"{err.start}); convert it first, e.g. iconv -f GBK -t UTF-8 notes.txt | "
                          "memsync capture --title T") from None


def _one_body(option: str | None, argument: str | None) -> str:
    """The body given as --body, or as the command's last argument, or else piped in."""
    if option is not None and argument is not None:
        raise BadArgument("give the body once: as --body or as the last argument, not both")
    given = option if option is not None else argument
    return given if given is not None else _body_from_stdin()


def _tags(given: tuple[str, ...]) -> list[str] | None:
    """--tags a,b, --tags '[a, b]' and --tags a --tags b (or a mix) give the same list; none given
    means unchanged."""
    from memsync.write.rules import tag_items

    return None if not given else [t for value in given for t in tag_items(value)]


@command(main, "capture")
@click.argument("text", metavar="[BODY]", required=False)
@click.option("--title", required=True, help="Short, specific title; it also names the file.")
@click.option("--body", help="The fact, in Markdown (at least 20 characters); or give it as BODY, or pipe it in.")
@click.option("--kind", type=KINDS, help="Card kind; picks the folder. Default: knowledge.")
@click.option("--tags", multiple=True, help="Tags: nginx,ops (or 部署，网络), or --tags again for each one.")
@click.option("--on-conflict", type=click.Choice(["suffix", "reject"]), default="suffix",
              show_default=True, help="Same title, other body: save as -2, or refuse (exit 3).")
@click.option("--reject-secrets", is_flag=True, help="Refuse the card if it seems to hold credentials (exit 1).")
@click.option("--summary", help="One line saying what the card holds; search shows it instead of a body window.")
def capture(obj: Context, as_json: bool, text, title, body, kind, tags, on_conflict, reject_secrets,
            summary):
    """Write a new card to the vault and index it right away.

    The same title and body again changes nothing. A different body under an existing title is
    saved beside it as -2 and reported (conflict: true).

    \b
    Example:
      memsync capture --title "nginx 站点根目录" --body "ecs-prod 上 nginx 的站点根目录是 /srv/www" --tags nginx,ops
      memsync capture --title "backup schedule" "the backup job runs at 02:00 on ecs-prod"
      git log -1 --format=%B | memsync capture --title "release notes 2.1" --kind project
    """
    from memsync.write import vault

    body = _one_body(body, text)
    _done(vault.capture(obj.cfg, title, body, kind=kind, tags=_tags(tags),
                        on_conflict=on_conflict, reject_secrets=reject_secrets, summary=summary),
          as_json)


@command(main, "update")
@click.argument("card_id", type=CARD_ID)
@click.option("--title", help="New title (the file keeps its name).")
@click.option("--body", help="New body, at least 20 characters. Never read from stdin.")
@click.option("--tags", multiple=True, help="New tags: nginx,ops, or --tags again for each ('' clears them).")
@click.option("--priority", help="Free-form priority, e.g. 5 or high ('' clears it).")
@click.option("--ttl", help="How long the fact stays relevant, e.g. 30d ('' clears it).")
@click.option("--kind", shell_complete=complete.kinds,
              help="Refused: supersede into the new kind, then delete the old card.")
@click.option("--summary", help="One line saying what the card holds ('' clears it).")
def update(obj: Context, as_json: bool, card_id, title, body, tags, priority, ttl, kind, summary):
    """Correct a card in place (the fact was wrong). Only the given fields change.

    If the fact was right but has changed since, use `supersede` so the old state stays
    findable with --as-of.

    \b
    Example:
      memsync update 1234567 --body "ecs-prod 上 nginx 的站点根目录是 /srv/www/html"
      memsync update 1234567 --tags nginx,ops,prod --priority 5
    """
    from memsync.write import vault

    _done(vault.update(obj.cfg, card_id, title=title, body=body, tags=_tags(tags),
                       priority=priority, ttl=ttl, kind=kind, summary=summary), as_json)


@command(main, "supersede")
@click.argument("card_id", type=CARD_ID)
@click.option("--title", required=True, help="Title of the new card.")
@click.option("--body", help="The fact as it is now (at least 20 characters). Read from stdin if absent.")
@click.option("--kind", type=KINDS, help="Kind of the new card (default: the old card's).")
@click.option("--tags", multiple=True, help="Tags of the new card (default: the old card's; '' for none).")
@click.option("--priority", help="Priority of the new card (default: the old card's; '' for none).")
@click.option("--ttl", help="TTL of the new card (default: the old card's; '' for none).")
@click.option("--summary", help="One line saying what the card holds; search shows it instead of a body window.")
def supersede(obj: Context, as_json: bool, card_id, title, body, kind, tags, priority, ttl, summary):
    """Record that a fact changed: write a new card, mark the old one no longer valid.

    Both happen or neither does. Searches then show the new card; `--as-of` an earlier day
    and `show` of the old id still give the old one. The new card keeps the old one's tags,
    priority and other frontmatter fields unless given here, but not its summary.

    \b
    Example:
      memsync supersede 1234567 --title "ECS 部署地址" --body "已迁到 10.0.0.9，端口 9090，旧地址停用"
    """
    from memsync.write import vault

    if body is None:
        body = _body_from_stdin()
    _done(vault.supersede(obj.cfg, card_id, title, body, kind=kind, tags=_tags(tags),
                          priority=priority, ttl=ttl, summary=summary), as_json)


def _confirm_purge_all(obj: Context) -> None:
    """Emptying the trash for good, the one thing memsync destroys, is asked first on a
    terminal, with the count at stake. Where nobody can be asked (a script, an agent's shell)
    it is refused without --yes: running the command is not consent to a loss it never named."""
    from ..write import trashsize

    count = trashsize.usage(obj.cfg.ensure_vault()).files
    if not count:
        return
    if not (sys.stdin and sys.stdin.isatty()):
        raise BadArgument(
            f"--purge --all deletes the {count} file(s) in the trash for good, and there is no "
            "terminal to ask on; run it again with --yes to do so (restore what you want to keep "
            "first: `memsync delete --restore PATH`)")
    if not click.confirm(f"delete the {count} file(s) in the trash for good? this "
                         "cannot be undone", default=False, err=True):
        click.echo("memsync: nothing was deleted", err=True)
        raise click.exceptions.Exit(1)


@command(main, "delete")
@click.argument("card_id", type=CARD_ID, required=False)
@click.option("--restore", "restore_path", metavar="PATH", help="Move a file from the trash back to its place.")
@click.option("--force", is_flag=True, help="With --restore: first move a file in the way to the trash.")
@click.option("--purge", "purge_path", metavar="PATH", is_flag=False, flag_value="",
              help="Delete a file in the trash for good (clears its read stats).")
@click.option("--all", "purge_everything", is_flag=True, help="With --purge: empty the whole trash.")
@click.option("--yes", is_flag=True, help="With --purge --all: do not ask first (on a terminal it asks; "
              "with no terminal it is refused without --yes).")
def delete(obj: Context, as_json: bool, card_id, restore_path, force, purge_path, purge_everything, yes):
    """Move a card to the vault's .trash/ (undoable), restore it, or purge the trash.

    PATH is the file's path in the trash, with or without the leading `.trash/`.

    \b
    Example:
      memsync delete 1234567
      memsync delete --restore 03-Knowledge/nginx-站点根目录.md
      memsync delete --purge .trash/03-Knowledge/nginx-站点根目录.md
      memsync delete --purge --all        # asks on a terminal; elsewhere needs --yes
    """
    from memsync.write import vault

    modes = [card_id is not None, restore_path is not None, purge_path is not None]
    if sum(modes) != 1:
        raise BadArgument("give exactly one of: a card ID, --restore PATH, --purge PATH, --purge --all")
    if force and restore_path is None:
        raise BadArgument("--force only goes with --restore PATH")
    if purge_everything != (purge_path == ""):
        raise BadArgument("use --purge PATH for one file, or --purge --all to empty the trash")
    if card_id is not None:
        result = vault.delete(obj.cfg, card_id)
    elif restore_path is not None:
        result = vault.restore(obj.cfg, restore_path, force=force)
    elif purge_everything:
        if not yes:
            _confirm_purge_all(obj)
        result = vault.purge_all(obj.cfg)
    else:
        result = vault.purge(obj.cfg, purge_path)
    _done(result, as_json)
