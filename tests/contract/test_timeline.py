"""The session_message timeline: ordered pointers, read page by page to the very end."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import DuplicateId, NotFound
from forge_jupyter.message import Message, TextPart, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from tests.contract.contract_helpers import finish, new_session, running_assistant, text, user_turn


def test_appends_build_the_timeline_in_order(store):
    session = new_session(store)
    first = user_turn(store, session, "one")
    second = finish(store, running_assistant(store, session, first))
    third = user_turn(store, session, "three")
    page = store.timeline(session.id)
    assert [m.id for m in page.items] == [first.id, second.id, third.id]
    assert page.next_cursor is None
    assert page.items[0].parts[0].text == "one"
    assert store.timeline_length(session.id) == 3
    assert [store.position(session.id, m.id) for m in (first, second, third)] == [0, 1, 2]


def test_a_message_of_another_session_cannot_be_appended(store):
    a, b = new_session(store), new_session(store)
    message = user_turn(store, a)
    with pytest.raises(DuplicateId):
        store.append_message(b.id, message.id)
    assert store.timeline_length(b.id) == 0


def test_position_of_a_message_outside_the_timeline_not_found(store):
    a, b = new_session(store), new_session(store)
    message = user_turn(store, a)
    with pytest.raises(NotFound):
        store.position(b.id, message.id)


def test_timeline_without_parts(store):
    session = new_session(store)
    user_turn(store, session)
    assert store.timeline(session.id, with_parts=False).items[0].parts == []


def test_pages_reach_the_end_of_a_1234_message_session(store):
    session = new_session(store)
    ops, ids = [], []
    for i in range(1234):
        m = Message(session_id=session.id, role="user" if i % 2 == 0 else "assistant",
                    status="completed", completed_at=now())
        ops += [PutMessage(m), PutPart(TextPart(session_id=session.id, message_id=m.id,
                                                text=f"#{i}", time_end=now())),
                AppendMessage(session.id, m.id)]
        ids.append(m.id)
    store.write(ops)

    seen, cursor, pages = [], None, 0
    while True:
        page = store.timeline(session.id, cursor=cursor, limit=100)
        seen += page.items
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == 13  # no "latest N" cap: the last page holds the last 34
    assert [m.id for m in seen] == ids
    assert [m.parts[0].text for m in seen] == [f"#{i}" for i in range(1234)]
    assert [m.id for m in store.iter_timeline(session.id, page_size=500)] == ids
    assert store.timeline_length(session.id) == 1234
    assert store.position(session.id, ids[1233]) == 1233


def test_read_timeline_is_the_whole_timeline_with_parts_at_once(store):
    session = new_session(store)
    asked = user_turn(store, session, "one")
    answer = finish(store, running_assistant(store, session, asked))
    again = user_turn(store, session, "three")
    whole = store.read_timeline(session.id)
    assert [m.id for m in whole] == [asked.id, answer.id, again.id]
    assert [m.text for m in whole] == ["one", "", "three"]
    assert whole == list(store.iter_timeline(session.id))
    assert store.read_timeline(new_session(store).id) == []


def test_unfinished_messages_are_listed_with_their_parts(store):
    session = new_session(store)
    user_turn(store, session)
    running = running_assistant(store, session)
    part = text(running, "half", done=False)
    store.put_part(part)
    unfinished = store.unfinished_messages(session.id)
    assert [m.id for m in unfinished] == [running.id]
    assert unfinished[0].parts == [part]
    finish(store, running)
    assert store.unfinished_messages(session.id) == []
