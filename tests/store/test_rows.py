"""The DuckDB row codec: what a write learns from a stored part's columns is what the part says."""

from __future__ import annotations

import duckdb
import pytest

from forge_jupyter.errors import Immutable
from forge_jupyter.model import (
    PART_TYPES,
    AgentPart,
    CompactionPart,
    FilePart,
    Message,
    PatchPart,
    ReasoningPart,
    RetryPart,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    SubtaskPart,
    TextPart,
    ToolPart,
)
from forge_jupyter.store.duckdb import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.rows import PART_TERMINAL_SQL


def every_kind_of_part(session_id: str, message_id: str) -> list:
    ids = {"session_id": session_id, "message_id": message_id}
    parts = [
        TextPart(**ids, text="open"), TextPart(**ids, text="done", time_start=1.0, time_end=2.0),
        ReasoningPart(**ids, text="open", time_start=1.0),
        ReasoningPart(**ids, text="done", time_start=1.0, time_end=2.5),
        FilePart(**ids, path="a.csv"), AgentPart(**ids, name="plan"), CompactionPart(**ids),
        SubtaskPart(**ids, agent="build", prompt="go"), StepStartPart(**ids),
        StepFinishPart(**ids, reason="stop"), PatchPart(**ids),
        RetryPart(**ids, attempt=1, error="429"),
    ]
    for state in ("pending", "running", "completed", "error"):
        # a tool call's end time does not make it final: only its state does
        parts.append(ToolPart(**ids, call_id=f"c-{state}", tool="python", state=state,
                              time_start=1.0, time_end=2.0 if state == "running" else None))
    return parts


def test_the_columns_say_when_a_part_is_final_as_the_part_does(tmp_path):
    store = DuckDBStore(tmp_path / "rows.duckdb")
    session = store.create_session(SessionInfo())
    message = Message(session_id=session.id, role="assistant")
    parts = every_kind_of_part(session.id, message.id)
    assert {p.type for p in parts} == set(PART_TYPES)  # a new part type must be added here
    store.write([PutMessage(message), *(PutPart(p) for p in parts),
                 AppendMessage(session.id, message.id)])
    with store.reading() as con:
        final = dict(con.execute(f"SELECT id, {PART_TERMINAL_SQL} FROM part").fetchall())
    assert final == {p.id: p.is_terminal for p in parts}


def test_a_finished_part_is_refused_and_an_open_one_replaced_without_reading_its_json(tmp_path):
    store = DuckDBStore(tmp_path / "rows.duckdb")
    session = store.create_session(SessionInfo())
    message = Message(session_id=session.id, role="assistant")
    parts = every_kind_of_part(session.id, message.id)
    store.write([PutMessage(message), *(PutPart(p) for p in parts),
                 AppendMessage(session.id, message.id)])
    # from another client: the JSON no longer says anything a write could read
    with duckdb.connect(str(tmp_path / "rows.duckdb")) as con:
        con.execute("UPDATE part SET data = '{}'")
    for p in parts:
        again = p.model_copy(update={"metadata": {"again": True}})
        if p.is_terminal:
            with pytest.raises(Immutable):
                store.write([PutPart(again)])
        else:
            store.write([PutPart(again)])
            assert store.get_part(p.id) == again
