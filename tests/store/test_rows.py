"""The DuckDB row codec: what a write learns from a stored part's columns is what the part says."""

from __future__ import annotations

import duckdb
import pytest

from forge_jupyter.errors import Immutable, NotFound
from forge_jupyter.message import (
    PART_TYPES,
    AgentPart,
    CompactionPart,
    ErrorInfo,
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
    Tokens,
    ToolPart,
)
from forge_jupyter.store.duckdb.store import DuckDBStore
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


ODD_TEXT = 'quote " backslash \\ tab \t newline \n nul-free control \x01 emoji 🦆 accents é 中文'


def odd_messages(session_id: str, count: int) -> list[Message]:
    """Messages whose every field holds something a JSON writer can get wrong."""
    out = []
    for i in range(count):
        m = Message(
            session_id=session_id, role="assistant" if i % 2 else "user", parent_id=None,
            agent=ODD_TEXT, model="m/" + ODD_TEXT, provider=None if i % 3 else "p",
            status="error" if i % 2 else "completed", finish=ODD_TEXT if i % 2 else None,
            summary=bool(i % 2), error=ErrorInfo(type="E", message=ODD_TEXT) if i % 2 else None,
            tokens=Tokens(input=2**53 + i, output=i, reasoning=7, cache_read=0, cache_write=1,
                          estimated=bool(i % 2)),
            cost=[None, 0.0, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, 1e-7][i % 6],
            created_at=round(1_700_000_000.123456 + i / 7, 6),  # the store keeps µs
            completed_at=2_000_000_000.000001,
            origin={"notebook": ODD_TEXT, "cell_id": None, "n": [1, 2.5, True]} if i % 2 else None,
            metadata={"key " + ODD_TEXT: {"nested": [None, {}]}, "big": 2**63 - 1},
        )
        parts = [
            TextPart(session_id=session_id, message_id=m.id, text=ODD_TEXT * (i + 1),
                     time_start=1.5, time_end=2.000001, metadata={"x": ODD_TEXT}),
            ToolPart(session_id=session_id, message_id=m.id, call_id="c", tool=ODD_TEXT,
                     state="completed", input={"code": ODD_TEXT}, output=ODD_TEXT),
            StepFinishPart(session_id=session_id, message_id=m.id, cost=None,
                           tokens=Tokens(input=3, estimated=True)),
        ][: i % 4]
        out.append(m.model_copy(update={"parts": parts}))
    return out


@pytest.mark.parametrize("count", [3, 45])  # index lookups for a few ids, a scan for more
def test_messages_read_back_exactly_as_written(tmp_path, count):
    store = DuckDBStore(tmp_path / "rows.duckdb")
    session = store.create_session(SessionInfo())
    messages = odd_messages(session.id, count)
    ops = []
    for m in messages:
        ops += [PutMessage(m), *(PutPart(p) for p in m.parts), AppendMessage(session.id, m.id)]
    store.write(ops)
    page = store.timeline(session.id, limit=count)
    assert page.items == messages  # every field, floats to the last bit, parts in id order
    assert [p.parts for p in page.items] == [m.parts for m in messages]
    bare = store.timeline(session.id, limit=count, with_parts=False).items
    assert bare == [m.model_copy(update={"parts": []}) for m in messages]
    assert all(b.parts == [] for b in bare)
    assert store.get_message(messages[-1].id) == messages[-1]
    assert store.get_message(messages[-1].id).parts == messages[-1].parts
    with pytest.raises(NotFound):
        store.get_message("msg_missing")
