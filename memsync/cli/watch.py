"""`memsync watch`: keep the index live in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import faulthandler
import logging
import signal
import sys

import click

from . import (
    Context,
    command,
    emit,
    main,
    waiting_note,
    warn_empty_vault,
    warn_semantic_unavailable,
)


@command(main, "watch")
@click.option("-v", "--verbose", count=True, help="-v: one line per batch; -vv: every event.")
@click.option("--allow-mass-removal", is_flag=True,
              help="Catch up even if a source lost most (or all) of its files since the last index.")
def watch(obj: Context, as_json: bool, verbose: int, allow_mass_removal: bool):
    """Watch the vault and the sources, and keep the index up to date as files change.

    Changes made while no watcher ran are picked up at start. Sources added or removed
    (`memsync sources`, or config.json edited) are followed within seconds. One watcher
    per data home; a second one exits with status 2 and names the process that holds the lock.

    \b
    Example:
      memsync watch -v      # beside Obsidian; Ctrl-C stops it with every change applied
    """
    from ..watch import Watcher  # watchdog is imported only here, never on the read path

    _log_to_stderr(verbose)
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>` prints every thread's stack
    cfg = obj.cfg
    from .. import api

    if allow_mass_removal:  # confirmed: catch up now, so the watcher starts from the disk as it is
        api.reindex(cfg, allow_mass_removal=True, waiting=waiting_note(cfg))
    else:
        api.check_removal(cfg)  # an unmounted or unsynced folder stops us here, cards kept
    from ..semantic.background import idle_work
    from ..store.index import Index

    # first the index's own upkeep (a bulk load's segment merged up), then embeddings
    watcher = Watcher(cfg, idle_work=[Index.settle_segments, *idle_work(cfg)])
    # Block SIGTERM/SIGINT before any thread exists (threads inherit the mask) and take them
    # with sigwait: no Python signal handler runs at an arbitrary point, so none can deadlock.
    stops = {signal.SIGTERM, signal.SIGINT}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        watcher.start()
        watched = ", ".join(f"{s.name} {s.root}" for s in watcher.cfg.sources)
        click.echo(f"memsync: watching {watched} (index {cfg.db.path}); Ctrl-C to stop", err=True)
        # (sources config.json names but leaves out: said once by the watcher's log)
        warn_empty_vault(watcher.cfg)
        warn_semantic_unavailable(watcher.cfg)
        signal.sigwait(stops)
        click.echo("memsync: stopping; applying pending changes", err=True)
    finally:
        watcher.stop()
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    totals = watcher.totals
    emit(
        {"status": "stopped", "batches": watcher.batches, **totals.to_dict()},
        as_json,
        lambda d: f"stopped after {d['batches']} batches: +{d['added']} ~{d['updated']} "
        f"-{d['removed']} moved {d['moved']}",
    )


def _log_to_stderr(verbose: int) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    logger = logging.getLogger("memsync")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
