"""Invariant 3: every table and every query carries the tenant. Another tenant on the same
database sees nothing, finds nothing, deletes nothing, writes nothing into ours."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import DuplicateId, NotFound
from forge_jupyter.message import Event, Message, SessionInfo
from forge_jupyter.store.ops import AppendMessage, PutMessage
from tests.contract.contract_helpers import finish, new_session, running_assistant, text, user_turn


@pytest.fixture
def ours(store):
    session = new_session(store, "shared-name")
    asked = user_turn(store, session)
    answer = finish(store, running_assistant(store, session, asked))
    store.put_event(Event(session_id=session.id, type="abort"))
    return session, asked, answer


def test_another_tenant_sees_no_session(other_tenant, ours):
    session, _, _ = ours
    assert other_tenant.list_sessions().items == []
    with pytest.raises(NotFound):
        other_tenant.get_session(session.id)
    with pytest.raises(NotFound):
        other_tenant.find_session(session.id)
    with pytest.raises(NotFound):
        other_tenant.find_session("shared-name")


def test_another_tenant_reads_no_message_part_timeline_or_event(other_tenant, ours):
    session, asked, _ = ours
    with pytest.raises(NotFound):
        other_tenant.get_message(asked.id)
    with pytest.raises(NotFound):
        other_tenant.get_part(asked.parts[0].id)
    with pytest.raises(NotFound):
        other_tenant.list_parts(asked.id)
    for read in (other_tenant.timeline, other_tenant.timeline_length,
                 other_tenant.unfinished_messages, other_tenant.lease):
        with pytest.raises(NotFound):
            read(session.id)
    with pytest.raises(NotFound):
        other_tenant.position(session.id, asked.id)
    assert other_tenant.events().items == []
    assert other_tenant.events(session.id).items == []


def test_another_tenants_delete_removes_nothing(store, other_tenant, ours):
    session, asked, answer = ours
    with pytest.raises(NotFound):
        other_tenant.delete_session(session.id)
    assert [m.id for m in store.iter_timeline(session.id)] == [asked.id, answer.id]
    assert store.get_message(asked.id).parts == asked.parts
    assert len(store.events(session.id).items) == 1


def test_another_tenants_writes_to_our_session_rejected(store, other_tenant, ours):
    session, asked, answer = ours
    message = Message(session_id=session.id, role="user")
    with pytest.raises(NotFound):
        other_tenant.write([PutMessage(message), AppendMessage(session.id, message.id)])
    with pytest.raises(NotFound):
        other_tenant.put_part(text(asked))
    with pytest.raises(NotFound):
        other_tenant.put_event(Event(session_id=session.id, type="abort"))
    with pytest.raises(NotFound):
        other_tenant.update_session(session.model_copy(update={"title": "theirs"}))
    with pytest.raises(NotFound):
        other_tenant.fork(session.id, answer.id, SessionInfo())
    with pytest.raises(NotFound):
        other_tenant.acquire_lease(session.id, "them", 60)
    assert store.timeline_length(session.id) == 2
    assert store.get_session(session.id).title is None
    assert store.lease(session.id) is None


def test_ids_are_global_a_duplicate_across_tenants_conflicts(store, other_tenant, ours):
    session, asked, _ = ours
    with pytest.raises(DuplicateId):
        other_tenant.create_session(SessionInfo(id=session.id))
    theirs = new_session(other_tenant)
    with pytest.raises(DuplicateId):
        other_tenant.put_message(Message(id=asked.id, session_id=theirs.id, role="user"))
    mine = running_assistant(other_tenant, theirs)
    with pytest.raises(DuplicateId):
        other_tenant.put_part(text(mine).model_copy(update={"id": asked.parts[0].id}))
    event = store.events(session.id).items[0]
    with pytest.raises(DuplicateId):
        other_tenant.put_event(event.model_copy(update={"session_id": theirs.id}))
    # and nothing of ours moved
    assert store.get_message(asked.id).session_id == session.id
    assert store.get_part(asked.parts[0].id).message_id == asked.id


def test_the_same_session_name_lives_in_two_tenants(store, other_tenant, ours):
    session, _, _ = ours
    theirs = new_session(other_tenant, "shared-name")
    assert other_tenant.find_session("shared-name").id == theirs.id
    assert store.find_session("shared-name").id == session.id
