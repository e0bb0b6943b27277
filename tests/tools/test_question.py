"""The question tool through the real loop: the fake model server over HTTP, real litellm,
a real store. What the model is offered, asks, and reads back; what the store keeps."""

from __future__ import annotations

import threading
import time

import pytest

from forge_jupyter.bus import QuestionAnswered, QuestionAsked
from forge_jupyter.errors import ApprovalPending, NotFound
from forge_jupyter.testing import Turn, tool_call


def _tool_result(request) -> str:
    return [m for m in request.messages if m.get("role") == "tool"][-1]["content"]


def _events(forge, sid):
    forge.flush()
    return [(e.type, e.actor, e.data) for e in forge.store.events(sid).items
            if e.type.startswith("question")]


@pytest.fixture
def qforge(make_forge):
    def make(**kw):
        kw.setdefault("builtin_tools", True)
        kw.setdefault("flags", ["question"])
        return make_forge(db="duckdb", **kw)
    return make


def test_the_tool_is_offered_only_under_the_flag(qforge, server):
    server.add(Turn.text("a"), Turn.text("b"))
    qforge(flags=[]).session("s").prompt("hi")
    qforge().session("t").prompt("hi")
    assert "question" not in server.requests[0].tools
    assert "python" in server.requests[0].tools  # the builtins are there: only the flag is off
    assert "question" in server.requests[1].tools
    table = {t["function"]["name"]: t for t in server.requests[1].body["tools"]}
    assert table["question"]["function"]["parameters"]["required"] == ["question"]


def test_lean_profile_keeps_the_question_tool_under_its_flag(qforge, server):
    server.add(Turn.text("a"))
    qforge(tool_profile="lean").session("s").prompt("hi")
    assert sorted(server.requests[0].tools) == ["edit", "python", "question", "read", "sql",
                                                "variables"]


def test_answered_through_session_answer(qforge, server):
    server.add(Turn([tool_call("question", {"question": "Which year?", "options": ["2023", "2024"]})]),
               Turn.text("Using 2024."))
    forge = qforge()
    forge.on_question(lambda request: None)  # someone will answer later
    s = forge.session("s")
    asked: list[QuestionAsked] = []

    def later(ev: QuestionAsked) -> None:
        asked.append(ev)
        threading.Thread(target=s.answer, args=(ev.request_id, "  2024 "), kwargs={"by": "alice"}).start()

    forge.bus.subscribe(later, types=QuestionAsked)
    answer = s.prompt("analyse")
    assert answer.text == "Using 2024."
    assert asked[0].question == "Which year?" and asked[0].options == ("2023", "2024")
    assert _tool_result(server.requests[1]) == "The user answered: 2024"
    part = s.messages()[1].tool_parts[0]  # an ordinary tool part: question in, answer out
    assert part.state == "completed" and part.input["question"] == "Which year?"
    assert part.output == "The user answered: 2024"
    assert part.metadata["question"]["answer"] == "2024"
    assert part.metadata["question"]["by"] == "alice"
    events = _events(forge, s.id)
    assert [(t, a) for t, a, _ in events] == [("question.asked", "agent"), ("question.answered", "alice")]
    assert events[0][2]["options"] == ["2023", "2024"] and events[1][2]["answer"] == "2024"
    assert s.pending_questions == []
    frame = forge.tool_calls(s.id, tool="question")  # the frames show it like any call
    assert len(frame) == 1 and frame.iloc[0]["state"] == "completed"
    assert "Which year?" in str(frame.iloc[0]["input"])


def test_answered_by_an_on_question_handler(qforge, server):
    server.add(Turn([tool_call("question", {"question": "Overwrite out.csv?"})]), Turn.text("ok"))
    forge = qforge()
    seen = []
    forge.on_question(lambda r: (seen.append(r.question), "yes, overwrite it")[1])
    assert forge.session("s").prompt("save").text == "ok"
    assert seen == ["Overwrite out.csv?"]
    assert _tool_result(server.requests[1]) == "The user answered: yes, overwrite it"


def test_an_approval_handler_never_answers_a_question(qforge, server):
    server.add(Turn([tool_call("question", {"question": "Which file?"})]), Turn.text("ok"))
    forge = qforge()
    forge.on_approval(lambda r: "once")  # answers every approval; knows nothing of questions
    forge.session("s").prompt("go")
    assert "did not answer: no one can answer questions here" in _tool_result(server.requests[1])


def test_unanswered_in_a_script_returns_at_once(qforge, server):
    server.add(Turn([tool_call("question", {"question": "Which year?"})]), Turn.text("assumed 2024"))
    forge = qforge()
    start = time.monotonic()
    answer = forge.session("s").prompt("analyse")
    assert time.monotonic() - start < 10  # nothing waits for a person (the WAIT is a day)
    assert answer.text == "assumed 2024"
    result = _tool_result(server.requests[1])
    assert result.startswith("The user did not answer: no one can answer questions here")
    assert "reasonable assumption" in result
    events = _events(forge, answer.session_id)
    assert [(t, a) for t, a, _ in events] == [("question.asked", "agent"), ("question.answered", "forge")]
    assert events[1][2]["answer"] is None


