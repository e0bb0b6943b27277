"""Invariants 1 and 2: a finished message and its parts never change; nothing follows a
running message."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import Immutable, MessageRunning, NotFound
from forge_jupyter.message import Message, SessionInfo, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from tests.contract.contract_helpers import (
    finish,
    new_session,
    running_assistant,
    text,
    tool,
    user_turn,
)


def test_late_part_write_to_a_finished_message_rejected(store):
    session = new_session(store)
    message = running_assistant(store, session)
    part = text(message, "kept", done=False)
    store.put_part(part)
    finish(store, message)
    with pytest.raises(Immutable):
        store.put_part(part.model_copy(update={"text": "late", "time_end": now()}))
    with pytest.raises(Immutable):
        store.put_part(text(message, "a new part"))
    assert [p.text for p in store.list_parts(message.id)] == ["kept"]


def test_late_message_write_to_a_finished_message_rejected(store):
    session = new_session(store)
    message = finish(store, running_assistant(store, session))
    with pytest.raises(Immutable):
        store.put_message(message.model_copy(update={"cost": 99.0}))
    assert store.get_message(message.id).cost == 0.0


def test_second_terminal_transition_loses_to_the_first(store):
    session = new_session(store)
    message = running_assistant(store, session)
    finish(store, message, "aborted")
    with pytest.raises(Immutable):
        finish(store, message, "completed")
    assert store.get_message(message.id).status == "aborted"


def test_second_terminal_transition_inside_one_batch_rejected_with_the_batch(store):
    session = new_session(store)
    message = running_assistant(store, session)
    aborted = message.model_copy(update={"status": "aborted"})
    completed = message.model_copy(update={"status": "completed"})
    with pytest.raises(Immutable):
        store.write([PutMessage(aborted), PutMessage(completed)])
    assert store.get_message(message.id).status == "running"


def test_finished_part_never_changes_even_while_its_message_runs(store):
    session = new_session(store)
    message = running_assistant(store, session)
    call = tool(message, "completed")
    store.put_part(call)
    with pytest.raises(Immutable):
        store.put_part(call.model_copy(update={"state": "error", "error": "late"}))
    with pytest.raises(Immutable):
        store.write([PutPart(tool(message, "running").model_copy(update={"id": "prt_x"})),
                     PutPart(tool(message, "completed").model_copy(update={"id": "prt_x"})),
                     PutPart(tool(message, "error").model_copy(update={"id": "prt_x"}))])
    assert store.get_part(call.id).state == "completed"


def test_message_finished_in_the_same_batch_still_receives_its_parts(store):
    # the projection coalesces by id: a message's final row may precede its last parts
    session = new_session(store)
    message = running_assistant(store, session)
    done = message.model_copy(update={"status": "completed", "completed_at": now()})
    last = text(message, "final words")
    store.write([PutMessage(done), PutPart(last)])
    stored = store.get_message(message.id)
    assert stored.status == "completed" and stored.parts == [last]


def test_append_after_a_running_message_rejected(store):
    session = new_session(store)
    running = running_assistant(store, session)
    follow = Message(session_id=session.id, role="user")
    with pytest.raises(MessageRunning):
        store.write([PutMessage(follow), AppendMessage(session.id, follow.id)])
    assert store.timeline_length(session.id) == 1
    finish(store, running)
    store.write([PutMessage(follow), AppendMessage(session.id, follow.id)])
    assert store.timeline_length(session.id) == 2


def test_fork_rejected_while_message_running(store):
    session = new_session(store)
    user_turn(store, session)
    running = running_assistant(store, session)
    with pytest.raises(MessageRunning):
        store.fork(session.id, running.id, SessionInfo(name="too-early"))
    with pytest.raises(NotFound):  # nothing was created
        store.find_session("too-early")
    assert store.events(type="fork").items == []
