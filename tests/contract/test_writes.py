"""Writes: round trips, upserts of running rows, typed rejections, all-or-nothing batches."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import DuplicateId, Immutable, NotFound, SessionDeleted
from forge_jupyter.message import PART_TYPES, Event, Message, TextPart, part_from_json
from forge_jupyter.store.ops import AppendMessage, PutEvent, PutMessage, PutPart
from tests.contract.contract_helpers import (
    assert_same,
    every_part,
    full_message,
    new_session,
    running_assistant,
    text,
    tool,
    user_turn,
)


def test_message_row_reads_back_whole(store):
    session = new_session(store)
    message = full_message(session)
    store.write([PutMessage(message), AppendMessage(session.id, message.id)])
    assert_same(store.get_message(message.id), message)
    assert store.get_message(message.id, with_parts=False).parts == []


def test_every_part_type_round_trips_through_the_store(store):
    session = new_session(store)
    message = running_assistant(store, session)
    parts = every_part(message)
    assert {p.type for p in parts} == set(PART_TYPES)
    store.write([PutPart(p) for p in parts])
    for p in parts:
        stored = store.get_part(p.id)
        assert stored == p  # the whole part, exactly: the JSON form is the stored form
        assert part_from_json(stored.to_json()) == p
    assert store.list_parts(message.id) == sorted(parts, key=lambda p: p.id)


def test_parts_come_back_in_id_order_whatever_the_write_order(store):
    session = new_session(store)
    message = running_assistant(store, session)
    parts = [text(message, f"p{i}") for i in range(5)]
    store.write([PutPart(p) for p in reversed(parts)])
    assert [p.id for p in store.get_message(message.id).parts] == [p.id for p in parts]


def test_a_running_part_is_rewritten_by_its_next_state(store):
    session = new_session(store)
    message = running_assistant(store, session)
    call = tool(message, "pending")
    store.put_part(call)
    store.put_part(call.model_copy(update={"state": "running"}))
    done = call.model_copy(update={"state": "completed", "output": "2"})
    store.put_part(done)
    assert store.get_part(call.id) == done
    assert len(store.list_parts(message.id)) == 1


def test_write_to_a_missing_session_rejected(store):
    with pytest.raises(NotFound):
        store.put_message(Message(session_id="ses_missing", role="user"))


def test_part_of_a_missing_message_rejected(store):
    session = new_session(store)
    with pytest.raises(NotFound):
        store.put_part(TextPart(session_id=session.id, message_id="msg_missing"))


def test_append_of_a_missing_message_rejected(store):
    session = new_session(store)
    with pytest.raises(NotFound):
        store.append_message(session.id, "msg_missing")
    assert store.timeline_length(session.id) == 0


def test_event_of_a_missing_session_rejected(store):
    with pytest.raises(NotFound):
        store.put_event(Event(session_id="ses_missing", type="abort"))


def test_writes_after_delete_rejected_and_nothing_changes(store):
    session = new_session(store)
    message = running_assistant(store, session)
    store.delete_session(session.id)
    for ops in (
        [PutMessage(Message(session_id=session.id, role="user"))],
        [PutPart(text(message))],
        [AppendMessage(session.id, message.id)],
    ):
        with pytest.raises(SessionDeleted):
            store.write(ops)
    with pytest.raises(NotFound):
        store.get_message(message.id)
    with pytest.raises(SessionDeleted):
        store.timeline(session.id)


def test_message_id_of_another_session_conflicts(store):
    a, b = new_session(store), new_session(store)
    message = user_turn(store, a)
    stolen = Message(id=message.id, session_id=b.id, role="user")
    with pytest.raises(DuplicateId):
        store.put_message(stolen)
    assert store.get_message(message.id).session_id == a.id


def test_part_id_of_another_message_conflicts(store):
    session = new_session(store)
    first = running_assistant(store, session)
    part = text(first, done=False)
    store.put_part(part)
    # a second message of the same session
    other = Message(session_id=session.id, role="assistant")
    store.put_message(other)
    with pytest.raises(DuplicateId):
        store.put_part(part.model_copy(update={"message_id": other.id}))
    assert store.get_part(part.id).message_id == first.id


def test_message_role_cannot_change(store):
    session = new_session(store)
    message = running_assistant(store, session)
    with pytest.raises(DuplicateId):
        store.put_message(message.model_copy(update={"role": "user"}))


def test_duplicate_event_id_conflicts(store):
    session = new_session(store)
    event = Event(session_id=session.id, type="abort")
    store.put_event(event)
    with pytest.raises(DuplicateId):
        store.put_event(event.model_copy(update={"type": "other"}))
    assert [e.type for e in store.events(session.id).items] == ["abort"]


def test_an_id_cannot_name_two_sessions_within_one_batch(store):
    a, b = new_session(store), new_session(store)
    message = Message(session_id=a.id, role="user")
    with pytest.raises(DuplicateId):
        store.write([PutMessage(message), PutMessage(message.model_copy(update={"session_id": b.id}))])
    with pytest.raises(NotFound):
        store.get_message(message.id)


@pytest.mark.parametrize("bad", ["missing-message", "deleted-session", "duplicate-event", "immutable"])
def test_a_batch_with_one_bad_op_applies_nothing(store, bad):
    session = new_session(store)
    finished = user_turn(store, session)
    gone = new_session(store)
    store.delete_session(gone.id)
    old_event = Event(session_id=session.id, type="x")
    store.put_event(old_event)
    before_updated = store.get_session(session.id).updated_at

    message = Message(session_id=session.id, role="assistant", parent_id=finished.id)
    good = [PutMessage(message), PutPart(text(message, done=False)),
            AppendMessage(session.id, message.id), PutEvent(Event(session_id=session.id, type="y"))]
    wrong, error = {
        "missing-message": (PutPart(TextPart(session_id=session.id, message_id="msg_missing")),
                            NotFound),
        "deleted-session": (PutMessage(Message(session_id=gone.id, role="user")), SessionDeleted),
        "duplicate-event": (PutEvent(old_event), DuplicateId),
        "immutable": (PutPart(text(finished)), Immutable),
    }[bad]
    with pytest.raises(error):
        store.write([*good, wrong])
    with pytest.raises(NotFound):
        store.get_message(message.id)
    assert store.timeline_length(session.id) == 1
    assert [e.type for e in store.events(session.id).items] == ["x"]
    assert store.get_session(session.id).updated_at == before_updated
