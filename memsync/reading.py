"""Looking at one file: stat it, and only when its signature says so, read, hash, parse and
tokenize it. No index access, so batches of looks can run in worker processes.

A look decides from the file's state at the moment it is taken, never from what an event said
happened to it; the indexer (memsync.sync) then applies looks to the index.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import stat
import threading
import time
from dataclasses import dataclass, field

import memsync.adapters as adapters
from memsync.store.fields import CardFields, card_fields

from .linkedfiles import target_stat
from .model.indexing import Card, Signature
from .pathnames import storable
from .sizes import MIB

MAX_FILE_BYTES = 8 * MIB
# A file modified this close to the moment we read it may change again within the same
# timestamp tick without its signature changing ("racily clean", as git calls it): re-hash it.
RACY_NS = 50_000_000
WORKER_NICENESS = 5  # added to a reader process's niceness (worker_start)


@dataclass
class Look:
    path: str
    state: str  # absent | too_large | bad_name | unreadable | unchanged | touched | content | unstable
    sig: Signature | None = None
    digest: str | None = None
    cards: list[Card] = field(default_factory=list)
    fields: list[CardFields] = field(default_factory=list)  # tokenized while reading
    hashed: bool = False
    read_at: int = 0  # time.time_ns() just before the content was read
    links: int = 1  # names the file has (st_nlink): more than one, and its other names changed too


def signature(st: os.stat_result) -> Signature:
    return Signature(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def unchanged(stored: tuple | None, sig: Signature) -> bool:
    """The stored signature still holds and is not racily clean (an empty hash: read again)."""
    return bool(stored and stored[1] and stored[0] == sig and stored[2] - sig.mtime_ns >= RACY_NS)


def current_signature(root: str, rel: str, adapter=None) -> Signature | None:
    """The signature of the regular file at rel now, or None when there is none (a link's
    target's where the `adapter` reads through links, memsync.linkedfiles)."""
    full = os.path.join(root, *rel.split("/"))
    try:
        st = os.lstat(full)
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(st.st_mode) and (linked := target_stat(adapter, full, rel)) is not None:
        st = linked
    return signature(st) if stat.S_ISREG(st.st_mode) else None


def size_cap(adapter, max_bytes: int) -> int:
    """The size over which a file of this adapter is not read: the indexer's `max_bytes`, or the
    adapter's own when larger (a file the user cannot split, memsync.adapters.base)."""
    return max(max_bytes, adapter.max_bytes or 0)


def look(root: str, adapter, max_bytes: int, rel: str, stored: tuple | None) -> Look:
    if not adapter.wants(rel):
        return Look(rel, "absent")
    full = os.path.join(root, *rel.split("/"))
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return Look(rel, "absent")  # a bad name renamed or deleted: its problem goes too
    except PermissionError:
        return Look(rel, "absent")  # in a folder we may not enter: a walk does not find it either
    restat = os.lstat
    if stat.S_ISLNK(st.st_mode):
        # read as its target where the adapter reads through links (memsync.linkedfiles)
        linked = target_stat(adapter, full, rel)
        if linked is None:
            return Look(rel, "absent")
        st, restat = linked, os.stat
    if not stat.S_ISREG(st.st_mode):
        return Look(rel, "absent")
    if not storable(rel):
        return Look(rel, "bad_name")
    sig = signature(st)
    if sig.size > size_cap(adapter, max_bytes):
        return Look(rel, "too_large", sig)
    if unchanged(stored, sig):
        return Look(rel, "unchanged", sig)
    if adapter.max_bytes:
        return _look_by_lines(full, adapter, rel, sig, stored, restat)
    read_at = time.time_ns()
    try:
        # The size the stat gave and one byte more, which a file still growing fills. Unbuffered:
        # a buffered read of max_bytes + 1 allocated 8 MiB for every note, 40 µs of the 48 a
        # 4 KB note took to read.
        with open(full, "rb", buffering=0) as handle:
            data = handle.read(sig.size + 1)
        after = signature(restat(full))
    except (FileNotFoundError, NotADirectoryError):
        return Look(rel, "absent")
    except PermissionError:
        # Not a file still being written: it stays unreadable until its mode changes, and
        # retrying it would go on for ever. Its mode changing is an event of its own.
        return Look(rel, "unreadable", sig)
    except OSError:
        return Look(rel, "unstable", sig)
    if after != sig or len(data) != sig.size:
        return Look(rel, "unstable", sig, hashed=True)  # still being written
    found = digest(data)
    if stored and stored[1] == found:
        return Look(rel, "touched", sig, found, hashed=True, links=st.st_nlink)
    cards = adapter.read(data, rel)
    return Look(rel, "content", sig, found, cards, [card_fields(c) for c in cards],
                hashed=True, read_at=read_at, links=st.st_nlink)


def _look_by_lines(full: str, adapter, rel: str, sig: Signature, stored: tuple | None,
                   restat=os.lstat) -> Look:
    """A look at a file that may be far larger than a note, in two passes that never hold its
    bytes whole: hash it by blocks (unchanged content is not parsed), then hand its lines to
    the adapter. A file that changed during either pass is unstable, as in look()."""
    read_at = time.time_ns()
    cards: list[Card] = []
    try:
        with open(full, "rb") as handle:
            hasher = hashlib.blake2b(digest_size=16)
            size = 0
            while block := handle.read(MIB):
                hasher.update(block)
                size += len(block)
            found = hasher.hexdigest()
            if size == sig.size and not (stored and stored[1] == found):
                handle.seek(0)
                cards = adapter.read_lines(handle, rel)
        after = signature(restat(full))
    except (FileNotFoundError, NotADirectoryError):
        return Look(rel, "absent")
    except OSError:
        return Look(rel, "unstable", sig)
    if after != sig or size != sig.size:
        return Look(rel, "unstable", sig, hashed=True)
    if stored and stored[1] == found:
        return Look(rel, "touched", sig, found, hashed=True)
    return Look(rel, "content", sig, found, cards, [card_fields(c) for c in cards],
                hashed=True, read_at=read_at)


def worker_start() -> None:
    """In each reader process: end with the process that started it (watch_parent), and read at
    a lower priority than the writer."""
    watch_parent()
    # The single writer is the bound of a parallel run: readers on every core would take turns
    # with it. At a lower priority they use what it leaves, and it never waits for a core.
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no os.nice (Windows)
        os.nice(WORKER_NICENESS)


def watch_parent() -> None:
    """In a worker process: end when the process that started it is gone (the indexer, or the
    fork server, which ends with the indexer). A killed `memsync index` would otherwise leave
    its workers waiting on their queue for ever: each holds the queue's other end open, so none
    of them ever reads an end of file."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="memsync-orphan-watch", daemon=True).start()


# A look crosses from a reader process to the writer as plain tuples (packed, unpacked): pickle
# builds those in C, while each Card, CardFields and Signature cost a dict or a Python call per
# object on both sides. At 100,000 cards the writer's process spent 3.4 s unpickling looks, at
# times holding the GIL its writing thread waited for. A rebuild took 36.7 s packed against
# 38.2 s (medians of 3 alternating runs), and 3.30 s against 3.43 s at 10,000 (7 runs).
#
# The two long texts of a card, its body and its body's token stream, cross as UTF-8 bytes and
# stay so in the writer, which only ever binds them into SQLite: the cards row casts its body to
# TEXT (Index.replace_file), and FTS5 reads a BLOB's bytes as UTF-8 text. Crossing as str, each
# was encoded in the reader, decoded by the unpickling and encoded again for SQLite: 49 MB of
# text at 10,000 cards. The writer's process took 0.3-0.5 s less CPU at that size, the rebuild
# 3.55 against 3.66 s (medians of 9 alternating runs).
_CARD_FIELDS = tuple(f.name for f in dataclasses.fields(Card))
_BODY = _CARD_FIELDS.index("body")
_STREAM = CardFields._fields.index("body")


def packed(look: Look) -> tuple:
    """The look in builtins only (tuples, lists, str, bytes, int, bool, None); unpacked() gives
    it back, but for its long texts (below)."""
    sig = look.sig
    return (look.path, look.state, (sig.size, sig.mtime_ns, sig.ctime_ns, sig.ino) if sig else None,
            look.digest, [_card_row(card) for card in look.cards],
            [_fields_row(fields) for fields in look.fields], look.hashed, look.read_at, look.links)


def _card_row(card: Card) -> tuple:
    row = [card.__dict__[name] for name in _CARD_FIELDS]
    row[_BODY] = row[_BODY].encode()
    return tuple(row)


def _fields_row(fields: CardFields) -> tuple:
    return (*fields[:_STREAM], fields.body.encode(), *fields[_STREAM + 1:])


def _card(values: tuple) -> Card:
    card = object.__new__(Card)
    # A frozen dataclass refuses setattr; its own __init__ goes around that too.
    card.__dict__.update(zip(_CARD_FIELDS, values, strict=True))
    return card


def unpacked(row: tuple) -> Look:
    """The look packed() made, its cards' bodies and body token streams still UTF-8 bytes."""
    path, state, sig, found, cards, fields, hashed, read_at, links = row
    return Look(path, state, Signature(*sig) if sig else None, found, [_card(c) for c in cards],
                [CardFields._make(f) for f in fields], hashed, read_at, links)


def look_batch(root: str, adapter_name: str, max_bytes: int, items: list[tuple]) -> list[tuple]:
    """Looks at (rel, stored) pairs, packed: the unit of work handed to a worker process."""
    adapter = adapters.get(adapter_name, root)
    return [packed(look(root, adapter, max_bytes, rel, stored)) for rel, stored in items]
