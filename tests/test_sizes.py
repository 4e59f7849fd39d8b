"""Sizes are said in MiB, the unit of the 8 MiB cap, so a size and the cap compare as they read."""

from memsync.reading import MAX_FILE_BYTES
from memsync.sizes import MIB, mib, size_and_cap

from .conftest import write_card


def test_sizes_read_in_the_unit_of_the_cap():
    assert MAX_FILE_BYTES == 8 * MIB and mib(MAX_FILE_BYTES) == "8 MiB"
    assert size_and_cap(int(8.4 * MIB), MAX_FILE_BYTES) == ("8.4 MiB", "8 MiB")


def test_a_size_just_over_the_cap_is_said_in_bytes_not_as_equal_to_it():
    assert size_and_cap(MAX_FILE_BYTES + 1, MAX_FILE_BYTES) == ("8,388,609 bytes", "8,388,608 bytes")


LINE = "a line of a log pasted whole into a card\n"  # 41 bytes


def test_a_card_over_the_cap_is_refused_in_mib(run_cli):
    body = LINE * (int(8.5 * MIB) // len(LINE))
    code, out, _err = run_cli("capture", "--title", "the whole log", "--json", stdin=body)
    assert code == 1 and out["status"] == "rejected"
    assert "the card would be 8.5 MiB, over the 8 MiB the index reads" in out["note"]


def test_a_file_over_the_cap_is_reported_in_mib(vault, run_cli):
    write_card(vault, "big.md", "big", "hugeword " * (9 * MIB // 9))
    run_cli("index")
    problems = run_cli("stats", "--json")[1]["problems"]
    assert [p["message"] for p in problems] == ["file is 9 MiB, over the 8 MiB limit; split it into smaller cards"]
