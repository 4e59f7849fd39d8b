"""Text given as bytes that are not UTF-8 (a shell in a Latin-1 or GBK locale, a pipe from such
a file): refused by name with what to do, never a traceback, never half written."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from .conftest import MEMSYNC_BIN, write_card


def memsync(*args: str | bytes, stdin: bytes | None = None) -> tuple[int, str, str]:
    proc = subprocess.run([MEMSYNC_BIN, *args], input=stdin, capture_output=True, env=os.environ.copy(),
                          timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()  # strict: output is UTF-8


@pytest.fixture
def indexed(vault, home):
    write_card(vault, "notes/heron.md", "heron", body="The grey heron waits at the pond at dawn.")
    assert memsync("index")[0] == 0
    return vault


@pytest.mark.parametrize("args, named", [
    ((b"search", "heron \xe9".encode("latin-1")), "the query"),
    ((b"search", b"heron", b"--tag", b"\xff"), "--tag"),
    ((b"capture", b"--title", "caf\xe9".encode("latin-1"), b"--body", b"a body long enough to be a card"), "--title"),
    ((b"capture", b"--title", b"cafe", "a body long enough to be a caf\xe9".encode("latin-1")), "the body"),
    ((b"log", b"--query", b"\xc3"), "--query"),
])
def test_an_argument_that_is_not_utf8_is_refused_by_name(indexed, home, args, named):
    before = sorted(p.relative_to(indexed) for p in indexed.rglob("*"))
    code, out, err = memsync(*args, b"--json")
    assert code == 2 and "Traceback" not in err, err
    message = json.loads(out)["error"]["message"]
    assert message.startswith(f"{named} is not UTF-8 text") and "give it as UTF-8" in message
    assert sorted(p.relative_to(indexed) for p in indexed.rglob("*")) == before  # nothing written
    code, out, _ = memsync("log", "--json")  # and the refused search was not logged either
    assert code == 0 and not json.loads(out)["entries"]


def test_a_body_piped_in_that_is_not_utf8_is_refused_with_how_to_convert_it(indexed):
    body = "灰鹭在黎明时分守候在池塘边，一动不动，直到鱼游近。".encode("gbk")
    code, out, err = memsync("capture", "--title", "heron at dawn", "--json", stdin=body)
    message = json.loads(out)["error"]["message"]
    assert code == 2 and "Traceback" not in err
    assert "not UTF-8" in message and "iconv -f GBK -t UTF-8" in message
    assert not list(indexed.rglob("heron at dawn*.md"))
    code, out, _ = memsync("capture", "--title", "heron at dawn", "--json", stdin=body.decode("gbk").encode())
    assert code == 0 and json.loads(out)["status"] == "created"


def test_a_folder_argument_may_hold_any_bytes(indexed, home, tmp_path):
    """A file name on Linux need not be UTF-8: such a path is not refused as text would be."""
    odd = tmp_path / os.fsdecode(b"proj-\xff")
    odd.mkdir()
    code, out, err = memsync("brief", "--project", os.fsencode(odd), "--peek", "--json")
    assert code == 0 and "Traceback" not in err, err
    assert json.loads(out)["project"]["name"] == "proj-\ufffd"  # shown as text, bytes replaced
