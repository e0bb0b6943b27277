"""One runner per session (the lease), and crash recovery of what a dead runner left open."""

from __future__ import annotations

import time

import pytest

from forge_jupyter.errors import NotFound, SessionDeleted
from forge_jupyter.message import ReasoningPart
from forge_jupyter.session.recovery import recover
from tests.contract.contract_helpers import (
    finish,
    new_session,
    running_assistant,
    text,
    tool,
    user_turn,
)


def test_lease_is_exclusive_until_released(store):
    session = new_session(store)
    assert store.acquire_lease(session.id, "kernel-a", 60)
    assert not store.acquire_lease(session.id, "kernel-b", 60)
    owner, expires = store.lease(session.id)
    assert owner == "kernel-a" and expires > time.time() + 50
    store.release_lease(session.id, "kernel-b")  # not the holder: nothing happens
    assert store.lease(session.id)[0] == "kernel-a"
    store.release_lease(session.id, "kernel-a")
    assert store.lease(session.id) is None
    assert store.acquire_lease(session.id, "kernel-b", 60)


def test_lease_is_renewed_by_its_owner(store):
    session = new_session(store)
    assert store.acquire_lease(session.id, "kernel-a", 1)
    first = store.lease(session.id)[1]
    assert store.acquire_lease(session.id, "kernel-a", 60)
    assert store.lease(session.id)[1] > first


def test_an_expired_lease_can_be_taken(store):
    session = new_session(store)
    assert store.acquire_lease(session.id, "dead-kernel", 0.05)
    time.sleep(0.1)
    assert store.lease(session.id) is None
    assert store.acquire_lease(session.id, "kernel-b", 60)
    assert store.lease(session.id)[0] == "kernel-b"


def test_lease_of_a_deleted_or_missing_session_rejected(store):
    session = new_session(store)
    store.acquire_lease(session.id, "k", 60)
    store.delete_session(session.id)
    with pytest.raises(SessionDeleted):
        store.acquire_lease(session.id, "k", 60)
    store.release_lease(session.id, "k")  # letting go of a deleted session's lease is fine
    with pytest.raises(NotFound):
        store.acquire_lease("ses_missing", "k", 60)


def test_recover_closes_what_a_dead_runner_left_open(store):
    session = new_session(store)
    asked = user_turn(store, session)
    message = running_assistant(store, session, asked)
    said = text(message, "half a sentence  \n", done=False)
    thought = ReasoningPart(session_id=session.id, message_id=message.id, text="hmm ")
    call = tool(message, "running")
    pending = tool(message, "pending").model_copy(update={"call_id": "call_2"})
    done_call = tool(message, "completed").model_copy(update={"call_id": "call_3", "output": "ok"})
    for p in (said, thought, call, pending, done_call):
        store.put_part(p)

    closed = recover(store, session.id)

    assert [m.id for m in closed] == [message.id]
    stored = store.get_message(message.id)
    assert stored.status == "interrupted" and stored.completed_at is not None
    by_id = {p.id: p for p in stored.parts}
    assert by_id[said.id].text == "half a sentence" and by_id[said.id].time_end is not None
    assert by_id[thought.id].text == "hmm" and by_id[thought.id].time_end is not None
    for c in (call, pending):
        assert by_id[c.id].state == "error" and by_id[c.id].error.startswith("interrupted")
    assert by_id[done_call.id] == done_call
    assert store.unfinished_messages(session.id) == []
    event = store.events(session.id, type="recovery").items[0]
    assert event.data["closed"][0]["message_id"] == message.id
    # the session goes on
    user_turn(store, session)
    assert store.timeline_length(session.id) == 3


def test_recover_with_nothing_open_changes_nothing(store):
    session = new_session(store)
    finish(store, running_assistant(store, session, user_turn(store, session)))
    assert recover(store, session.id) == []
    assert store.events(session.id).items == []


def test_a_live_lease_is_taken_over_only_from_the_owner_named_dead(store):
    session = new_session(store)
    assert store.acquire_lease(session.id, "dead-runner", 60)
    # naming another owner, or none, steals nothing (a compare-and-swap on the owner)
    assert not store.acquire_lease(session.id, "kernel-b", 60, replacing="someone-else")
    assert not store.acquire_lease(session.id, "kernel-b", 60, replacing=None)
    assert not store.acquire_lease(session.id, "kernel-b", 60, replacing="DEAD-RUNNER")
    assert store.lease(session.id)[0] == "dead-runner"
    assert store.acquire_lease(session.id, "kernel-b", 60, replacing="dead-runner")
    assert store.lease(session.id)[0] == "kernel-b"
    # the judgement is stale once someone else holds it: the dead owner's name opens nothing
    assert not store.acquire_lease(session.id, "kernel-c", 60, replacing="dead-runner")
    assert store.lease(session.id)[0] == "kernel-b"
