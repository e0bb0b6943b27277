"""Writes fenced by the runner lease (``Store.write(ops, lease_owners=…)``): a runner that lost
its session to another writes nothing — checked in the write's own transaction, so a takeover
and a batch in flight can never both win."""

from __future__ import annotations

import threading
import time

import pytest

from forge_jupyter.errors import LeaseLost, NotFound
from forge_jupyter.message import Event, Message, TextPart, now
from forge_jupyter.session.recovery import recover
from forge_jupyter.store.ops import AppendMessage, PutEvent, PutMessage, PutPart
from tests.contract.contract_helpers import new_session, running_assistant, text, user_turn


def _turn_ops(session_id: str, words: str, more: int = 0) -> list:
    """A finished user message with one text part (and ``more`` after it), appended."""
    asked = Message(session_id=session_id, role="user", status="completed", completed_at=now())
    said = [TextPart(session_id=session_id, message_id=asked.id, text=w, time_end=now())
            for w in (words, *("more",) * more)]
    return [PutMessage(asked), *map(PutPart, said), AppendMessage(session_id, asked.id)]


def _texts(store, session_id: str) -> list[str]:
    return [m.parts[0].text for m in store.read_timeline(session_id)]


def test_a_fenced_batch_goes_in_while_its_owner_holds_the_lease(store):
    session = new_session(store)
    assert store.acquire_lease(session.id, "kernel-a", 60)
    store.write(_turn_ops(session.id, "mine"), lease_owners={session.id: "kernel-a"})
    assert _texts(store, session.id) == ["mine"]
    # a write without a fence (an import, a recovery) is not checked against the lease
    store.write(_turn_ops(session.id, "imported"))
    assert _texts(store, session.id) == ["mine", "imported"]


def test_a_runner_that_lost_its_lease_writes_nothing(store, database):
    session = new_session(store)
    asked = user_turn(store, session)
    assert store.acquire_lease(session.id, "kernel-a", 60)
    answer = running_assistant(store, session, asked)
    fence_a = {session.id: "kernel-a"}
    store.write([PutPart(text(answer, "first half", done=False))], lease_owners=fence_a)

    other_host = database("default")  # another kernel, judging kernel-a dead, takes over
    assert other_host.acquire_lease(session.id, "kernel-b", 60, replacing="kernel-a")
    late = [PutPart(text(answer, "second half")),
            PutMessage(answer.model_copy(update={"status": "completed", "completed_at": now()})),
            PutEvent(Event(session_id=session.id, type="note", data={"by": "kernel-a"})),
            *_turn_ops(session.id, "a stale runner's next turn")]
    with pytest.raises(LeaseLost, match="held by kernel-b, not by kernel-a") as lost:
        store.write(late, lease_owners=fence_a)
    assert lost.value.session_ids == (session.id,)

    # nothing of the batch landed: the message runs on with its first part only
    stored = other_host.get_message(answer.id)
    assert stored.status == "running" and [p.text for p in stored.parts] == ["first half"]
    assert other_host.timeline_length(session.id) == 2
    assert other_host.events(session.id, type="note").items == []
    # the new owner closes what was left open and writes on; the stale runner's further
    # tries leave its rows untouched
    assert [m.id for m in recover(other_host, session.id)] == [answer.id]
    other_host.write(_turn_ops(session.id, "the new owner's turn"),
                     lease_owners={session.id: "kernel-b"})
    before = other_host.read_timeline(session.id)
    for ops in (late, _turn_ops(session.id, "again")):
        with pytest.raises(LeaseLost):
            store.write(ops, lease_owners=fence_a)
    assert other_host.read_timeline(session.id) == before
    assert other_host.lease(session.id)[0] == "kernel-b"


def test_a_lease_given_back_fences_its_old_owner(store):
    session = new_session(store)
    assert store.acquire_lease(session.id, "kernel-a", 60)
    store.release_lease(session.id, "kernel-a")
    with pytest.raises(LeaseLost, match="no longer held by kernel-a"):
        store.write(_turn_ops(session.id, "late"), lease_owners={session.id: "kernel-a"})
    assert store.timeline_length(session.id) == 0


def test_an_expired_lease_nobody_took_still_admits_its_owner(store):
    """A late heartbeat is not a loss: only a takeover (or a release) changes the owner."""
    session = new_session(store)
    assert store.acquire_lease(session.id, "kernel-a", 0.05)
    time.sleep(0.1)
    assert store.lease(session.id) is None  # expired
    store.write(_turn_ops(session.id, "still mine"), lease_owners={session.id: "kernel-a"})
    assert store.acquire_lease(session.id, "kernel-b", 60)  # an expired lease may be taken
    with pytest.raises(LeaseLost):
        store.write(_turn_ops(session.id, "not any more"), lease_owners={session.id: "kernel-a"})
    assert _texts(store, session.id) == ["still mine"]


def test_a_batch_over_two_sessions_is_fenced_all_or_nothing(store):
    kept, lost = new_session(store), new_session(store)
    for s in (kept, lost):
        assert store.acquire_lease(s.id, "kernel-a", 60)
    assert store.acquire_lease(lost.id, "kernel-b", 60, replacing="kernel-a")
    with pytest.raises(LeaseLost) as error:
        store.write(_turn_ops(kept.id, "one") + _turn_ops(lost.id, "two"),
                    lease_owners={kept.id: "kernel-a", lost.id: "kernel-a"})
    assert error.value.session_ids == (lost.id,)
    assert store.timeline_length(kept.id) == store.timeline_length(lost.id) == 0


def test_a_fence_cannot_probe_another_tenants_session(store, other_tenant):
    theirs = new_session(other_tenant)
    assert other_tenant.acquire_lease(theirs.id, "their-kernel", 60)
    mine = new_session(store)
    for owner in ("their-kernel", "kernel-a"):  # the right owner's name opens nothing either
        with pytest.raises(NotFound) as error:
            store.write(_turn_ops(mine.id, "x"), lease_owners={theirs.id: owner})
        assert not isinstance(error.value, LeaseLost) and "their-kernel" not in str(error.value)
    assert store.timeline_length(mine.id) == 0
    assert other_tenant.lease(theirs.id)[0] == "their-kernel"


def test_no_fenced_batch_lands_after_a_takeover(store, database):
    """A runner writing batch after batch while another host takes the session over: every
    batch that lands was committed before the takeover, so the new owner, reading right after
    it took the lease, already sees everything the old runner will ever have written."""
    session = new_session(store)
    assert store.acquire_lease(session.id, "kernel-a", 60)
    other_host = database("default")
    written: list[str] = []
    refused: list[LeaseLost] = []
    started = threading.Event()

    def stale_runner() -> None:
        for i in range(2000):
            try:
                # long batches: a wide window between reading the lease and committing
                store.write(_turn_ops(session.id, f"a{i}", more=60),
                            lease_owners={session.id: "kernel-a"})
            except LeaseLost as error:
                refused.append(error)
                return
            written.append(f"a{i}")
            started.set()

    runner = threading.Thread(target=stale_runner)
    runner.start()
    try:
        assert started.wait(30)
        assert other_host.acquire_lease(session.id, "kernel-b", 60, replacing="kernel-a")
        seen_at_takeover = _texts(other_host, session.id)
    finally:
        runner.join(60)
    assert refused, "the stale runner was never fenced"
    assert seen_at_takeover == written == _texts(other_host, session.id)
