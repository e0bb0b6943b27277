"""forge.sql: one read-only SELECT over this tenant's tables and views, on every backend."""

from __future__ import annotations

import pandas as pd
import pytest

from forge_jupyter.errors import ForgeError
from forge_jupyter.store.query.check import ReadOnlySQL
from forge_jupyter.store.sql.views import VIEW_NAMES

WRITES = [
    "DELETE FROM part",
    "UPDATE session SET name = 'x'",
    "INSERT INTO event VALUES ('default', 'e', NULL, 'x', 'y', now(), NULL)",
    "CREATE TABLE x (a INT)",
    "CREATE OR REPLACE VIEW costs AS SELECT 1",
    "DROP VIEW tool_calls",
    "ALTER TABLE part ADD COLUMN x INT",
    "SELECT 1; DELETE FROM part",
    "ATTACH 'other.duckdb' AS o",
    "COPY (SELECT * FROM parts) TO 'out.csv'",
    "EXPORT DATABASE 'somewhere'",
    "SET threads = 1",
    "PRAGMA version",
    "CHECKPOINT",
    "",
]


@pytest.mark.parametrize("query", WRITES)
def test_a_writing_statement_is_refused_and_changes_nothing(run, query, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # had COPY or EXPORT run, they would write here
    before = run.forge.sql("SELECT count(*) AS n FROM part").n[0]
    with pytest.raises(ReadOnlySQL, match="exactly one read-only SELECT") as caught:
        run.forge.sql(query)
    assert isinstance(caught.value, ForgeError) and isinstance(caught.value, ValueError)
    assert "Write through forge's API" in str(caught.value)
    assert run.forge.sql("SELECT count(*) AS n FROM part").n[0] == before
    assert run.forge.sql("SELECT count(*) AS n FROM session").n[0] == 4
    assert len(run.forge.sql("SELECT * FROM costs")) > 0
    assert list(tmp_path.iterdir()) == []


def test_every_view_answers_with_utc_times(run):
    for view in VIEW_NAMES:
        frame = run.forge.sql(f"SELECT * FROM {view}")
        assert isinstance(frame, pd.DataFrame) and not frame.empty, view
        assert set(frame.tenant_id) == {"default"}, view
        for column in frame.columns:
            if isinstance(frame[column].dtype, pd.DatetimeTZDtype):
                assert str(frame[column].dt.tz) == "UTC", (view, column)


def test_sql_takes_parameters_with_clauses_and_joins_views_with_tables(run):
    alpha = run.sessions["alpha"].id
    frame = run.forge.sql(
        "WITH c AS (SELECT * FROM costs WHERE session_id = $s) "
        "SELECT count(*) AS steps, sum(c.tokens_input) AS tokens FROM c "
        "JOIN part p ON p.id = c.part_id -- a trailing comment;", {"s": alpha})
    direct = run.forge.costs(by="session", session=alpha)
    assert (frame.steps[0], frame.tokens[0]) == (direct.steps[0], direct.tokens_input[0])
    assert run.forge.sql("SELECT ? AS x", [7]).x[0] == 7


def test_nullable_integers_stay_integers(run):
    frame = run.forge.sql("SELECT tokens_input FROM parts ORDER BY part_id")
    assert str(frame.tokens_input.dtype) == "Int64" and frame.tokens_input.isna().any()


def test_the_other_tenant_sees_its_own_rows_through_the_same_views(run):
    theirs = run.sessions["theirs"].id
    for view in ("sessions", "messages", "parts", "tool_calls", "costs", "timeline"):
        frame = run.other.sql(f"SELECT DISTINCT session_id, tenant_id FROM {view}")
        assert frame.session_id.tolist() == [theirs], view
        assert frame.tenant_id.tolist() == ["other"], view
