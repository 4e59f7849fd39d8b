"""Crash safety, proven by killing real `memsync` processes (SIGKILL, at random moments) in the
middle of each kind of write, then checking what they left:

- the index opens and passes SQLite's and FTS5's integrity checks as the crash left it, and
  `doctor` runs, finding nothing a crash may not leave (drift, an interrupted supersede or
  migration, the dead watcher's lock);
- after the recovery every write command runs first and one `memsync index`, doctor finds
  nothing and the index equals a rebuild;
- every card is on disk whole or not at all, ids and read counts are kept, and a supersede is
  both cards or neither.

A short run is part of `make test`; `make stress` kills a few hundred times. Each run prints its
figures (kills, kills that landed mid-write, writes checked, errors).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from memsync import api, config, notes
from memsync.doctor import exam as doctor
from memsync.store import migrations
from memsync.store.health import integrity_problems
from memsync.store.index import Index
from memsync.write import supersede

from .conftest import MEMSYNC_BIN, write_card
from .helpers import snapshot

# Real processes killed at random moments: the default run's few dozen kills took 117 s on a
# loaded machine. The stress cases below carry their own, longer timeouts.
pytestmark = pytest.mark.timeout(600)

SEED = int(os.environ.get("MEMSYNC_CRASH_SEED", "1300"))
CRASH_LEFTOVERS = {"drift", "journal", "lock", "schema"}  # what a killed writer leaves the next run


def body(n: int, extra: str = "") -> str:
    return f"Card number {n} says the service s{n} listens on port {9000 + n}. {extra}".strip()


class Home:
    """A real data home and vault, with cards, ids and read counts to keep."""

    def __init__(self, vault: Path, cards: int):
        self.vault = vault
        for n in range(cards):
            write_card(vault, f"03-Knowledge/c{n:04d}.md", f"card {n}", body(n))
        self.cli("index")
        cfg = config.load()
        for card_id in self.ids().values():
            if card_id % 3 == 0:  # some cards have been read, some twice
                api.show(cfg, card_id)
                if card_id % 2:
                    api.show(cfg, card_id)

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([MEMSYNC_BIN, *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    def ids(self) -> dict[str, int]:
        with api.open_index(config.load()) as index:
            return {r["path"]: r["id"] for r in index.cards("vault")}

    def reads(self) -> dict[int, tuple]:
        with api.open_index(config.load()) as index:
            return {r[0]: (r[1], r[2]) for r in index._conn.execute("SELECT * FROM card_stats")}


class Tally:
    def __init__(self, name: str):
        self.name, self.counts = name, Counter()

    def report(self) -> str:
        figures = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return f"crash harness [{self.name}, seed {SEED}]: {figures}"


def kill_during(argv: list[str], delay: float) -> int:
    """Start `memsync argv` and SIGKILL it (with any worker it forked) after `delay` seconds;
    returns its exit status (negative: killed)."""
    proc = subprocess.Popen([MEMSYNC_BIN, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    assert "Traceback" not in err, err
    return proc.returncode


def duration(argv: list[str]) -> float:
    """How long the command takes here, unkilled (kill delays are drawn below it)."""
    started = time.perf_counter()
    subprocess.run([MEMSYNC_BIN, *argv], capture_output=True, timeout=120)
    return time.perf_counter() - started


# --- what every kill must leave ---------------------------------------------------------------

def check_as_left(tally: Tally) -> None:
    cfg = config.load()
    index = Index.existing(cfg.db.path)
    try:
        assert integrity_problems(index._conn) == []
    finally:
        index.close()
    result = doctor.run(cfg)
    kinds = {f["check"] for f in result["findings"]}
    assert kinds <= CRASH_LEFTOVERS, json.dumps(result["findings"], indent=1)
    tally.counts["left findings"] += len(result["findings"])


def recover_and_check(home: Home, before_ids: dict[str, int], before_reads: dict, tally: Tally,
                      moved: dict[str, str] | None = None) -> None:
    """The next write command's recovery, one `memsync index`, then: doctor is clean, the index
    equals a rebuild, ids and read counts are kept, every card file is whole."""
    cfg = config.load()
    supersede.recover(cfg)
    api.reindex(cfg)  # what `memsync index` runs (in-process: the kill was the real process)
    findings = [f for f in doctor.run(cfg)["findings"] if f["check"] != "lock"]
    assert findings == []
    with api.open_index(cfg) as index:
        incremental = snapshot(index)
    api.reindex(cfg, rebuild=True)
    with api.open_index(cfg) as index:
        assert snapshot(index) == incremental
    after = home.ids()
    for path, card_id in before_ids.items():
        path = (moved or {}).get(path, path)
        if path in after:
            assert after[path] == card_id, path
            tally.counts["ids checked"] += 1
    reads = home.reads()
    for card_id, stats in before_reads.items():
        assert reads.get(card_id) == stats, card_id
    for path in home.vault.rglob("*.md"):
        card = notes.parse(path.read_bytes(), path.name)
        assert card.problem is None and card.body.startswith("Card number"), path
        tally.counts["files checked"] += 1
    tally.counts["kills survived"] += 1


def cards_titled(vault: Path, title: str) -> list[Path]:
    return [p for p in vault.rglob("*.md") if ".trash" not in p.parts
            and notes.parse(p.read_bytes(), p.name).title == title]


# --- the operations -----------------------------------------------------------------------------

def crash_capture(home: Home, rng: random.Random, n: int, span: float, tally: Tally) -> None:
    title, text = f"captured {n}", body(10_000 + n, "captured before a crash")
    kill_during(["capture", "--title", title, "--body", text], rng.uniform(0, span))
    found = cards_titled(home.vault, title)
    assert len(found) <= 1
    if found:  # whole or not at all
        assert notes.parse(found[0].read_bytes(), found[0].name).body.strip() == text
        tally.counts["landed"] += 1
    tally.counts["writes checked"] += 1


def crash_update(home: Home, rng: random.Random, n: int, span: float, tally: Tally) -> None:
    path, card_id = rng.choice(sorted(home.ids().items()))
    before = notes.parse((home.vault / path).read_bytes(), path).body.strip()
    text = body(20_000 + n, "updated before a crash")
    kill_during(["update", str(card_id), "--body", text], rng.uniform(0, span))
    now = notes.parse((home.vault / path).read_bytes(), path).body.strip()
    assert now in (before, text)
    tally.counts["landed"] += now == text
    tally.counts["writes checked"] += 1


def crash_supersede(home: Home, rng: random.Random, n: int, span: float, tally: Tally) -> None:
    valid = [(p, i) for p, i in sorted(home.ids().items())
             if not notes.parse((home.vault / p).read_bytes(), p).superseded_by
             and not notes.parse((home.vault / p).read_bytes(), p).supersedes]
    old_rel, old_id = rng.choice(valid)
    title = f"superseding {n}"
    kill_during(["supersede", str(old_id), "--title", title, "--body", body(30_000 + n)],
                rng.uniform(0, span))
    supersede.recover(config.load())  # what the next write command does first
    new = cards_titled(home.vault, title)
    old = notes.parse((home.vault / old_rel).read_bytes(), old_rel)
    if new:  # both ...
        new_rel = new[0].relative_to(home.vault).as_posix()
        assert len(new) == 1 and old.superseded_by == new_rel and old.invalid_at
        assert notes.parse(new[0].read_bytes(), new_rel).supersedes == old_rel
        tally.counts["landed"] += 1
    else:  # ... or neither
        assert old.superseded_by is None and old.invalid_at is None
    tally.counts["writes checked"] += 1


def crash_restore(home: Home, rng: random.Random, n: int, span: float, tally: Tally) -> dict:
    path, card_id = rng.choice(sorted(home.ids().items()))
    home.cli("delete", str(card_id))
    trash = f".trash/{path}"
    kill_during(["delete", "--restore", trash], rng.uniform(0, span))
    back, parked = (home.vault / path).exists(), (home.vault / trash).exists()
    assert back != parked  # in exactly one place, whole
    tally.counts["landed"] += back
    tally.counts["writes checked"] += 1
    if parked:  # finish the restore by hand; the id must still come back
        home.cli("delete", "--restore", trash)
    return {}


def crash_rebuild(home: Home, rng: random.Random, n: int, span: float, tally: Tally) -> None:
    kill_during(["index", "--rebuild"], rng.uniform(0, span))
    tally.counts["writes checked"] += 1


def crash_migration(home: Home, rng: random.Random, n: int, span: float, tally: Tally) -> None:
    db = config.load().db.path
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 1")  # the next open re-runs m002 (re-tokenizes every card)
    conn.close()
    kill_during(["stats"], rng.uniform(0, span))
    conn = sqlite3.connect(db)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    # each migration commits on its own: a kill leaves the schema at any step, never between
    assert 1 <= version <= len(migrations.MIGRATIONS)
    tally.counts["landed"] += version == len(migrations.MIGRATIONS)
    tally.counts["writes checked"] += 1


def crash_watcher(home: Home, rng: random.Random, n: int, span: float, tally: Tally) -> None:
    proc = subprocess.Popen([MEMSYNC_BIN, "watch"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, text=True)
    line = proc.stderr.readline()
    while line and "memsync: watching" not in line:
        line = proc.stderr.readline()
    for k in range(40):  # a burst of new and changed cards, then a kill while it is indexed
        write_card(home.vault, f"02-Projects/w{n}-{k}.md", f"watched {n} {k}", body(40_000 + 100 * n + k))
    time.sleep(rng.uniform(0, span))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    tally.counts["writes checked"] += 40


OPS = {
    "capture": (crash_capture, ["capture", "--title", "timing", "--body", body(99_999)]),
    "update": (crash_update, None),
    "supersede": (crash_supersede, None),
    "restore": (crash_restore, None),
    "rebuild": (crash_rebuild, ["index", "--rebuild"]),
    "migration": (crash_migration, None),
    "watcher": (crash_watcher, None),
}


def spans(home: Home) -> dict[str, float]:
    """A kill window per operation: about as long as the operation takes unkilled."""
    write = duration(["capture", "--title", "timing", "--body", body(99_999)])
    for path in cards_titled(home.vault, "timing"):
        path.unlink()
    home.cli("index")
    rebuild = duration(["index", "--rebuild"])
    return {"capture": write, "update": write, "supersede": write * 1.3, "restore": write,
            "rebuild": rebuild, "migration": rebuild, "watcher": 0.6}


def run_harness(vault: Path, ops: dict[str, int], cards: int) -> Tally:
    home = Home(vault, cards)
    tally = Tally(", ".join(f"{op} x{k}" for op, k in ops.items()))
    window = spans(home)
    rng = random.Random(SEED)
    plan = [op for op, k in ops.items() for _ in range(k)]
    rng.shuffle(plan)
    for n, op in enumerate(plan):
        before_ids, before_reads = home.ids(), home.reads()
        OPS[op][0](home, rng, n, window[op], tally)
        check_as_left(tally)
        recover_and_check(home, before_ids, before_reads, tally)
        tally.counts[f"kills: {op}"] += 1
    print(tally.report())
    return tally


FEW = {"capture": 5, "update": 4, "supersede": 5, "restore": 4, "rebuild": 3, "migration": 3,
       "watcher": 3}
MANY = {op: 10 * k for op, k in FEW.items()}


@pytest.mark.parametrize("ops, cards", [
    pytest.param(FEW, 60, id="a-few-dozen"),
    pytest.param(MANY, 400, id="hundreds", marks=[pytest.mark.stress, pytest.mark.timeout(3600)]),
])
def test_kills_at_random_moments_leave_nothing_broken(vault, capsys, ops, cards):
    tally = run_harness(vault, ops, cards)
    assert tally.counts["kills survived"] == sum(ops.values())
    with capsys.disabled():
        print("\n" + tally.report())


# --- pulling the power ---------------------------------------------------------------------------

@contextlib.contextmanager
def frozen(pid: int):
    """The writer (and any worker it forked) stopped at this instant, going on afterwards."""
    os.killpg(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(pid, signal.SIGCONT)


def copy_index(db: Path, into: Path, keep_shm: bool) -> Path:
    """The index files as they are on disk (without the shared-memory file when `keep_shm` is
    false: it is lost with the power), with the rollback journal of a load into an empty index."""
    into.mkdir()
    for tail in ("", "-wal", "-journal", "-shm") if keep_shm else ("", "-wal", "-journal"):
        src = db.with_name(db.name + tail)
        if src.exists():
            shutil.copyfile(src, into / (db.name + tail))
    return into / db.name


def opened_whole(copy: Path) -> int:
    """Open a copy as the next process would; it must pass the integrity checks and hold every
    card with its file row. Returns how many cards it holds."""
    index = Index.existing(copy)
    try:
        assert integrity_problems(index._conn) == []
        count = index._conn.execute("SELECT count(*) FROM cards").fetchone()[0]
        files = index._conn.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        index.close()
    assert count == files
    return count


MAX_ROUNDS = 20  # a writer that never lasts through a copy would loop forever


def pull_the_power(vault: Path, tmp_path: Path, copies: int, cards: int, argv: list[str]) -> Counter:
    """Take `copies` copies of the index files at random moments while `memsync argv` indexes
    `cards` new cards, and open each one. The writer stays stopped while a copy is taken and
    checked, and runs again (over `cards` more) whenever it finishes first, so the count of
    copies does not depend on how fast this machine is at the moment."""
    home = Home(vault, 50)
    db = config.load().db.path
    rng = random.Random(SEED)
    tally = Counter()
    before = 50
    for round_ in range(MAX_ROUNDS):
        for n in range(cards):  # files the next `memsync index` reads, in batches of 500
            write_card(vault, f"04-Content/r{round_}/p{n:05d}.md", f"more {round_} {n}",
                       body(50_000 + n))
        after = before + cards
        tally["rounds"] += 1
        proc = subprocess.Popen([MEMSYNC_BIN, *argv], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            while tally["copies opened"] < copies:
                time.sleep(rng.uniform(0.02, 0.2))  # how far the writer gets before the next
                if proc.poll() is not None:
                    break
                k = tally["copies opened"]
                with frozen(proc.pid):
                    count = opened_whole(copy_index(db, tmp_path / f"copy{k}", keep_shm=bool(k % 2)))
                if "--rebuild" in argv:  # one transaction: all before or all after
                    assert count in (before, after)
                else:  # batches: each one whole
                    assert before <= count <= after
                tally["copies opened"] += 1
        finally:
            proc.wait(timeout=600)
        assert proc.returncode == 0, argv
        before = after
        if tally["copies opened"] == copies:
            break
    assert tally["copies opened"] == copies, dict(tally)
    home.cli("index")
    assert doctor.run(config.load())["sound"]
    return tally


def test_the_index_files_copied_mid_write_open_whole(vault, tmp_path, capsys):
    tally = pull_the_power(vault, tmp_path, copies=6, cards=1500, argv=["index", "--rebuild"])
    with capsys.disabled():
        print(f"\npower pulls: {dict(tally)}")


@pytest.mark.stress
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("argv", [["index", "--rebuild"], ["index"]])
def test_many_copies_mid_write_open_whole(vault, tmp_path, capsys, argv):
    tally = pull_the_power(vault, tmp_path, copies=60, cards=8000, argv=argv)
    with capsys.disabled():
        print(f"\npower pulls: {dict(tally)}")