def test_a_prompt_is_refused_while_a_question_is_pending(qforge, server):
    server.add(Turn([tool_call("question", {"question": "Which year?"})]), Turn.text("done"))
    forge = qforge()
    forge.on_question(lambda r: None)
    s = forge.session("s")
    seen = threading.Event()
    forge.bus.subscribe(lambda e: seen.set(), types=QuestionAsked)
    worker = threading.Thread(target=s.prompt, args=("analyse",))
    worker.start()
    assert seen.wait(20)
    with pytest.raises(ApprovalPending, match="question waiting for your answer") as err:
        s.prompt("something else")
    assert "session.answer(" in str(err.value)
    (q,) = s.pending_questions
    with pytest.raises(ValueError, match="empty"):
        s.answer(q.id, "   ")
    with pytest.raises(ValueError, match="keep it under"):
        s.answer(q.id, "x" * 20_000)
    with pytest.raises(NotFound):
        forge.session("other").answer(q.id, "2024")  # another session's question
    s.answer(q.id, "2024")
    worker.join(30)
    assert not worker.is_alive()
    with pytest.raises(NotFound):
        s.answer(q.id, "again")  # answered once; the second is told so
    assert len(server.requests) == 2


def test_abort_while_a_question_is_pending_ends_it(qforge, server):
    server.add(Turn([tool_call("question", {"question": "Which year?"})]))
    forge = qforge()
    forge.on_question(lambda r: None)
    s = forge.session("s")
    ended: list[QuestionAnswered] = []
    forge.bus.subscribe(ended.append, types=QuestionAnswered)
    forge.bus.subscribe(lambda e: threading.Thread(target=s.abort).start(), types=QuestionAsked)
    start = time.monotonic()
    answer = s.prompt("analyse")
    assert time.monotonic() - start < 20
    assert answer.status == "aborted"
    assert s.pending_questions == [] and forge.questions.pending() == []
    assert len(ended) == 1 and ended[0].text is None and "stopped" in ended[0].reason
    part = s.messages()[1].tool_parts[0]
    assert part.state == "error"
    assert len(server.requests) == 1  # the model was not asked again
    types = [t for t, _, _ in _events(forge, s.id)]
    assert types == ["question.asked", "question.answered"]
    server.add(Turn.text("next"))  # the session takes prompts again
    assert s.prompt("again").text == "next"


@pytest.mark.parametrize("args, says", [
    ({"question": ""}, "question is empty"),
    ({"question": "  \n\t "}, "question is empty"),
    ({"question": "q" * 50_000}, "keep it under 2,000"),
    ({"question": "Which?", "options": [f"o{i}" for i in range(500)]}, "500 options is too many"),
    ({"question": "Which?", "options": ["a", 5]}, "options/1: 5 is not of type 'string'"),
    ({"question": "Which?", "options": ["a", {"b": 1}]}, "is not of type 'string'"),
    ({"question": "Which?", "options": ["a", "  "]}, "options[1] is empty"),
    ({"question": "Which?", "options": ["a", "b" * 5000]}, "options[1] is 5,000 characters"),
    ({"question": "Which?", "options": ["a", "A", "a "]}, "options[2] repeats 'a'"),
    ({"question": "Which?", "options": "a" * 100_000}, "is not of type 'array'"),
    ({"question": ["not", "text"]}, "is not of type 'string'"),
    ({"options": ["a"]}, "'question' is a required property"),
    ({"question": "Which?", "extra": 1}, "Additional properties are not allowed"),
])
def test_hostile_arguments_get_clear_short_errors(qforge, server, args, says):
    server.add(Turn([tool_call("question", args)]), Turn.text("ok"))
    forge = qforge()
    asked = []
    forge.on_question(lambda r: asked.append(r) or "never")
    forge.session("s").prompt("go")
    result = _tool_result(server.requests[1])
    assert says in result
    assert len(result) < 1_000  # a huge argument never comes back whole
    assert asked == []  # nobody was asked a broken question


def test_a_secret_in_the_question_or_the_answer_is_scrubbed(qforge, server, monkeypatch):
    secret = "sk-live-9f8e7d6c5b4a39281706"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server.add(Turn([tool_call("question", {"question": f"Is {secret} your key?"})]), Turn.text("ok"))
    forge = qforge()
    shown = []
    forge.on_question(lambda r: (shown.append(r.question), f"yes it is {secret}")[1])
    s = forge.session("s")
    s.prompt("go")
    assert secret not in shown[0]
    assert secret not in _tool_result(server.requests[1])
    part = s.messages()[1].tool_parts[0]
    assert secret not in str(part.output) and secret not in str(part.metadata)
    assert secret not in str(_events(forge, s.id))


def test_a_subagent_is_never_offered_the_question_tool(qforge, server):
    server.add(Turn([tool_call("task", {"description": "look", "prompt": "Look around."})]),
               Turn.text("child: looked"), Turn.text("parent: done"))
    forge = qforge()
    forge.on_question(lambda r: None)  # a live view follows the parent session only
    assert forge.session("s").prompt("delegate").text == "parent: done"
    assert "question" in server.requests[0].tools
    assert "question" not in server.requests[1].tools  # the child's table
    assert "read" in server.requests[1].tools
