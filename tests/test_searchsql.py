"""The search SQL builder (memsync.store.searchsql): text and parameters, run by Index.run."""

import pytest

from memsync.errors import BadArgument
from memsync.store import searchsql as sql
from memsync.store.index import Index


def test_filters_put_each_value_in_a_parameter():
    where = sql.filters(today="2026-01-02", kind="note", source="vault", tag="#Ops/Deploy")
    assert where.sql.count("?") == len(where.params) and "note" not in where.sql
    assert where.params == ("note", "vault", "ops/deploy", "2026-01-02")


def test_as_of_replaces_today_and_an_empty_date_is_refused():
    assert sql.filters(today="2026-01-02", as_of="2025-05-05").params == ("2025-05-05", "2025-05-05")
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
