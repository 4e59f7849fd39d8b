"""The `memsync` console script's first step, before click and the CLI load.

A short command such as `memsync search` spends most of its life importing: click, the stdlib
modules click and memsync need, and memsync's own modules, each of which allocates enough to
set off the cyclic collector every few hundred objects. None of what an import makes is garbage,
so those collections walk the growing heap of module objects for nothing (about 30 of them, 3-4 %
of a `memsync search` process's instructions). The collector is therefore off while the CLI
loads, and what the imports made is frozen out of its reach before it comes back on; the
command then runs with the collector as usual, so a long-running one (watch, mcp) still frees
its cycles.
"""

from __future__ import annotations

import gc


def entry() -> None:
    """Load the CLI with the collector off, then run it. Everything still alive at the end is
    frozen too, so the interpreter's shutdown collection has nothing to walk."""
    gc.disable()
    try:
        from memsync.cli import main
    finally:
        gc.freeze()
        gc.enable()
    try:
        main()
    finally:
        gc.freeze()
