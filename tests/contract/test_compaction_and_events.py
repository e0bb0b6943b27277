"""Invariant 6 (compaction destroys no body) and the append-only event log."""

from __future__ import annotations

import pytest

from forge_jupyter.message import CompactionPart, Event, Message, TextPart, now
from forge_jupyter.store.ops import AppendMessage, PutEvent, PutMessage, PutPart
from tests.contract.contract_helpers import finish, new_session, running_assistant, user_turn


def test_compaction_is_just_more_messages_and_old_bodies_stay_readable(store):
    session = new_session(store)
    before = []
    for i in range(3):
        asked = user_turn(store, session, f"question {i}")
        before += [asked, finish(store, running_assistant(store, session, asked))]

    ask = Message(session_id=session.id, role="user", status="completed", completed_at=now())
    summary = Message(session_id=session.id, role="assistant", parent_id=ask.id, summary=True,
                      status="completed", completed_at=now())
    store.write([
        PutMessage(ask), PutPart(CompactionPart(session_id=session.id, message_id=ask.id)),
        AppendMessage(session.id, ask.id),
        PutMessage(summary),
        PutPart(TextPart(session_id=session.id, message_id=summary.id, text="the gist",
                         time_end=now())),
        AppendMessage(session.id, summary.id),
        PutEvent(Event(session_id=session.id, type="compaction",
                       data={"reason": "overflow", "tokens_before": 9000, "tokens_after": 300})),
    ])

    timeline = list(store.iter_timeline(session.id))
    assert [m.id for m in timeline] == [*(m.id for m in before), ask.id, summary.id]
    for m in before:  # superseded, and still whole
        assert store.get_message(m.id).parts == m.parts
    assert store.get_message(summary.id).summary is True
    assert store.events(session.id, type="compaction").items[0].data["tokens_after"] == 300


def test_events_filter_by_session_and_type_and_page_to_the_end(store):
    a, b = new_session(store), new_session(store)
    written = []
    for i in range(7):
        e = Event(session_id=(a if i % 2 else b).id, type="abort" if i % 3 else "permission.asked",
                  actor="user", data={"i": i})
        store.put_event(e)
        written.append(e)
    global_event = Event(type="config", data={"k": "v"})
    store.put_event(global_event)

    def all_pages(**filters):
        out, cursor = [], None
        while True:
            page = store.events(cursor=cursor, limit=2, **filters)
            out += page.items
            if page.next_cursor is None:
                return out
            cursor = page.next_cursor

    assert [e.id for e in all_pages()] == [e.id for e in [*written, global_event]]
    assert [e.id for e in all_pages(session_id=a.id)] == [e.id for e in written if e.session_id == a.id]
    assert [e.id for e in all_pages(session_id=a.id, type="abort")] == [
        e.id for e in written if e.session_id == a.id and e.type == "abort"]
    stored = all_pages(type="config")[0]
    assert (stored.session_id, stored.data, stored.actor) == (None, {"k": "v"}, "forge")
    assert stored.created_at == pytest.approx(global_event.created_at, abs=1e-6)
