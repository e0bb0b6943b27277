"""One runner per session, sync and async entry points, and recovery at the start of a run."""

from __future__ import annotations

import asyncio
import threading

import pytest

from forge_jupyter.errors import SessionBusy
from forge_jupyter.message import Message, TextPart, ToolPart
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.testing import Turn, text


def test_prompt_works_inside_a_running_event_loop(make_forge, server):
    server.add(Turn.text("from inside a loop"))
    forge = make_forge()

    async def cell():  # what a notebook cell is: code running on a live loop
        return forge.session("s").prompt("q")

    assert asyncio.run(cell()).text == "from inside a loop"


def test_prompt_async_is_the_native_form(make_forge, server):
    server.add(Turn.text("awaited"))
    forge = make_forge()
    assert asyncio.run(forge.session("s").prompt_async("q")).text == "awaited"


def test_a_second_prompt_on_a_busy_session_is_refused_clearly(make_forge, server):
    server.add(Turn([text("slow " * 50, chunk=5)], chunk_delay=0.02), Turn.text("second"))
    forge = make_forge()
    session = forge.session("s")
    started = threading.Event()
    forge.bus.subscribe(lambda e: started.set())
    first = threading.Thread(target=session.prompt, args=("one",))
    first.start()
    started.wait(10)
    with pytest.raises(SessionBusy, match="already answering a prompt"):
        session.prompt("two")
    first.join(30)
    assert [m.role for m in session.messages()] == ["user", "assistant"]
    assert session.prompt("three").text == "second"  # free again once the first run ended


def test_a_live_lease_held_by_another_process_refuses_the_prompt(make_forge, server):
    forge = make_forge()
    session = forge.session("s")
    assert forge.store.acquire_lease(session.id, "otherhost:4242:abcd", ttl=30)
    with pytest.raises(SessionBusy, match="otherhost:4242"):
        session.prompt("q")
    assert server.requests == []


def test_unfinished_messages_of_a_dead_runner_are_recovered_before_the_next_prompt(make_forge, server):
    server.add(Turn.text("fresh answer"))
    forge = make_forge()
    session = forge.session("s")
    sid = session.id
    user = Message(session_id=sid, role="user", status="completed")
    dead = Message(session_id=sid, role="assistant", parent_id=user.id)
    text_part = TextPart(session_id=sid, message_id=dead.id, text="half an answ", time_start=1.0)
    call = ToolPart(session_id=sid, message_id=dead.id, call_id="c1", tool="python", state="running")
    forge.store.write([PutMessage(user), AppendMessage(sid, user.id), PutMessage(dead),
                       AppendMessage(sid, dead.id), PutPart(text_part), PutPart(call)])

    answer = session.prompt("again")

    assert answer.text == "fresh answer"
    recovered = forge.store.get_message(dead.id)
    assert recovered.status == "interrupted"
    by_type = {p.type: p for p in recovered.parts}
    assert by_type["text"].text == "half an answ" and by_type["text"].time_end is not None
    assert by_type["tool"].state == "error" and "interrupted" in by_type["tool"].error
    assert "recovery" in [e.type for e in forge.store.events(sid).items]
    # the orphaned call reached the model only as a closed error, never unanswered
    sent = server.requests[0].messages
    tool_ids = {m["tool_call_id"] for m in sent if m.get("role") == "tool"}
    assert tool_ids == {"c1"}
