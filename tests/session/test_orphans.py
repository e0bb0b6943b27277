"""A tool call without a result is never sent to a model (DESIGN §3, crash recovery)."""

from __future__ import annotations

from forge_jupyter import llm
from forge_jupyter.message import ToolPart
from forge_jupyter.session.recovery import INTERRUPTED
from tests.session.support import assert_calls_answered, contents, say


def test_a_dead_runners_open_tool_calls_reach_the_model_closed_as_errors(make_forge, server, rows):
    server.add(say("picking up"))
    forge = make_forge()
    session = forge.session("s")
    w = rows(forge.store, session.id)
    asked = w.user("load the data")
    w.assistant(asked, "loading", status="running", tools=[
        ToolPart(session_id="-", message_id="-", call_id="call_running", tool="python",
                 state="running", input={"code": "load()"}),
        ToolPart(session_id="-", message_id="-", call_id="call_pending", tool="python")])

    session.prompt("go on")

    request = server.requests[0]
    assert_calls_answered(request)
    results = {m["tool_call_id"]: m["content"] for m in request.messages if m["role"] == "tool"}
    assert results == {"call_running": f"Error: {INTERRUPTED}", "call_pending": f"Error: {INTERRUPTED}"}
    assert contents(request)[-1] == ("user", "go on")


def test_the_model_view_drops_a_call_that_has_no_result(make_forge, rows):
    forge = make_forge()
    session = forge.session("s")
    w = rows(forge.store, session.id)
    asked = w.user("q")
    open_call = ToolPart(session_id="-", message_id="-", call_id="call_open", tool="python",
                         state="running")
    done_call = ToolPart(session_id="-", message_id="-", call_id="call_done", tool="python",
                         state="completed", output="42")
    w.assistant(asked, "", status="running", tools=[open_call, done_call])
    view = list(forge.store.iter_timeline(session.id))
    for model in ("openai/gpt-4o", "anthropic/claude-sonnet-4-5"):
        messages = llm.to_model_messages(view, model=model)
        assert [c["id"] for c in messages[1]["tool_calls"]] == ["call_done"]
        assert messages[2:] == [{"role": "tool", "tool_call_id": "call_done", "content": "42"}]
