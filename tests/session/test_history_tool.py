"""Read-back: superseded messages stay addressable and the history tool pages through them."""

from __future__ import annotations

from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.history import history_tool
from tests.session.support import say, words


def results(request) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "tool"]


def test_the_history_tool_pages_through_superseded_messages(make_forge, server):
    for i in range(5):
        server.add(say(words(f"a{i}", 5)))
    server.add(say("## Goal\nsummary"))
    forge = make_forge(tools=[history_tool()])
    session = forge.session("s")
    for i in range(5):
        session.prompt(words(f"q{i}", 5))
    session.compact()  # keeps q3, a3, q4, a4 verbatim: positions 0–5 are superseded
    first, tail_message = session.messages()[0], session.messages()[6]
    assert tail_message.text == words("q3", 5)

    server.add(
        Turn([tool_call("history", {"limit": 4})]),
        Turn([tool_call("history", {"offset": 4, "limit": 4}),
              tool_call("history", {"message_id": first.id}),
              tool_call("history", {"message_id": tail_message.id}),
              tool_call("history", {"message_id": "msg_nope"})]),
        say("You first asked about q0."),
    )
    answer = session.prompt("what did I ask first?")
    assert answer.text == "You first asked about q0."

    [page1] = results(server.requests[-2])[-1:]
    lines = page1.splitlines()
    assert [ln.split(" ")[:2] for ln in lines[:4]] == [["#0", "user"], ["#1", "assistant"],
                                                       ["#2", "user"], ["#3", "assistant"]]
    assert words("q0", 5) in lines[0] and words("a1", 5) in lines[3]
    assert "superseded messages 0–3 of 6; next: offset=4" in lines[4]

    page2, full, in_view, missing = results(server.requests[-1])[-4:]
    assert page2.splitlines()[0].startswith("#4 user") and words("q2", 5) in page2
    assert "superseded messages 4–5 of 6)" in page2
    assert full.startswith(f"user message {first.id} (completed)") and words("q0", 5) in full
    assert in_view == f"Message {tail_message.id} is still in your view (position 6)."
    assert "Error" in missing and "No message 'msg_nope' in this session." in missing


def test_history_before_any_compaction_says_everything_is_in_view(make_forge, server):
    server.add(Turn([tool_call("history", {})]), say("ok"))
    forge = make_forge(tools=[history_tool()])
    forge.session("s").prompt("anything older?")
    assert results(server.requests[-1]) == [
        "Nothing was compacted yet: every message of this session is in your view."]
