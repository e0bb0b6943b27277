"""What the file holds for people who query it: columns without json_extract, and store.sql."""

from __future__ import annotations

import pandas as pd
import pytest

from forge_jupyter.message import ErrorInfo, Message, SessionInfo, StepFinishPart, Tokens, ToolPart
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart


@pytest.fixture
def store(tmp_path):
    return DuckDBStore(tmp_path / "q.duckdb")


@pytest.fixture
def turn(store):
    session = store.create_session(SessionInfo(name="q"))
    message = Message(session_id=session.id, role="assistant", status="error", cost=0.25,
                      error=ErrorInfo(type="RateLimitError", message="slow down"),
                      tokens=Tokens(input=100, output=7), completed_at=1_700_000_001.5,
                      created_at=1_700_000_000.25)
    call = ToolPart(session_id=session.id, message_id=message.id, call_id="c1", tool="python",
                    state="completed", time_start=1_700_000_000.5, time_end=1_700_000_001.0)
    step = StepFinishPart(session_id=session.id, message_id=message.id, reason="stop", cost=0.25,
                          tokens=Tokens(input=100, output=7, cache_read=50, estimated=True))
    store.write([PutMessage(message), PutPart(call), PutPart(step),
                 AppendMessage(session.id, message.id)])
    return session, message, call, step


def test_the_common_questions_need_no_json_extract(store, turn):
    _, message, call, _ = turn
    tools = store.sql("SELECT tool, tool_state, call_id, time_end - time_start AS took "
                      "FROM part WHERE type = 'tool'")
    assert tools.to_dict("records") == [{"tool": "python", "tool_state": "completed",
                                         "call_id": "c1", "took": pd.Timedelta(seconds=0.5)}]
    steps = store.sql("SELECT tokens_input, tokens_output, tokens_cache_read, tokens_estimated, "
                      "cost FROM part WHERE type = 'step-finish'")
    assert steps.iloc[0].to_dict() == {"tokens_input": 100, "tokens_output": 7,
                                       "tokens_cache_read": 50, "tokens_estimated": True,
                                       "cost": 0.25}
    messages = store.sql("SELECT status, error_type, cost, tokens_input, "
                         "completed_at - created_at AS took FROM message")
    assert messages.iloc[0].to_dict() == {"status": "error", "error_type": "RateLimitError",
                                          "cost": 0.25, "tokens_input": 100,
                                          "took": pd.Timedelta(seconds=1.25)}


def test_timestamps_are_timestamptz(store, turn):
    types = store.sql("SELECT typeof(created_at) AS t, typeof(time_end) AS e FROM part LIMIT 1")
    assert types.iloc[0].to_dict() == {"t": "TIMESTAMP WITH TIME ZONE",
                                       "e": "TIMESTAMP WITH TIME ZONE"}


def test_sql_sees_only_this_tenants_rows(store, turn, tmp_path):
    other = DuckDBStore(tmp_path / "q.duckdb", tenant_id="other")
    theirs = other.create_session(SessionInfo(name="theirs"))
    assert store.sql("SELECT name FROM session").name.tolist() == ["q"]
    assert other.sql("SELECT id FROM session").id.tolist() == [theirs.id]
    for table in ("message", "part", "session_message", "event"):
        assert other.sql(f"SELECT count(*) AS n FROM {table}").n[0] == 0


def test_sql_takes_parameters_and_its_own_with_clauses(store, turn):
    _, message, _, _ = turn
    frame = store.sql("WITH t AS (SELECT * FROM part WHERE message_id = $m) "
                      "SELECT count(*) AS n FROM t -- a trailing comment;", {"m": message.id})
    assert frame.n[0] == 2
    assert store.sql("SELECT ? AS x;", [5]).x[0] == 5


@pytest.mark.parametrize("query", [
    "DELETE FROM part",
    "UPDATE session SET name = 'x'",
    "INSERT INTO event VALUES ('t', 'e', NULL, 'x', 'y', now(), NULL)",
    "CREATE TABLE x (a INT)",
    "DROP TABLE part",
    "SELECT 1; DELETE FROM part",
    "ATTACH 'other.duckdb' AS o",
    "COPY part TO 'out.csv'",
    "PRAGMA version",
])
def test_sql_refuses_anything_but_one_select(store, turn, query):
    with pytest.raises(ValueError, match="one read-only SELECT"):
        store.sql(query)
    assert store.sql("SELECT count(*) AS n FROM part").n[0] == 2
    assert store.sql("SELECT count(*) AS n FROM session").n[0] == 1
