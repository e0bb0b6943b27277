"""Fork copies pointer rows (never bodies); delete removes bodies no other timeline needs."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import DuplicateId, NotFound, SessionDeleted
from forge_jupyter.message import Event, SessionInfo
from tests.contract.contract_helpers import finish, new_session, running_assistant, user_turn


def _conversation(store, session, turns=3):
    messages = []
    for i in range(turns):
        asked = user_turn(store, session, f"q{i}")
        messages += [asked, finish(store, running_assistant(store, session, asked))]
    return messages


def test_fork_copies_the_pointers_up_to_a_finished_message(store):
    parent = new_session(store, "parent")
    messages = _conversation(store, parent)
    fork = store.fork(parent.id, messages[3].id, SessionInfo(name="fork"))
    assert (fork.forked_from_session, fork.forked_from_message) == (parent.id, messages[3].id)
    assert [m.id for m in store.iter_timeline(fork.id)] == [m.id for m in messages[:4]]
    assert store.get_session(fork.id).forked_from_message == messages[3].id
    # the same bodies: each still says where it was written
    assert {m.session_id for m in store.iter_timeline(fork.id)} == {parent.id}
    assert store.timeline_length(fork.id) == 4


def test_fork_records_a_fork_event(store):
    parent = new_session(store)
    messages = _conversation(store, parent, 1)
    fork = store.fork(parent.id, messages[1].id, SessionInfo())
    events = store.events(fork.id, type="fork").items
    assert len(events) == 1
    assert events[0].data["from_session"] == parent.id
    assert events[0].data["from_message"] == messages[1].id


def test_fork_and_parent_grow_apart(store):
    parent = new_session(store)
    messages = _conversation(store, parent, 1)
    fork = store.fork(parent.id, messages[-1].id, SessionInfo())
    in_fork = user_turn(store, fork, "only in the fork")
    in_parent = user_turn(store, parent, "only in the parent")
    assert [m.id for m in store.iter_timeline(fork.id)] == [*(m.id for m in messages), in_fork.id]
    assert [m.id for m in store.iter_timeline(parent.id)] == [*(m.id for m in messages), in_parent.id]
    with pytest.raises(NotFound):
        store.position(parent.id, in_fork.id)


def test_fork_from_a_message_outside_the_session_not_found(store):
    a, b = new_session(store), new_session(store)
    message = user_turn(store, a)
    with pytest.raises(NotFound):
        store.fork(b.id, message.id, SessionInfo())


def test_fork_of_a_deleted_session_rejected(store):
    parent = new_session(store)
    message = user_turn(store, parent)
    store.delete_session(parent.id)
    with pytest.raises(SessionDeleted):
        store.fork(parent.id, message.id, SessionInfo())


def test_fork_under_a_taken_name_conflicts_and_creates_nothing(store):
    parent = new_session(store, "taken")
    message = user_turn(store, parent)
    with pytest.raises(DuplicateId):
        store.fork(parent.id, message.id, SessionInfo(name="taken"))
    assert len(store.list_sessions().items) == 1
    assert store.events(type="fork").items == []


def test_delete_removes_bodies_keeps_a_tombstone_and_the_events(store):
    session = new_session(store)
    messages = _conversation(store, session, 2)
    store.put_event(Event(session_id=session.id, type="abort"))
    store.delete_session(session.id)
    for m in messages:
        with pytest.raises(NotFound):
            store.get_message(m.id)
        for p in m.parts:
            with pytest.raises(NotFound):
                store.get_part(p.id)
    with pytest.raises(SessionDeleted):
        store.get_session(session.id)
    assert [e.type for e in store.events(session.id).items] == ["abort"]
    with pytest.raises(SessionDeleted):
        store.delete_session(session.id)


def test_delete_keeps_the_bodies_a_fork_still_points_at(store):
    parent = new_session(store)
    messages = _conversation(store, parent, 2)
    fork = store.fork(parent.id, messages[1].id, SessionInfo())
    store.delete_session(parent.id)
    shared, unshared = messages[:2], messages[2:]
    assert [m.id for m in store.iter_timeline(fork.id)] == [m.id for m in shared]
    assert store.get_message(shared[0].id).parts == shared[0].parts
    for m in unshared:
        with pytest.raises(NotFound):
            store.get_message(m.id)
    # the fork goes on
    user_turn(store, fork)
    assert store.timeline_length(fork.id) == 3


def test_deleting_the_last_fork_removes_the_bodies_it_kept_alive(store):
    parent = new_session(store)
    messages = _conversation(store, parent, 1)
    fork = store.fork(parent.id, messages[-1].id, SessionInfo())
    second = store.fork(fork.id, messages[-1].id, SessionInfo())
    store.delete_session(parent.id)
    store.delete_session(fork.id)
    assert store.get_message(messages[0].id).id == messages[0].id  # `second` still needs it
    store.delete_session(second.id)
    for m in messages:
        with pytest.raises(NotFound):
            store.get_message(m.id)


def test_deleting_a_fork_leaves_the_parent_whole(store):
    parent = new_session(store)
    messages = _conversation(store, parent, 1)
    fork = store.fork(parent.id, messages[-1].id, SessionInfo())
    own = user_turn(store, fork)
    store.delete_session(fork.id)
    assert [m.id for m in store.iter_timeline(parent.id)] == [m.id for m in messages]
    with pytest.raises(NotFound):
        store.get_message(own.id)
