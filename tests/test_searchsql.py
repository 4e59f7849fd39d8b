"""The search SQL builder (memsync.store.searchsql): text and parameters, run by Index.run."""

import pytest

from memsync.errors import BadArgument
from memsync.store import searchsql as sql
from memsync.store.index import Index


def test_filters_put_each_value_in_a_parameter():
    where = sql.filters(today="2026-01-02", kind="note", source="vault", tag="#Ops/Deploy")
    assert where.sql.count("?") == len(where.params) and "note" not in where.sql
    assert where.params == ("note", "vault", "ops/deploy", *sql.on_day("2026-01-02"))


def test_as_of_replaces_today_and_an_empty_date_is_refused():
    assert sql.filters(today="2026-01-02", as_of="2025-05-05").params == sql.on_day("2025-05-05") * 2
    assert sql.filters(today="2026-01-02", include_invalid=True) == sql.Where()
    with pytest.raises(BadArgument):
        sql.filters(today="2026-01-02", as_of="")


def test_index_runs_a_built_statement(tmp_path):
    index = Index(tmp_path / "index.db")
    try:
        assert index.run(sql.kinds()) == []
        assert index.run(sql.hit_rows([1, 2], sql.filters(today="2026-01-02"))) == []
    finally:
        index.close()


def test_matching_finds_the_same_cards_by_lookup_and_by_one_pass(vault):
    # Prefix tiers filter one pass over the match (`+rowid`), word tiers look each card up: the
    # two forms must agree on what matches.
    from memsync import config

    from .conftest import write_card
    from .helpers import sync

    for n, body in enumerate(["sqlite3 tuning", "sqlite notes", "postgres only", "sqlalchemy and sqlite"]):
        write_card(vault, f"c{n}.md", f"Card {n}", body)
    sync()
    index = Index(config.load().db.path)
    try:
        seqs = [seq for (seq,) in index.run(sql.Statement("SELECT seq FROM cards"))]
        for expr, want in (('"sqlite" *', 3), ('"sqlite"', 2), ('"sql" * AND "tuning"', 1)):
            by_lookup = {s for (s,) in index.run(sql.matching(expr, seqs))}
            one_pass = {s for (s,) in index.run(sql.matching(expr, seqs, prefix=True))}
            assert by_lookup == one_pass and len(one_pass) == want
    finally:
        index.close()
