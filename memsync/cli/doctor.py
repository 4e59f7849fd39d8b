"""`memsync doctor`: is the index sound? Exit 0 sound, 1 findings, 2 cannot check."""

from __future__ import annotations

import sys

import click

from ..output import plural, visible
from . import Context, command, emit, main, waiting_note


def human(result: dict) -> str:
    lines = []
    for done in result.get("fixed", []):
        lines.append(f"fixed: {done}")
    if result.get("not_fixed"):
        lines.append(result["not_fixed"])
    checked = result["checked"]
    if result["sound"]:
        lines.append(f"the index is sound ({plural(checked['cards'], 'card')} from "
                     f"{plural(checked['files'], 'file')} in {plural(checked['sources'], 'source')}"
                     " checked)")
        return "\n".join(lines)
    findings = result["findings"]
    lines.append(f"{plural(len(findings), 'finding')}:")
    for finding in findings:
        lines.append(f"✗ {finding['check']}: {visible(finding['message'])}")  # it may name a file
        lines.append(f"    fix: {finding['fix']}")
    return "\n".join(lines)


@command(main, "doctor")
@click.option("--fix", is_flag=True,
              help="Repair what lives in the index and the home (and memsync's own files in the vault); "
                   "never writes a note's or source's byte.")
@click.option("--finish-writes", is_flag=True,
              help="Also finish (or undo) an interrupted supersede, as the next write command would.")
@click.option("--fix-pairs", is_flag=True,
              help="Also edit vault cards whose supersede partner is gone, so they are valid again.")
def doctor(obj: Context, as_json: bool, fix: bool, finish_writes: bool, fix_pairs: bool):
    """Check the index: SQLite and full-text integrity, drift from the files, supersede pointers,
    interrupted writes, card problems, sources, the watcher lock and file permissions.

    \b
    Example:
      memsync doctor          # read-only; exit 1 lists each finding with its fix
      memsync doctor --fix    # re-sync drifted files, tighten permissions, ...
      memsync doctor --fix-pairs  # a card whose successor was deleted is valid again
    """
    from memsync.doctor import exam as doctor_mod  # reads files with the indexer: loads the parsers

    cfg = obj.loaded(warn=False)  # what config.json holds that memsync ignores is a finding
    result = doctor_mod.run(cfg, fix=fix, finish_writes=finish_writes, fix_pairs=fix_pairs,
                            waiting=waiting_note(cfg))
    emit(result, as_json, human)
    if not result["sound"]:
        sys.exit(1)
