"""load_turn: the turn a cell's record shows, read from its user message on, as stored."""

from __future__ import annotations

import pytest

from forge_jupyter.message import Message, SessionInfo, TextPart, now
from forge_jupyter.session.view import load_turn
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart


@pytest.fixture(params=["memory", "duckdb"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else DuckDBStore(tmp_path / "t.duckdb")


def message(session_id: str, role: str, text: str, parent: Message | None = None) -> Message:
    m = Message(session_id=session_id, role=role, status="completed", completed_at=now(),
                parent_id=parent.id if parent else None)
    m.parts = [TextPart(session_id=session_id, message_id=m.id, text=text, time_end=now())]
    return m


def history(store, rows, turns: int):
    """``turns`` turns (a question, a step calling tools, the answer), written in one batch."""
    session = store.create_session(SessionInfo())
    written, ops = [], []
    for i in range(turns):
        asked = message(session.id, "user", f"question {i}")
        written += [asked, message(session.id, "assistant", f"calls {i}", asked),
                    message(session.id, "assistant", f"answer {i}", asked)]
    for m in written:
        ops += [PutMessage(m), *(PutPart(p) for p in m.parts), AppendMessage(session.id, m.id)]
    store.write(ops)
    return session, written


def test_the_turn_of_a_user_message_is_it_and_what_followed_as_stored(store, rows):
    session, written = history(store, rows, 300)  # several of load_turn's pages back
    asked = written[-3]
    turn = load_turn(store, session.id, asked.id)
    assert turn == written[-3:]
    assert [m.text for m in turn] == ["question 299", "calls 299", "answer 299"]
    assert load_turn(store, session.id, written[3].id) == written[3:]


def test_without_a_user_message_the_turn_is_the_latest_one(store, rows):
    session, written = history(store, rows, 300)
    assert load_turn(store, session.id) == written[-3:]
    assert load_turn(store, session.id, "msg_not_in_this_session") == written[-3:]
    tail = [message(session.id, "assistant", f"more {i}", written[-3]) for i in range(130)]
    store.write([op for m in tail for op in (PutMessage(m), *(PutPart(p) for p in m.parts),
                                              AppendMessage(session.id, m.id))])
    assert load_turn(store, session.id) == [*written[-3:], *tail]  # no user message since


def test_a_session_without_user_messages_or_messages(store, rows):
    session = store.create_session(SessionInfo())
    assert load_turn(store, session.id) == []
    w = rows(store, session.id)
    orphan = w.assistant(w.user("x"), "y")
    assert load_turn(store, session.id, "msg_unknown")[-1] == orphan


def test_a_turn_that_compacted_begins_at_the_persons_message_not_the_continuation(store, rows):
    from forge_jupyter.message import CompactionPart

    session, written = history(store, rows, 2)
    asked = message(session.id, "user", "print the rows")
    called = message(session.id, "assistant", "calls", asked)
    request = Message(session_id=session.id, role="user", status="completed", completed_at=now())
    request.parts = [CompactionPart(session_id=session.id, message_id=request.id, auto=True)]
    summary = message(session.id, "assistant", "## Goal", request)
    go_on = message(session.id, "user", "Continue the task.")
    go_on.parts[0].synthetic = True
    answer = message(session.id, "assistant", "done", go_on)
    turn = [asked, called, request, summary, go_on, answer]
    store.write([op for m in turn for op in (PutMessage(m), *(PutPart(p) for p in m.parts),
                                              AppendMessage(session.id, m.id))])
    assert load_turn(store, session.id, answer.parent_id) == turn
    assert load_turn(store, session.id) == turn
