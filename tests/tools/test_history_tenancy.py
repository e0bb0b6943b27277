"""The ``history`` tool reads back this session's own messages, never another tenant's or
another session's, whatever ids the model sends (issue 10, item 2)."""

from __future__ import annotations

from forge_jupyter.testing import Turn, tool_call

A_PROMPT, A_ANSWER = "tenant A prompt 1357", "tenant A answer 2468"


def test_history_refuses_ids_of_another_tenant_and_another_session(make_forge, server,
                                                                   tmp_path):
    path = str(tmp_path / "shared.duckdb")
    a = make_forge(db=path, tenant="A", builtin_tools=True)
    b = make_forge(db=path, tenant="B", builtin_tools=True)
    server.add(Turn.text(A_ANSWER))
    a.session("theirs").prompt(A_PROMPT)
    server.add(Turn.text("B's first session"))
    b.session("mine-before").prompt("an earlier session of B")
    their_messages = a.session("theirs").messages()
    their_ids = [m.id for m in their_messages] + [p.id for m in their_messages for p in m.parts]
    own_other = b.session("mine-before").messages()[1]
    asks = [{"message_id": mid} for mid in (their_messages[0].id, their_messages[1].id)]
    asks += [{"part_id": p.id} for p in their_messages[1].parts]
    asks += [{"message_id": own_other.id}, {"part_id": own_other.parts[0].id},
             {"message_id": "' OR 1=1 --"}, {"part_id": "%"}, {"offset": 0, "limit": 100}]
    server.add(Turn([tool_call("history", args) for args in asks]), Turn.text("read"))
    b.session("mine").prompt("read back what you can")
    calls = b.session("mine").messages()[1].tool_parts
    assert len(calls) == len(asks)
    for call in calls:
        shown = (call.output or "") + (call.error or "")
        assert A_PROMPT not in shown and A_ANSWER not in shown, call.input
        assert "B's first session" not in shown and "an earlier session" not in shown
    for call in calls[:-1]:
        assert call.state == "error", call.input
        assert call.error.startswith(("No message", "No part")), call.error
    assert calls[-1].state == "completed" and "Nothing was compacted" in calls[-1].output
    # and the ids themselves stay A's: nothing of B's store names them
    assert not set(their_ids) & set(b.sql("SELECT id FROM message UNION ALL "
                                          "SELECT id FROM part").id)
