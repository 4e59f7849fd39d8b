#!/usr/bin/env bash
# Set up the closest peer, basic-memory, in its own venv for bench/perf.py.
# basic-memory needs Python >= 3.12; without one this exits 3 with a note (the bench then
# records the peer as skipped). Usage: bench/peers/setup_basic_memory.sh [PYTHON]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv-basic-memory"

pick_python() {
    # An explicit argument, then interpreters on PATH, then any pyenv-installed version
    # (pyenv shims for versions that are installed but not selected fail when run: skip them).
    local roots=""
    command -v pyenv >/dev/null 2>&1 && roots="$(pyenv root 2>/dev/null)/versions/*/bin/python3"
    for candidate in "${1:-}" python3.14 python3.13 python3.12 python3 $roots; do
        [ -n "$candidate" ] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

if ! python="$(pick_python "${1:-}")"; then
    echo "basic-memory needs Python >= 3.12 and none was found on PATH;" >&2
    echo "install one (e.g. a python3.12 package) and re-run, or pass its path as the argument." >&2
    exit 3
fi
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet basic-memory
"$venv/bin/basic-memory" --version
echo "basic-memory installed in $venv"
